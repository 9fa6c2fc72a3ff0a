/**
 * The rule examples as a whole: every rule of the catalogue has examples, every rule file has its
 * examples and a test beside it that runs them, and the rules doc links each rule to its section.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRuleMetas } from './rules-catalogue.ts';
import { RULE_EXAMPLES, renderRuleCatalogue, ruleDocAnchor } from './rules-doc.ts';

const RULES_DIR = path.join(import.meta.dirname, 'solidity/rules');

/** The category files of the Solidity rules: `rules/<category>.ts` files that declare rules. */
async function ruleFiles(): Promise<string[]> {
  const names = (await readdir(RULES_DIR)).filter((n) => /^[a-z-]+\.ts$/.test(n)).sort();
  const out: string[] = [];
  for (const n of names)
    if (/=\s*defineRule\(/.test(await readFile(path.join(RULES_DIR, n), 'utf8'))) out.push(n.slice(0, -3));
  return out;
}

describe('rule examples', () => {
  it('every rule of the catalogue has examples, and every example a rule', () => {
    const ids = allRuleMetas().map((m) => m.id);
    expect(ids.filter((id) => !RULE_EXAMPLES[id])).toEqual([]);
    expect(Object.keys(RULE_EXAMPLES).filter((id) => !ids.includes(id))).toEqual([]);
  });

  it('every rule file has an examples file and a test beside it that runs the examples', async () => {
    const categories = await ruleFiles();
    expect(categories).toContain('reentrancy');
    expect(categories).not.toContain('rule');
    const present = new Set(await readdir(RULES_DIR));
    for (const c of categories) {
      expect(present.has(`${c}.examples.ts`), `${c}.examples.ts`).toBe(true);
      expect(present.has(`${c}.test.ts`), `${c}.test.ts`).toBe(true);
      const test = await readFile(path.join(RULES_DIR, `${c}.test.ts`), 'utf8');
      expect(test, `${c}.test.ts runs the examples of ${c}.ts`).toMatch(
        new RegExp(`import \\* as rules from '\\./${c}\\.ts'[\\s\\S]*describeRuleExamples\\(rules, `),
      );
    }
  });

  it('no rule declares a high or critical impact with low confidence', () => {
    expect(
      allRuleMetas()
        .filter((m) => m.confidence === 'low' && (m.severity === 'high' || m.severity === 'critical'))
        .map((m) => m.id),
    ).toEqual([]);
  });

  it('the rules doc has one section per rule, each reachable at its anchor', () => {
    const doc = renderRuleCatalogue();
    const headings = [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) => ruleDocAnchor(m[1]!));
    for (const m of allRuleMetas()) {
      expect(doc).toContain(`### \`${m.id}\`\n`);
      // GitHub suffixes repeated anchors: each rule's must be unique in the page.
      expect(headings.filter((h) => h === ruleDocAnchor(m.id))).toHaveLength(1);
      expect(doc).toContain(`(#${ruleDocAnchor(m.id)})`);
    }
    expect(ruleDocAnchor('sol.access.tx-origin')).toBe('solaccesstx-origin');
  });
});
