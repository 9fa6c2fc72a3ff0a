/** SARIF 2.1.0 for code-scanning consumers (GitHub and others). */
import { allRuleMetas } from '../rules-catalogue.ts';
import type { EngineVulnerability, RuleMeta, ScanMessage, Severity } from '../types.ts';
import { ENGINE_NAME, ENGINE_VERSION, ruleHelpUri, rulesIndexUri } from './common.ts';

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
  /**
   * Base of the rule pages of a public Vigil server (`…/docs/rules`); without it rules link their
   * section of the repository's docs/engine-rules.md.
   */
  rulesUrl?: string;
  /** The scan's messages (files skipped, files not parsed, …): `toolExecutionNotifications`. */
  messages?: readonly ScanMessage[];
}

/** A SARIF notification: one scan message. */
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
  // The rules the results name, in the order they first appear.
  const rules: SarifRule[] = [];
  const index = new Map<string, number>();
  const ruleOf = (v: EngineVulnerability): number => {
    let i = index.get(v.ruleId);
    if (i === undefined) {
      i = rules.push(sarifRule(catalogue.get(v.ruleId) ?? ruleMetaOf(v), meta.rulesUrl)) - 1;
      index.set(v.ruleId, i);
    }
    return i;
  };
  const results = items.map(({ id, vulnerability: v }) => sarifResult(id, v, ruleOf(v)));
  const invocation = sarifInvocation(meta);
  return {
    version: '2.1.0',
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    runs: [
      {
        tool: {
          driver: {
            name: ENGINE_NAME,
            version: ENGINE_VERSION,
            informationUri: rulesIndexUri(meta.rulesUrl),
            rules,
          },
        },
        results,
        ...(invocation ? { invocations: [invocation] } : {}),
      },
    ],
  };
}

/** A rule the catalogue does not hold (the LLM review's), described by its finding. */
function ruleMetaOf(v: EngineVulnerability): RuleMeta {
  return {
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
}

/** A rule of `tool.driver.rules`, with its help, link, tags, default level and scores. */
function sarifRule(m: RuleMeta, rulesUrl: string | undefined): SarifRule {
  const tags = ['security', m.category];
  if (m.swc) tags.push(m.swc);
  if (m.cwe) tags.push(`external/cwe/${m.cwe.toLowerCase()}`);
  return {
    id: m.id,
    name: m.title.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : '')),
    shortDescription: { text: m.title },
    fullDescription: { text: m.description },
    help: {
      text: `${m.description}\n\nRemediation: ${m.remediation}`,
      markdown: `${m.description}\n\n**Remediation:** ${m.remediation}`,
    },
    helpUri: ruleHelpUri(m.id, rulesUrl),
    defaultConfiguration: { level: LEVEL[m.severity] },
    properties: {
      tags,
      'security-severity': SECURITY_SEVERITY[m.severity],
      precision: PRECISION[m.confidence],
    },
  };
}

/** One finding as a result of the rule at `ruleIndex`. */
function sarifResult(id: string, v: EngineVulnerability, ruleIndex: number): SarifResult {
  return {
    ruleId: v.ruleId,
    ruleIndex,
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
      // The finding's own impact and confidence: a match may differ from its rule's defaults.
      'security-severity': SECURITY_SEVERITY[v.severity],
      precision: PRECISION[v.confidence],
      ...(v.contract ? { contract: v.contract } : {}),
      ...(v.function ? { function: v.function } : {}),
    },
  };
}

/** The run's invocation (its times and the scan's messages as notifications), when there is any. */
function sarifInvocation(
  meta: SarifReportMeta,
): NonNullable<SarifLog['runs'][number]['invocations']>[number] | undefined {
  if (!meta.startTime && !meta.endTime && !meta.messages?.length) return undefined;
  return {
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
  };
}
