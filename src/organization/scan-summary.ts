import { severities } from '../db/schema/index.ts';

export type SeverityCounts = Record<(typeof severities)[number], number>;

/** Every severity at zero. */
export function zeroCounts(): SeverityCounts {
  return Object.fromEntries(severities.map((s) => [s, 0])) as SeverityCounts;
}

const LABEL: Record<(typeof severities)[number], string> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  informational: 'Info',
  gas_optimization: 'Gas',
};

/**
 * A scan's comparison in one line, as a commit status and the CLI show it:
 * "2 new (1 High, 1 Low) · 3 fixed", "no new findings · 1 fixed".
 */
export function scanSummary(newBySeverity: SeverityCounts, fixed: number): string {
  const total = severities.reduce((n, s) => n + newBySeverity[s], 0);
  const parts = severities.filter((s) => newBySeverity[s] > 0).map((s) => `${newBySeverity[s]} ${LABEL[s]}`);
  const head = total === 0 ? 'no new findings' : `${total} new (${parts.join(', ')})`;
  return fixed > 0 ? `${head} · ${fixed} fixed` : head;
}

/** How many new findings are at or above `threshold` (severities in order, most severe first). */
export function countAtOrAbove(counts: SeverityCounts, threshold: (typeof severities)[number]): number {
  const limit = severities.indexOf(threshold);
  return severities.reduce((n, s, i) => (i <= limit ? n + counts[s] : n), 0);
}
