/**
 * The scan report from stored findings, through the engine's GitLab SAST (15.x) and SARIF 2.1.0
 * builders. Ids are finding uuids (what the ticket endpoints take); locations are those this scan
 * saw; each vulnerability also carries the finding's platform state (status, published).
 */
import { type EngineVulnerability, toSarifReport, toSastReport } from '../../engine/index.ts';
import type { ScanMessage } from '../../engine/types.ts';
import type { FindingDetails } from './scans.repo.ts';

/** A stored finding of a scan, as the report needs it. */
export interface ReportFinding {
  id: string;
  fingerprint: string | null;
  ruleId: string | null;
  title: string;
  description: string;
  severity: EngineVulnerability['severity'];
  status: string;
  published: boolean;
  category: string | null;
  confidence: string | null;
  details: FindingDetails;
  location: { file: string; startLine: number; endLine: number };
  /** The draft's triage (null: not a draft). */
  triageState?: string | null;
  /** Against the scan's baseline (null: compared with nothing, so new). */
  baselineState?: string | null;
}

/** What the report says about the scan itself. */
export interface ReportScan {
  startedAt: Date | null;
  completedAt: Date | null;
  messages: ScanMessage[];
  /** Base of the rule pages at this server's public address (`…/docs/rules`), when it has one. */
  rulesUrl?: string;
}

/** Rebuilds the engine's view of a stored finding. */
function toVulnerability(f: ReportFinding): EngineVulnerability {
  const { swc, cwe, snippet, contract, function: fn, remediation } = f.details;
  return {
    ruleId: f.ruleId ?? 'vigil.finding',
    title: f.title,
    description: f.description,
    remediation: remediation ?? '',
    severity: f.severity,
    confidence: (f.confidence ?? 'medium') as EngineVulnerability['confidence'],
    category: (f.category ?? 'other') as EngineVulnerability['category'],
    location: f.location,
    fingerprint: f.fingerprint ?? f.id,
    ...(swc ? { swc } : {}),
    ...(cwe ? { cwe } : {}),
    ...(snippet ? { snippet } : {}),
    ...(contract ? { contract } : {}),
    ...(fn ? { function: fn } : {}),
  };
}

/** The GitLab SAST report of a completed scan. */
export function buildSastReport(scan: ReportScan, findings: readonly ReportFinding[]) {
  const report = toSastReport(
    findings.map((f) => ({ id: f.id, vulnerability: toVulnerability(f) })),
    {
      startTime: scan.startedAt ?? new Date(),
      endTime: scan.completedAt ?? new Date(),
      status: 'success',
      messages: scan.messages,
      ...(scan.rulesUrl ? { rulesUrl: scan.rulesUrl } : {}),
    },
  );
  return {
    ...report,
    vulnerabilities: report.vulnerabilities.map((v, i) => ({
      ...v,
      finding_status: findings[i]?.status,
      published: findings[i]?.published,
      triage_state: findings[i]?.triageState ?? null,
      baseline_state: findings[i]?.baselineState ?? 'new',
    })),
  };
}

/** The SARIF 2.1.0 log of a completed scan. */
export function buildSarifReport(scan: ReportScan, findings: readonly ReportFinding[]) {
  const log = toSarifReport(
    findings.map((f) => ({ id: f.id, vulnerability: toVulnerability(f) })),
    {
      ...(scan.startedAt ? { startTime: scan.startedAt } : {}),
      ...(scan.completedAt ? { endTime: scan.completedAt } : {}),
      ...(scan.rulesUrl ? { rulesUrl: scan.rulesUrl } : {}),
      messages: scan.messages,
    },
  );
  for (const run of log.runs) {
    for (const [i, result] of run.results.entries()) {
      const baseline = findings[i]?.baselineState ?? 'new';
      // SARIF has no "reopened": it is new to this scan's baseline.
      (result as { baselineState?: string }).baselineState = baseline === 'unchanged' ? 'unchanged' : 'new';
      result.properties = {
        ...result.properties,
        status: findings[i]?.status,
        published: findings[i]?.published,
        triageState: findings[i]?.triageState ?? null,
        vigilBaselineState: baseline,
      };
    }
  }
  return log;
}
