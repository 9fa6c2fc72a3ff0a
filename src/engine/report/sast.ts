/** The GitLab SAST report (schema line 15.x) for engine vulnerabilities. */
import type { EngineVulnerability, ScanMessage } from '../types.ts';
import { ENGINE_NAME, ENGINE_VERSION, REPORT_SEVERITY, ruleHelpUri } from './common.ts';

export const SAST_SCHEMA_VERSION = '15.0.7';

export type SastSeverity = 'Critical' | 'High' | 'Medium' | 'Low' | 'Info' | 'Unknown';

export interface SastReportMeta {
  startTime: Date;
  endTime: Date;
  status?: 'success' | 'failure';
  messages?: ScanMessage[];
  /** Base of the rule pages (`…/docs/rules`); default DEFAULT_RULES_URL. */
  rulesUrl?: string;
}

export interface SastIdentifier {
  type: string;
  name: string;
  value: string;
  url?: string;
}

export interface SastVulnerability {
  id: string;
  name: string;
  description: string;
  severity: SastSeverity;
  solution: string;
  location: { file: string; start_line: number; end_line: number; class?: string; method?: string };
  identifiers: SastIdentifier[];
  links?: Array<{ url: string; name?: string }>;
  details: Record<string, unknown>;
}

export interface SastReport {
  version: string;
  schema: string;
  scan: {
    analyzer: { id: string; name: string; version: string; vendor: { name: string } };
    scanner: { id: string; name: string; version: string; vendor: { name: string } };
    type: 'sast';
    start_time: string;
    end_time: string;
    status: 'success' | 'failure';
    messages?: ScanMessage[];
  };
  vulnerabilities: SastVulnerability[];
}

/** `YYYY-MM-DDTHH:MM:SS` in UTC, without milliseconds or zone (the schema's pattern). */
export function sastTime(d: Date): string {
  return d.toISOString().slice(0, 19);
}

/**
 * Builds the report; `id` of each item is the finding's UUID (the platform's, or one the CLI made).
 * Findings of one rule share their `identifiers` array (a report is serialised, not changed).
 */
export function toSastReport(
  items: Array<{ id: string; vulnerability: EngineVulnerability }>,
  meta: SastReportMeta,
): SastReport {
  const identifiersOf = new Map<string, SastIdentifier[]>();
  const tool = {
    id: ENGINE_NAME,
    name: 'Vigil scan engine',
    version: ENGINE_VERSION,
    vendor: { name: 'Vigil' },
  };
  return {
    version: SAST_SCHEMA_VERSION,
    schema: `https://gitlab.com/gitlab-org/security-products/security-report-schemas/-/raw/v${SAST_SCHEMA_VERSION}/dist/sast-report-format.json`,
    scan: {
      analyzer: tool,
      scanner: tool,
      type: 'sast',
      start_time: sastTime(meta.startTime),
      end_time: sastTime(meta.endTime),
      status: meta.status ?? 'success',
      ...(meta.messages?.length ? { messages: meta.messages } : {}),
    },
    vulnerabilities: items.map(({ id, vulnerability: v }) => {
      const key = `${v.ruleId}\u0000${v.swc ?? ''}\u0000${v.cwe ?? ''}`;
      let identifiers = identifiersOf.get(key);
      if (!identifiers) {
        identifiers = [
          { type: 'vigil_rule', name: v.ruleId, value: v.ruleId, url: ruleHelpUri(v.ruleId, meta.rulesUrl) },
        ];
        if (v.swc)
          identifiers.push({
            type: 'swc',
            name: v.swc,
            value: v.swc.replace(/^SWC-/, ''),
            url: `https://swcregistry.io/docs/${v.swc}`,
          });
        if (v.cwe) {
          const n = v.cwe.replace(/^CWE-/, '');
          identifiers.push({
            type: 'cwe',
            name: v.cwe,
            value: n,
            url: `https://cwe.mitre.org/data/definitions/${n}.html`,
          });
        }
        identifiersOf.set(key, identifiers);
      }
      return {
        id,
        name: v.title,
        description: v.description,
        severity: REPORT_SEVERITY[v.severity],
        solution: v.remediation.slice(0, 7000),
        location: {
          file: v.location.file,
          start_line: v.location.startLine,
          end_line: v.location.endLine,
          ...(v.contract ? { class: v.contract } : {}),
          ...(v.function ? { method: v.function } : {}),
        },
        identifiers,
        details: {
          rule_id: { type: 'text', name: 'Rule', value: v.ruleId },
          original_severity: { type: 'text', name: 'Severity', value: v.severity },
          confidence: { type: 'text', name: 'Confidence', value: v.confidence },
          category: { type: 'text', name: 'DASP category', value: v.category },
          fingerprint: { type: 'text', name: 'Fingerprint', value: v.fingerprint },
          ...(v.snippet
            ? {
                snippet: {
                  type: 'code',
                  name: 'Code',
                  value: v.snippet,
                  lang: v.location.file.endsWith('.sol') ? 'solidity' : 'text',
                },
              }
            : {}),
        },
      };
    }),
  };
}
