/** The collector's rule on impact and confidence: a low-confidence finding is never High or Critical. */
import { describe, expect, it } from 'vitest';
import { FindingCollector, reportedSeverity } from './findings.ts';
import type { Confidence, RuleMeta, Severity } from './types.ts';

const meta = (severity: Severity, confidence: Confidence): RuleMeta => ({
  id: `test.${severity}.${confidence}`,
  title: 'Test rule',
  description: 'A rule of the test.',
  remediation: 'Nothing.',
  severity,
  confidence,
  category: 'other',
  scanType: 'lite',
});

const collect = (m: RuleMeta, match: { severity?: Severity; confidence?: Confidence } = {}) =>
  new FindingCollector().add({ meta: m, file: 'a.sol', startLine: 1, endLine: 1, snippet: 'x', ...match });

describe('reportedSeverity', () => {
  it('caps High and Critical at Medium when the confidence is low', () => {
    expect(reportedSeverity('critical', 'low')).toBe('medium');
    expect(reportedSeverity('high', 'low')).toBe('medium');
  });

  it('keeps every other pair as it is', () => {
    const severities: Severity[] = ['critical', 'high', 'medium', 'low', 'informational', 'gas_optimization'];
    for (const s of severities) {
      expect(reportedSeverity(s, 'high')).toBe(s);
      expect(reportedSeverity(s, 'medium')).toBe(s);
    }
    for (const s of ['medium', 'low', 'informational', 'gas_optimization'] as const)
      expect(reportedSeverity(s, 'low')).toBe(s);
  });
});

describe('FindingCollector', () => {
  it('reports a rule of low confidence and high or critical impact as Medium', () => {
    expect(collect(meta('high', 'low'))).toMatchObject({ severity: 'medium', confidence: 'low' });
    expect(collect(meta('critical', 'low'))).toMatchObject({ severity: 'medium', confidence: 'low' });
  });

  it('caps a match that lowers its confidence to low, and one that raises its severity', () => {
    expect(collect(meta('critical', 'medium'), { confidence: 'low' })).toMatchObject({
      severity: 'medium',
      confidence: 'low',
    });
    expect(collect(meta('medium', 'low'), { severity: 'high' })).toMatchObject({
      severity: 'medium',
      confidence: 'low',
    });
  });

  it('keeps high and critical findings of medium or high confidence', () => {
    expect(collect(meta('critical', 'medium'))).toMatchObject({ severity: 'critical', confidence: 'medium' });
    expect(collect(meta('high', 'high'))).toMatchObject({ severity: 'high', confidence: 'high' });
    expect(collect(meta('high', 'high'), { confidence: 'medium' })).toMatchObject({
      severity: 'high',
      confidence: 'medium',
    });
  });
});
