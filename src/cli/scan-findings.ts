/**
 * The findings `vigil scan` reads back from a scan's report, how the table shows them, and which
 * of them fail the run.
 */
import { REPORT_SEVERITY } from '../engine/report/common.ts';
import { formatTable } from './http-client.ts';

const SEVERITY_RANK: Record<string, number> = {
  Info: 0,
  Unknown: 0,
  Low: 1,
  Medium: 2,
  High: 3,
  Critical: 4,
};

export interface Vulnerability {
  id: string;
  name: string;
  severity: string;
  location: { file?: string; start_line?: number };
  /** The SAST report's details (the confidence is read from them). */
  details?: { confidence?: { value?: unknown } };
  /** The draft's triage (`dismissed` never fails a run). */
  triage_state?: string | null;
  /** Against the scan's baseline: new, unchanged or reopened. */
  baseline_state?: string | null;
}

/** Whether the finding is new to the scan's baseline (new or reopened). */
export const isNew = (v: Vulnerability) => (v.baseline_state ?? 'new') !== 'unchanged';

const CONFIDENCE_RANK: Record<string, number> = { low: 0, medium: 1, high: 2 };

/**
 * A finding's confidence rank; a finding without a known confidence counts as the highest, so
 * that `--fail-on-confidence` never lets through what it cannot judge.
 */
function confidenceRank(v: Vulnerability): number {
  const value = v.details?.confidence?.value;
  return (typeof value === 'string' ? CONFIDENCE_RANK[value.toLowerCase()] : undefined) ?? 2;
}

interface SarifRead {
  runs?: Array<{
    tool?: { driver?: { rules?: Array<{ shortDescription?: { text?: string } }> } };
    results?: Array<{
      ruleId?: string;
      ruleIndex?: number;
      locations?: Array<{
        physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number } };
      }>;
      properties?: {
        findingId?: string;
        severity?: string;
        confidence?: string;
        triageState?: string | null;
        vigilBaselineState?: string;
      };
    }>;
  }>;
}

/** The findings of a SARIF report as the exit code and the summary read them (SAST severities). */
export function vulnerabilitiesOfSarif(report: unknown): Vulnerability[] {
  const run = (report as SarifRead).runs?.[0];
  const rules = run?.tool?.driver?.rules ?? [];
  return (run?.results ?? []).map((r) => {
    const where = r.locations?.[0]?.physicalLocation;
    const file = where?.artifactLocation?.uri;
    const line = where?.region?.startLine;
    const severity = r.properties?.severity;
    return {
      id: r.properties?.findingId ?? '',
      name:
        (r.ruleIndex === undefined ? undefined : rules[r.ruleIndex]?.shortDescription?.text) ??
        r.ruleId ??
        '?',
      severity:
        severity !== undefined && severity in REPORT_SEVERITY
          ? REPORT_SEVERITY[severity as keyof typeof REPORT_SEVERITY]
          : 'Unknown',
      location: {
        ...(file !== undefined ? { file } : {}),
        ...(line !== undefined ? { start_line: line } : {}),
      },
      ...(r.properties?.confidence !== undefined
        ? { details: { confidence: { value: r.properties.confidence } } }
        : {}),
      triage_state: r.properties?.triageState ?? null,
      baseline_state: r.properties?.vigilBaselineState ?? 'new',
    };
  });
}

/** The findings as the table format prints them, most severe first. */
export function renderTable(vulnerabilities: Vulnerability[]): string {
  if (vulnerabilities.length === 0) return 'No findings.\n';
  const rows = [...vulnerabilities]
    .sort((a, b) => (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0))
    .map((v) => ({
      SEVERITY: v.severity,
      FINDING: v.name,
      LOCATION: `${v.location.file ?? '?'}:${v.location.start_line ?? '?'}`,
      ID: v.id,
    }));
  return `${formatTable(rows, ['SEVERITY', 'FINDING', 'LOCATION', 'ID'], { rule: false })}\n`;
}

/**
 * The findings that fail the run, new ones first, then by severity: nobody dismissed them, they
 * are at or above `failOn` with at least `failOnConfidence`, and with `onlyNew` (a run against a
 * baseline, without `--fail-on-all`) the baseline does not have them.
 */
export function failingFindings(
  vulnerabilities: readonly Vulnerability[],
  rule: { failOn: string; failOnConfidence: string; onlyNew: boolean },
): Vulnerability[] {
  const threshold = rule.failOn === 'never' ? Number.POSITIVE_INFINITY : SEVERITY_RANK[rule.failOn]!;
  const leastConfidence = CONFIDENCE_RANK[rule.failOnConfidence]!;
  return vulnerabilities
    .filter(
      (v) =>
        (SEVERITY_RANK[v.severity] ?? 0) >= threshold &&
        confidenceRank(v) >= leastConfidence &&
        v.triage_state !== 'dismissed' &&
        (!rule.onlyNew || isNew(v)),
    )
    .sort(
      (a, b) =>
        Number(isNew(b)) - Number(isNew(a)) ||
        (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0),
    );
}
