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
  /**
   * Base of the rule pages of a public Vigil server (`…/docs/rules`); without it rules link their
   * section of the repository's docs/engine-rules.md.
   */
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
  const item = sastItems(meta.rulesUrl);
  return {
    ...sastHead(meta),
    vulnerabilities: items.map(({ id, vulnerability }) => item(id, vulnerability)),
  };
}

/** Everything of the report but its vulnerabilities. */
function sastHead(meta: SastReportMeta): Omit<SastReport, 'vulnerabilities'> {
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
  };
}

/** Turns findings into report items, building the identifiers of each rule once. */
function sastItems(rulesUrl: string | undefined): (id: string, v: EngineVulnerability) => SastVulnerability {
  const identifiersOf = new Map<string, SastIdentifier[]>();
  return (id, v) => {
    const key = `${v.ruleId}\u0000${v.swc ?? ''}\u0000${v.cwe ?? ''}`;
    let identifiers = identifiersOf.get(key);
    if (!identifiers) {
      identifiers = [
        { type: 'vigil_rule', name: v.ruleId, value: v.ruleId, url: ruleHelpUri(v.ruleId, rulesUrl) },
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
        // Impact and confidence, as the rule states them (`severity` above is GitLab's scale).
        original_severity: { type: 'text', name: 'Impact', value: v.severity },
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
  };
}

/** Indentation of an item of `vulnerabilities` in the report's text (two levels of two spaces). */
const ITEM_INDENT = '\n    ';

/**
 * The text of a SAST report (`JSON.stringify(toSastReport(…), null, 2)` and a final newline, byte
 * for byte) rendered file by file while a scan runs: {@link add} turns a file's findings into
 * their part of the text (with a new UUID each) as soon as the file is done, on a thread that
 * otherwise waits for the analysis, and {@link finish} puts the parts together. On the SolidiFI
 * half this leaves ~10 ms of the ~110 ms that serialising and encoding the 13 MB report took
 * after the last file (docs/performance.md).
 */
export class SastReportText {
  private readonly item: ReturnType<typeof sastItems>;
  private readonly files: Array<{ findings: readonly EngineVulnerability[]; text: Buffer } | undefined> = [];

  constructor(
    rulesUrl: string | undefined,
    private readonly newId: () => string,
  ) {
    this.item = sastItems(rulesUrl);
  }

  /** Renders the findings of the file at `fileIndex` (files in report order; each file once). */
  add(fileIndex: number, findings: readonly EngineVulnerability[]): void {
    if (findings.length === 0) return;
    // The items at the depth of the report's items, separated as there: the wrapper's 10 leading
    // and 6 trailing characters are `[\n  [\n    ` and `\n  ]\n]`.
    const items = findings.map((v) => this.item(this.newId(), v));
    this.files[fileIndex] = { findings, text: Buffer.from(JSON.stringify([items], null, 2).slice(10, -6)) };
  }

  /**
   * The report's bytes in pieces (for one `writev`), or `undefined` when `vulnerabilities` are not
   * exactly the findings added, in file order (then the caller renders the report whole).
   */
  finish(vulnerabilities: readonly EngineVulnerability[], meta: SastReportMeta): Buffer[] | undefined {
    const parts: Buffer[] = [];
    let next = 0;
    for (const file of this.files) {
      if (!file) continue;
      for (const v of file.findings) if (vulnerabilities[next++] !== v) return undefined;
      parts.push(file.text);
    }
    if (next !== vulnerabilities.length) return undefined;
    const head = JSON.stringify({ ...sastHead(meta), vulnerabilities: [] }, null, 2);
    if (parts.length === 0) return [Buffer.from(`${head}\n`)];
    // `head` ends with the empty array: `[]\n}`.
    const chunks: Buffer[] = [Buffer.from(`${head.slice(0, -4)}[${ITEM_INDENT}`)];
    const separator = Buffer.from(`,${ITEM_INDENT}`);
    for (const [i, part] of parts.entries()) chunks.push(...(i > 0 ? [separator, part] : [part]));
    chunks.push(Buffer.from('\n  ]\n}\n'));
    return chunks;
  }
}
