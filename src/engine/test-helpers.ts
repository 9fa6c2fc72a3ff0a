/** Helpers for the engine's unit tests: scan an in-memory tree or one source string. */

import { describe, expect, it } from 'vitest';
import type { SolidityRule } from './solidity/rules/rule.ts';
import { scanSolidityFile } from './solidity/scan-file.ts';
import type { SourceEntry, SourceTree } from './sources/tree.ts';
import type { EngineVulnerability, RuleExamples, ScanType } from './types.ts';

/** A SourceTree over a path → content map (sorted, read-only). */
export function memoryTree(files: Record<string, string | Buffer>): SourceTree & { reads: string[] } {
  const reads: string[] = [];
  const entries: SourceEntry[] = Object.entries(files)
    .map(([path, content]) => ({ path, size: Buffer.byteLength(content) }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  return {
    reads,
    async list() {
      return entries;
    },
    async read(path: string) {
      const c = files[path];
      if (c === undefined) throw new Error(`not in the tree: ${path}`);
      reads.push(path);
      return Buffer.isBuffer(c) ? c : Buffer.from(c);
    },
    async close() {},
  };
}

/** Runs the Solidity rules of `type` on one source. */
export async function scanSource(
  source: string,
  type: ScanType = 'standard',
  path = 'contracts/Test.sol',
): Promise<EngineVulnerability[]> {
  const r = await scanSolidityFile(path, source, type);
  return r.vulnerabilities;
}

/** Findings of one rule. */
export async function findingsOf(
  ruleId: string,
  source: string,
  type: ScanType = 'audit',
): Promise<EngineVulnerability[]> {
  return (await scanSource(source, type)).filter((v) => v.ruleId === ruleId);
}

/** The rules a category file defines: its exported values that are rules. */
export function rulesOfModule(mod: Record<string, unknown>): SolidityRule[] {
  return Object.values(mod).filter(
    (v): v is SolidityRule =>
      typeof v === 'object' && v !== null && 'meta' in v && 'run' in v && typeof v.run === 'function',
  );
}

/**
 * Declares the tests of a category file's examples: the file documents exactly the rules it
 * defines; each vulnerable example parses cleanly and yields a finding of its rule, and each safe
 * example parses cleanly and yields none of that rule.
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
      const scan = (source: string) =>
        scanSolidityFile(example.path ?? 'contracts/Example.sol', source, 'audit');
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
