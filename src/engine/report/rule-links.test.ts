import { describe, expect, it } from 'vitest';
import { allRuleMetas } from '../rules-catalogue.ts';
import { renderRuleCatalogue } from '../rules-doc.ts';
import { RULES_DOC_URL, ruleDocAnchor, ruleHelpUri, rulesIndexUri } from './common.ts';

describe('rule links', () => {
  it('slugs a heading as GitHub does', () => {
    expect(ruleDocAnchor('`sol.access.tx-origin`')).toBe('solaccesstx-origin');
    expect(ruleDocAnchor('Scan engine rules')).toBe('scan-engine-rules');
    expect(ruleDocAnchor('lite (12 rules)')).toBe('lite-12-rules');
    expect(ruleDocAnchor('`secret.aws_key` — Überblick')).toBe('secretaws_key--überblick');
  });

  it('points each rule at its own section of docs/engine-rules.md without a public URL', () => {
    const catalogue = renderRuleCatalogue();
    const anchors = new Set(
      catalogue
        .split('\n')
        .filter((l) => /^#{1,6} /.test(l))
        .map((l) => ruleDocAnchor(l.replace(/^#+ /, ''))),
    );
    const rules = allRuleMetas();
    const links = new Set<string>();
    for (const rule of rules) {
      const link = ruleHelpUri(rule.id);
      expect(link.startsWith(`${RULES_DOC_URL}#`)).toBe(true);
      expect(anchors).toContain(link.slice(RULES_DOC_URL.length + 1));
      links.add(link);
    }
    // No two rules share a section.
    expect(links.size).toBe(rules.length);
    expect(RULES_DOC_URL).not.toMatch(/localhost|127\.0\.0\.1/);
    expect(RULES_DOC_URL.startsWith('https://')).toBe(true);
    expect(rulesIndexUri()).toBe(RULES_DOC_URL);
  });

  it('points at the rule pages of a public server when one is configured', () => {
    expect(ruleHelpUri('sol.access.tx-origin', 'https://vigil.example.com/docs/rules/')).toBe(
      'https://vigil.example.com/docs/rules/sol.access.tx-origin',
    );
    expect(rulesIndexUri('https://vigil.example.com/docs/rules/')).toBe(
      'https://vigil.example.com/docs/rules',
    );
  });
});
