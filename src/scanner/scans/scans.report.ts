/**
 * The scan report from stored findings: GitLab SAST (schema 15.x) and SARIF 2.1.0. The ids are
 * the finding uuids (what the ticket endpoints take); the locations are those this scan saw.
 */

/** A stored finding of a scan, as the report needs it. */
export interface ReportFinding {
  id: string;
  fingerprint: string | null;
  ruleId: string | null;
  title: string;
  description: string;
  severity: 'critical' | 'high' | 'medium' | 'low' | 'informational' | 'gas_optimization';
  status: string;
  published: boolean;
  category: string | null;
  confidence: string | null;
  identifiers: Array<{ type: string; name: string; value: string; url?: string }>;
  details: Record<string, unknown>;
  location: { file: string; startLine: number; endLine: number };
}

/** What the report says about the scan itself. */
export interface ReportScan {
  id: string;
  type: string;
  startedAt: Date | null;
  completedAt: Date | null;
  messages: Array<{ level: string; value: string }>;
  engineVersion: string;
}

/** The GitLab SAST schema version we emit: the newest that GitLab 16.x and 17.x both ingest. */
export const SAST_SCHEMA_VERSION = '15.0.7';

const SAST_SEVERITY: Record<ReportFinding['severity'], string> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  informational: 'Info',
  gas_optimization: 'Info',
};

const SARIF_SECURITY_SEVERITY: Record<ReportFinding['severity'], string> = {
  critical: '9.5',
  high: '8.0',
  medium: '5.5',
  low: '3.0',
  informational: '0.0',
  gas_optimization: '0.0',
};

const SARIF_LEVEL: Record<ReportFinding['severity'], 'error' | 'warning' | 'note'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  informational: 'note',
  gas_optimization: 'note',
};

/** GitLab's time format: UTC, seconds, no zone suffix. */
function sastTime(date: Date | null): string {
  return (date ?? new Date()).toISOString().slice(0, 19);
}

function identifiersOf(f: ReportFinding) {
  const ids = [...f.identifiers];
  if (ids.length === 0) {
    const rule = f.ruleId ?? 'vigil.finding';
    ids.push({ type: 'vigil_rule', name: rule, value: rule });
  }
  return ids;
}

/** The SAST report of a completed scan. */
export function toSastReport(scan: ReportScan, findings: readonly ReportFinding[]) {
  const vendor = { name: 'Vigil' };
  const tool = { id: 'vigil', name: 'Vigil', version: scan.engineVersion, vendor };
  return {
    version: SAST_SCHEMA_VERSION,
    scan: {
      analyzer: tool,
      scanner: { id: 'vigil-solidity', name: 'Vigil Solidity scanner', version: scan.engineVersion, vendor },
      type: 'sast',
      start_time: sastTime(scan.startedAt),
      end_time: sastTime(scan.completedAt),
      status: 'success',
      messages: scan.messages.map((m) => ({ level: m.level, value: m.value })),
      vigil_scan_id: scan.id,
      vigil_scan_type: scan.type,
    },
    vulnerabilities: findings.map((f) => ({
      id: f.id,
      name: f.title,
      description: f.description,
      severity: SAST_SEVERITY[f.severity],
      location: { file: f.location.file, start_line: f.location.startLine, end_line: f.location.endLine },
      identifiers: identifiersOf(f),
      ...(typeof f.details.remediation === 'string' && f.details.remediation !== ''
        ? { solution: f.details.remediation.slice(0, 7000) }
        : {}),
      rule_id: f.ruleId,
      fingerprint: f.fingerprint,
      original_severity: f.severity,
      category: f.category,
      confidence: f.confidence,
      finding_status: f.status,
      published: f.published,
      details: f.details,
    })),
  };
}

/** The SARIF 2.1.0 log of a completed scan (one run; rules from the findings' rule ids). */
export function toSarifReport(scan: ReportScan, findings: readonly ReportFinding[]) {
  const ruleIndex = new Map<string, number>();
  const rules: Array<Record<string, unknown>> = [];
  for (const f of findings) {
    const id = f.ruleId ?? 'vigil.finding';
    if (ruleIndex.has(id)) continue;
    ruleIndex.set(id, rules.length);
    const remediation = typeof f.details.remediation === 'string' ? f.details.remediation : '';
    const ruleTitle = typeof f.details.ruleTitle === 'string' ? f.details.ruleTitle : f.title;
    rules.push({
      id,
      name: id,
      shortDescription: { text: ruleTitle },
      fullDescription: { text: ruleTitle },
      help: { text: remediation || ruleTitle, markdown: remediation || ruleTitle },
      defaultConfiguration: { level: SARIF_LEVEL[f.severity] },
      properties: {
        tags: ['security', ...(f.category ? [f.category] : [])],
        'security-severity': SARIF_SECURITY_SEVERITY[f.severity],
        precision: f.confidence === 'high' ? 'high' : f.confidence === 'low' ? 'low' : 'medium',
      },
    });
  }
  return {
    version: '2.1.0' as const,
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    runs: [
      {
        tool: {
          driver: {
            name: 'Vigil',
            version: scan.engineVersion,
            informationUri: 'https://vigil.invalid/docs',
            rules,
          },
        },
        results: findings.map((f) => {
          const id = f.ruleId ?? 'vigil.finding';
          return {
            ruleId: id,
            ruleIndex: ruleIndex.get(id) ?? 0,
            level: SARIF_LEVEL[f.severity],
            message: { text: f.description ? `${f.title}: ${f.description}` : f.title },
            locations: [
              {
                physicalLocation: {
                  artifactLocation: { uri: f.location.file },
                  region: { startLine: f.location.startLine, endLine: f.location.endLine },
                },
              },
            ],
            partialFingerprints: { 'vigilFingerprint/v1': f.fingerprint ?? f.id },
            properties: { findingId: f.id, severity: f.severity, status: f.status, published: f.published },
          };
        }),
        properties: { scanId: scan.id, scanType: scan.type },
      },
    ],
  };
}
