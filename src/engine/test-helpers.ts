/** Helpers for the engine's unit tests: scan an in-memory tree or one source string. */

import { scanSolidityFile } from './solidity/scan-file.ts';
import type { SourceEntry, SourceTree } from './sources/tree.ts';
import type { EngineVulnerability, ScanType } from './types.ts';

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
