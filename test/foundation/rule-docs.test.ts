import { describe, expect, it } from 'vitest';
import { toSarifReport, toSastReport } from '../../src/engine/index.ts';
import { allRuleMetas } from '../../src/engine/rules-catalogue.ts';
import type { EngineVulnerability } from '../../src/engine/types.ts';
import { sharedTestApp } from '../helpers/app.ts';

const t = sharedTestApp();

describe('GET /docs/rules', () => {
  it('lists every rule and serves a page for each, without a credential', async () => {
    const rules = allRuleMetas();
    const index = await t.app.inject({ method: 'GET', url: '/docs/rules' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toContain('text/html');
    for (const rule of rules) expect(index.body).toContain(`/docs/rules/${encodeURIComponent(rule.id)}`);
    const rule = rules[0]!;
    const one = await t.app.inject({ method: 'GET', url: `/docs/rules/${encodeURIComponent(rule.id)}` });
    expect(one.statusCode).toBe(200);
    expect(one.body).toContain(rule.id);
    expect(one.body).toContain('How to fix it');
    const missing = await t.app.inject({ method: 'GET', url: '/docs/rules/no.such.rule' });
    expect(missing.statusCode).toBe(404);
  });

  it('is where the SAST and SARIF reports link every rule', async () => {
    const [rule] = allRuleMetas();
    const vulnerability = {
      ruleId: rule!.id,
      title: rule!.title,
      description: rule!.description,
      remediation: rule!.remediation,
      severity: rule!.severity,
      confidence: rule!.confidence,
      category: rule!.category,
      location: { file: 'A.sol', startLine: 1, endLine: 1 },
      fingerprint: 'f'.repeat(64),
    } as EngineVulnerability;
    const rulesUrl = 'http://vigil.example.test/docs/rules';
    const sast = toSastReport([{ id: crypto.randomUUID(), vulnerability }], {
      startTime: new Date(),
      endTime: new Date(),
      rulesUrl,
    });
    const sarif = toSarifReport([{ id: crypto.randomUUID(), vulnerability }], { rulesUrl });
    const links = [
      ...sast.vulnerabilities.flatMap((v) => v.identifiers.map((i) => i.url).filter((u): u is string => !!u)),
      ...sarif.runs[0]!.tool.driver.rules.map((r) => r.helpUri),
    ];
    expect(links.length).toBeGreaterThanOrEqual(2);
    for (const link of links) {
      expect(link.startsWith(`${rulesUrl}/`)).toBe(true);
      const res = await t.app.inject({ method: 'GET', url: new URL(link).pathname });
      expect(res.statusCode, link).toBe(200);
    }
  });
});
