/**
 * Engine benchmark on the held-out corpus (test/fixtures/solidity-heldout): contracts written for
 * this project, outside the SmartBugs dataset, in Solidity 0.5–0.8. Each file's first line names
 * what it should produce: `// expect: reentrancy@L23, access_control@L40` (category + line) or
 * `// expect: none` for a safe contract. Scoring is the SmartBugs rule: an expected vulnerability is
 * found when a finding of its category covers its line. On safe files every finding of severity
 * critical/high/medium/low is a false positive (informational and gas findings claim no
 * vulnerability). Runs `standard` and `audit`, prints per-category recall, the false positives and
 * the parse messages, and writes bench/results/engine-heldout.json.
 *
 *   npm run bench:engine:heldout
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EngineVulnerability, openDirectoryTree, type ScanType, scanTree } from '../src/engine/index.ts';
import { parseSolidity } from '../src/engine/solidity/parser.ts';
import type { DaspCategory } from '../src/engine/types.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixturesDir = path.join(repoRoot, 'test/fixtures');
const PREFIX = 'solidity-heldout';
const corpusDir = path.join(fixturesDir, PREFIX);

interface Expected {
  category: DaspCategory;
  line: number;
}
interface CorpusFile {
  file: string;
  safe: boolean;
  expected: Expected[];
  pragma: string;
}

/** Reads the `// expect:` header of every corpus file. */
function readCorpus(): CorpusFile[] {
  const out: CorpusFile[] = [];
  for (const f of readdirSync(corpusDir)
    .filter((x) => x.endsWith('.sol'))
    .sort()) {
    const text = readFileSync(path.join(corpusDir, f), 'utf8');
    const header = /^\/\/\s*expect:\s*(.+)$/m.exec(text.split('\n', 1)[0] ?? '');
    if (!header) throw new Error(`${f}: no "// expect:" header on line 1`);
    const spec = header[1]!.trim();
    const expected: Expected[] = [];
    if (spec !== 'none') {
      for (const item of spec.split(',')) {
        const m = /^\s*([a-z_]+)@L(\d+)\s*$/.exec(item);
        if (!m) throw new Error(`${f}: cannot read expectation "${item}"`);
        expected.push({ category: m[1] as DaspCategory, line: Number(m[2]) });
      }
    }
    const pragma = /pragma\s+solidity\s+([^;]+);/.exec(text)?.[1]?.trim() ?? '?';
    out.push({ file: `${PREFIX}/${f}`, safe: expected.length === 0, expected, pragma });
  }
  return out;
}

/** Informational and gas findings are not claims of a vulnerability. */
const isScored = (v: EngineVulnerability): boolean =>
  v.severity !== 'informational' && v.severity !== 'gas_optimization';

const covers = (v: EngineVulnerability, e: Expected): boolean =>
  v.category === e.category && v.location.startLine <= e.line && e.line <= v.location.endLine;

interface CategoryScore {
  total: number;
  found: number;
}

const corpus = readCorpus();
const safeCount = corpus.filter((c) => c.safe).length;
const expectedTotal = corpus.reduce((n, c) => n + c.expected.length, 0);

// Parse check: files whose syntax tree has error or missing nodes.
const parseProblems: Array<{ file: string; lines: number[] }> = [];
for (const c of corpus) {
  const src = readFileSync(path.join(corpusDir, path.basename(c.file)), 'utf8');
  const parsed = await parseSolidity(src);
  if (parsed.errors.length > 0)
    parseProblems.push({ file: c.file, lines: [...new Set(parsed.errors.map((e) => e.line))] });
}

const tree = await openDirectoryTree(fixturesDir, { prefix: PREFIX });
const runs: Record<string, unknown> = {};
for (const type of ['standard', 'audit'] as ScanType[]) {
  const result = await scanTree(tree, { type });
  const scored = result.vulnerabilities.filter(isScored);
  const byFile = new Map<string, EngineVulnerability[]>();
  for (const v of scored) byFile.set(v.location.file, [...(byFile.get(v.location.file) ?? []), v]);

  const perCategory: Record<string, CategoryScore> = {};
  const missed: Array<{ file: string; category: DaspCategory; line: number }> = [];
  const falsePositives: Array<{ file: string; ruleId: string; severity: string; line: number }> = [];
  const extraOnVulnerable: Array<{ file: string; ruleId: string; severity: string; line: number }> = [];
  let found = 0;
  for (const c of corpus) {
    const findings = byFile.get(c.file) ?? [];
    for (const e of c.expected) {
      const s = perCategory[e.category] ?? { total: 0, found: 0 };
      perCategory[e.category] = s;
      s.total++;
      if (findings.some((v) => covers(v, e))) {
        s.found++;
        found++;
      } else missed.push({ file: c.file, category: e.category, line: e.line });
    }
    for (const v of findings) {
      const row = { file: c.file, ruleId: v.ruleId, severity: v.severity, line: v.location.startLine };
      if (c.safe) falsePositives.push(row);
      else if (!c.expected.some((e) => covers(v, e))) extraOnVulnerable.push(row);
    }
  }
  const safeFilesWithFindings = new Set(falsePositives.map((f) => f.file)).size;
  runs[type] = {
    found,
    total: expectedTotal,
    recall: found / Math.max(1, expectedTotal),
    falsePositivesOnSafe: falsePositives.length,
    safeFilesWithFindings,
    unexpectedOnVulnerable: extraOnVulnerable.length,
    perCategory,
    missed,
    falsePositives,
    unexpectedFindingsOnVulnerable: extraOnVulnerable,
    messages: result.messages,
  };

  console.log(
    `\n${type}: found ${found}/${expectedTotal} (${((100 * found) / Math.max(1, expectedTotal)).toFixed(1)}%); ` +
      `${falsePositives.length} low+ finding(s) on ${safeFilesWithFindings}/${safeCount} safe file(s); ` +
      `${extraOnVulnerable.length} unexpected on vulnerable files`,
  );
  console.log(`  ${'category'.padEnd(27)} found/total`);
  for (const [cat, s] of Object.entries(perCategory).sort())
    console.log(`  ${cat.padEnd(27)} ${s.found}/${s.total}`);
  for (const m of missed) console.log(`  missed ${m.category} at ${m.file}:${m.line}`);
  for (const f of falsePositives)
    console.log(`  FP ${f.severity.padEnd(8)} ${f.ruleId} at ${f.file}:${f.line}`);
  for (const f of extraOnVulnerable)
    console.log(`  unexpected ${f.severity.padEnd(8)} ${f.ruleId} at ${f.file}:${f.line}`);
  for (const m of result.messages) console.log(`  message ${m.level}: ${m.value}`);
}
await tree.close();

console.log(
  `\ncorpus: ${corpus.length} contracts (${safeCount} safe, ${corpus.length - safeCount} vulnerable), ${expectedTotal} expected findings`,
);
console.log(
  parseProblems.length === 0
    ? 'parse: no error nodes in any file'
    : `parse: error nodes in ${parseProblems.map((p) => `${p.file} (line ${p.lines.join(', ')})`).join('; ')}`,
);

const results = {
  corpus: {
    contracts: corpus.length,
    safe: safeCount,
    vulnerable: corpus.length - safeCount,
    expected: expectedTotal,
    pragmas: Object.fromEntries(corpus.map((c) => [c.file, c.pragma])),
  },
  scoring:
    'category + line (a finding whose line range covers the expected line); false positives = critical/high/medium/low findings on safe files',
  parseProblems,
  engine: runs,
  node: process.version,
  measuredAt: new Date().toISOString(),
};
writeFileSync(
  path.join(repoRoot, 'bench/results/engine-heldout.json'),
  `${JSON.stringify(results, null, 2)}\n`,
);
console.log('\nwrote bench/results/engine-heldout.json');
