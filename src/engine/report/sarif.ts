/** SARIF 2.1.0 for code-scanning consumers (GitHub and others). */
import { allRuleMetas } from '../rules-catalogue.ts';
import type { EngineVulnerability, RuleMeta, ScanMessage, Severity } from '../types.ts';
import { DEFAULT_RULES_URL, ENGINE_NAME, ENGINE_VERSION, ruleHelpUri } from './common.ts';

const SECURITY_SEVERITY: Record<Severity, string> = {
  critical: '9.5',
  high: '8.0',
  medium: '5.5',
  low: '3.0',
  informational: '0.0',
  gas_optimization: '0.0',
};
const LEVEL: Record<Severity, 'error' | 'warning' | 'note' | 'none'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  informational: 'note',
  gas_optimization: 'note',
};
const PRECISION: Record<RuleMeta['confidence'], string> = { high: 'high', medium: 'medium', low: 'low' };

export interface SarifReportMeta {
  startTime?: Date;
  endTime?: Date;
  /** Base of the rule pages (`…/docs/rules`); default DEFAULT_RULES_URL. */
  rulesUrl?: string;
  /** The scan's messages (files not scanned, over their analysis budget …): the invocation's notifications. */
  messages?: ScanMessage[];
}

/** A SARIF notification (`invocations[].toolExecutionNotifications[]`). */
export interface SarifNotification {
  level: 'error' | 'warning' | 'note';
  message: { text: string };
}

const NOTIFICATION_LEVEL: Record<ScanMessage['level'], SarifNotification['level']> = {
  error: 'error',
  warning: 'warning',
  info: 'note',
};

// The SARIF object model is large; only what we emit is typed.
export interface SarifLog {
  version: '2.1.0';
  $schema: string;
  runs: Array<{
    tool: { driver: { name: string; version: string; informationUri: string; rules: SarifRule[] } };
    results: SarifResult[];
    invocations?: Array<{
      executionSuccessful: boolean;
      startTimeUtc?: string;
      endTimeUtc?: string;
      toolExecutionNotifications?: SarifNotification[];
    }>;
  }>;
}

export interface SarifRule {
  id: string;
  name: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  help: { text: string; markdown: string };
  helpUri: string;
  defaultConfiguration: { level: string };
  properties: {
    tags: string[];
    'security-severity': string;
    precision: string;
    problem?: { severity: string };
  };
}

export interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: Array<{
    physicalLocation: {
      artifactLocation: { uri: string };
      region: { startLine: number; endLine: number; snippet?: { text: string } };
    };
  }>;
  partialFingerprints: Record<string, string>;
  properties: Record<string, unknown>;
}

/** Builds one SARIF run; each result carries the finding id and the stable fingerprint. */
export function toSarifReport(
  items: Array<{ id: string; vulnerability: EngineVulnerability }>,
  meta: SarifReportMeta = {},
): SarifLog {
  const catalogue = new Map(allRuleMetas().map((m) => [m.id, m]));
  const rules: SarifRule[] = [];
  const index = new Map<string, number>();
  const ruleOf = (v: EngineVulnerability): number => {
    const known = index.get(v.ruleId);
    if (known !== undefined) return known;
    const m: RuleMeta = catalogue.get(v.ruleId) ?? {
      id: v.ruleId,
      title: v.title,
      description: v.description,
      remediation: v.remediation,
      severity: v.severity,
      confidence: v.confidence,
      category: v.category,
      scanType: 'audit',
      ...(v.swc ? { swc: v.swc } : {}),
      ...(v.cwe ? { cwe: v.cwe } : {}),
    };
    const tags = ['security', m.category];
    if (m.swc) tags.push(m.swc);
    if (m.cwe) tags.push(`external/cwe/${m.cwe.toLowerCase()}`);
    rules.push({
      id: m.id,
      name: m.title.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : '')),
      shortDescription: { text: m.title },
      fullDescription: { text: m.description },
      help: {
        text: `${m.description}\n\nRemediation: ${m.remediation}`,
        markdown: `${m.description}\n\n**Remediation:** ${m.remediation}`,
      },
      helpUri: ruleHelpUri(m.id, meta.rulesUrl),
      defaultConfiguration: { level: LEVEL[m.severity] },
      properties: {
        tags,
        'security-severity': SECURITY_SEVERITY[m.severity],
        precision: PRECISION[m.confidence],
      },
    });
    index.set(m.id, rules.length - 1);
    return rules.length - 1;
  };
  const results: SarifResult[] = items.map(({ id, vulnerability: v }) => ({
    ruleId: v.ruleId,
    ruleIndex: ruleOf(v),
    level: LEVEL[v.severity],
    message: { text: v.description },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: v.location.file },
          region: {
            startLine: v.location.startLine,
            endLine: v.location.endLine,
            ...(v.snippet ? { snippet: { text: v.snippet } } : {}),
          },
        },
      },
    ],
    partialFingerprints: { 'vigilFingerprint/v1': v.fingerprint },
    properties: {
      findingId: id,
      severity: v.severity,
      confidence: v.confidence,
      category: v.category,
      'security-severity': SECURITY_SEVERITY[v.severity],
      ...(v.contract ? { contract: v.contract } : {}),
      ...(v.function ? { function: v.function } : {}),
    },
  }));
  return {
    version: '2.1.0',
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    runs: [
      {
        tool: {
          driver: {
            name: ENGINE_NAME,
            version: ENGINE_VERSION,
            informationUri: meta.rulesUrl ?? DEFAULT_RULES_URL,
            rules,
          },
        },
        results,
        ...(meta.startTime || meta.endTime || meta.messages?.length
          ? {
              invocations: [
                {
                  executionSuccessful: true,
                  ...(meta.startTime ? { startTimeUtc: meta.startTime.toISOString() } : {}),
                  ...(meta.endTime ? { endTimeUtc: meta.endTime.toISOString() } : {}),
                  ...(meta.messages?.length
                    ? {
                        toolExecutionNotifications: meta.messages.map((m) => ({
                          level: NOTIFICATION_LEVEL[m.level],
                          message: { text: m.value },
                        })),
                      }
                    : {}),
                },
              ],
            }
          : {}),
      },
    ],
  };
}
