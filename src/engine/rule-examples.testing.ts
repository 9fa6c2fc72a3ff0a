/**
 * The tests of the rule examples (`<category>.examples.ts`), declared by each rule file's test.
 * Imports vitest: only test files import this module.
 */
import { describe, expect, it } from 'vitest';
import type { SolidityRule } from './solidity/rules/rule.ts';
import { scanSolidityFile } from './solidity/scan-file.ts';
import type { RuleExamples } from './types.ts';

/** The rules a category file defines: its exported values that are rules. */
export function rulesOfModule(mod: Record<string, unknown>): SolidityRule[] {
  return Object.values(mod).filter(
    (v): v is SolidityRule =>
      typeof v === 'object' && v !== null && 'meta' in v && 'run' in v && typeof v.run === 'function',
  );
}

/**
 * Declares the tests of a category file's examples: the file documents exactly the rules it
 * defines; scanned with the scan type that lists the rule, each vulnerable example parses cleanly
 * and yields a finding of its rule, and each safe example parses cleanly and yields none of it.
 */
export function describeRuleExamples(mod: Record<string, unknown>, examples: RuleExamples): void {
  const rules = rulesOfModule(mod);
  describe('the examples of each rule', () => {
    it('document exactly the rules the file defines', () => {
      expect(rules.length).toBeGreaterThan(0);
      expect(Object.keys(examples).sort()).toEqual(rules.map((r) => r.meta.id).sort());
    });
    for (const rule of rules) {
      const id = rule.meta.id;
      const example = examples[id];
      if (!example) continue;
      // The scan type that lists the rule: the lowest that runs it.
      const scan = (source: string) =>
        scanSolidityFile(example.path ?? 'contracts/Example.sol', source, rule.meta.scanType);
      describe(id, () => {
        it('reports the vulnerable example', async () => {
          const r = await scan(example.vulnerable);
          expect(r.messages).toEqual([]);
          expect(r.vulnerabilities.filter((v) => v.ruleId === id).length).toBeGreaterThan(0);
        });
        it('stays silent on the safe example', async () => {
          const r = await scan(example.safe);
          expect(r.messages).toEqual([]);
          expect(r.vulnerabilities.filter((v) => v.ruleId === id)).toEqual([]);
        });
        it('names at least one idiom it accepts as safe', () => {
          expect(example.safeIdioms.length).toBeGreaterThan(0);
        });
      });
    }
  });
}
