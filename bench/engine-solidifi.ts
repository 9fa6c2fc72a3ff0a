/**
 * Engine benchmark on the development half of SolidiFI (../shared/datasets/solidifi-dev): seven
 * bug classes injected into 25 host contracts each. One `vigil engine scan` process scans the
 * whole half (start-up included, as a user runs it) and writes a SAST report; the report is
 * scored by the benchmark's rule (README): an injected bug counts as detected when a finding of
 * its class (by SWC id) lies on a line `w` with `loc <= w < loc + length`. Findings of a mapped
 * class, in the files of that class, that match no injected bug are "unmatched warnings".
 * Prints per class: injected, found, unmatched warnings and the six tools' figures of the README;
 * writes bench/results/engine-solidifi.json.
 *
 *   npm run bench:engine:solidifi       (SOLIDIFI_DIR=/path overrides the dataset)
 *   npm run bench:engine:solidifi -- --llm-triage   (also the LLM triage pass, see bench/llm-triage.ts)
 * Speed: the scan runs three times; the fastest counts, printed with the load average before each
 * run (the machine is shared; CPU time does not depend on the load as wall-clock time does).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EngineVulnerability, openDirectoryTree, scanTree } from '../src/engine/index.ts';
import { timedEngineScan } from './engine-scan-process.ts';
import { wantsLlmTriage, withScriptedTriage } from './llm-triage.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasetDir = process.env.SOLIDIFI_DIR ?? path.resolve(repoRoot, '../shared/datasets/solidifi-dev');
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);

/** Bug class → SWC id (README table). */
const CLASSES: Array<{ dir: string; swc: string }> = [
  { dir: 'Re-entrancy', swc: 'SWC-107' },
  { dir: 'Timestamp-Dependency', swc: 'SWC-116' },
  { dir: 'Unchecked-Send', swc: 'SWC-105' },
  { dir: 'Unhandled-Exceptions', swc: 'SWC-104' },
  { dir: 'TOD', swc: 'SWC-114' },
  { dir: 'Overflow-Underflow', swc: 'SWC-101' },
  { dir: 'tx.origin', swc: 'SWC-115' },
];

/** The six tools of the study on this half (README), `null` where the tool does not report the class. */
const TOOLS = ['Slither', 'Securify', 'Mythril', 'Smartcheck', 'Oyente', 'Manticore'] as const;
const TOOL_FIGURES: Record<string, Array<number | null>> = {
  'Re-entrancy': [584, 524, 115, 0, 161, 57],
  'Timestamp-Dependency': [389, null, 250, 208, 0, null],
  'Unchecked-Send': [null, 431, 365, null, null, null],
  'Unhandled-Exceptions': [424, 353, 270, 21, 149, null],
  TOD: [null, 526, null, null, 61, null],
  'Overflow-Underflow': [null, null, 117, 120, 203, 61],
  'tx.origin': [626, null, 385, 47, null, null],
};

interface Injected {
  file: string;
  loc: number;
  length: number;
}
interface Finding {
  file: string;
  line: number;
  endLine: number;
  swc: string | undefined;
  rule: string;
  severity: string;
}

function readInjected(dir: string): Injected[] {
  const out: Injected[] = [];
  const classDir = path.join(datasetDir, dir);
  for (const f of readdirSync(classDir).filter((x) => /^BugLog_\d+\.csv$/.test(x))) {
    const n = /^BugLog_(\d+)\.csv$/.exec(f)![1];
    const rows = readFileSync(path.join(classDir, f), 'utf8').split(/\r?\n/).slice(1);
    for (const r of rows) {
      const [loc, length] = r.split(',');
      if (!loc || !length) continue;
      out.push({ file: `${dir}/buggy_${n}.sol`, loc: Number(loc), length: Number(length) });
    }
  }
  return out;
}

// --- the scan: one `vigil engine scan` process per run ---------------------------------------
const work = mkdtempSync(path.join(tmpdir(), 'vigil-solidifi-'));
const reportFile = path.join(work, 'report.json');
const timeFile = path.join(work, 'time.txt');

interface Speed {
  runs: number;
  ms: number;
  cpuMs: number;
  peakRssMb: number;
  /** 1-minute load average before each run (the machine is shared). */
  loadAverages: number[];
}

/** Runs `vigil engine scan` REPEAT times with the extra arguments; the fastest run counts. */
function measure(extra: string[]): Speed {
  let bestMs = Number.POSITIVE_INFINITY;
  let bestCpuMs = Number.POSITIVE_INFINITY;
  let peakRssMb = 0;
  const loadAverages: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    loadAverages.push(Math.round(loadavg()[0]! * 100) / 100);
    const run = timedEngineScan({ checkout: repoRoot, datasetDir, reportFile, timeFile, extraArgs: extra });
    bestMs = Math.min(bestMs, run.wallMs);
    bestCpuMs = Math.min(bestCpuMs, run.cpuMs);
    peakRssMb = Math.max(peakRssMb, run.peakRssMb);
  }
  return { runs: REPEAT, ms: Math.round(bestMs), cpuMs: Math.round(bestCpuMs), peakRssMb, loadAverages };
}

const measured = measure([]);
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
  vulnerabilities: Array<{
    severity: string;
    location: { file: string; start_line: number; end_line: number };
    identifiers: Array<{ type: string; name: string }>;
  }>;
  scan: { messages?: Array<{ level: string; value: string }> };
};
rmSync(work, { recursive: true, force: true });

const findings: Finding[] = report.vulnerabilities.map((v) => ({
  file: v.location.file,
  line: v.location.start_line,
  endLine: v.location.end_line,
  swc: v.identifiers.find((i) => i.type === 'swc')?.name,
  rule: v.identifiers.find((i) => i.type === 'vigil_rule')?.name ?? '?',
  severity: v.severity,
}));

let totalLines = 0;
for (const c of CLASSES)
  for (const f of readdirSync(path.join(datasetDir, c.dir)).filter((x) => x.endsWith('.sol')))
    totalLines += readFileSync(path.join(datasetDir, c.dir, f), 'utf8').split('\n').length;

// --- scoring ----------------------------------------------------------------------------------
/** A finding matches an injected bug when one of its lines falls inside the injected range. */
const hits = (f: Finding, b: Injected): boolean =>
  f.file === b.file && f.line < b.loc + b.length && f.endLine >= b.loc;

interface ClassScore {
  injected: number;
  found: number;
  /** Injected bugs found by a finding of severity medium or above. */
  foundMediumOrAbove: number;
  warnings: number;
  unmatched: number;
  unmatchedList: Array<{ file: string; line: number; rule: string; severity: string }>;
  byRule: Record<string, number>;
  tools: Record<string, number | null>;
  bestOfSix: number;
}
const perClass: Record<string, ClassScore> = {};
let injectedAll = 0;
let foundAll = 0;
let bestAll = 0;
for (const c of CLASSES) {
  const bugs = readInjected(c.dir);
  const mine = findings.filter((f) => f.swc === c.swc && f.file.startsWith(`${c.dir}/`));
  const strong = mine.filter((f) => ['Critical', 'High', 'Medium'].includes(f.severity));
  const found = bugs.filter((b) => mine.some((f) => hits(f, b))).length;
  const foundStrong = bugs.filter((b) => strong.some((f) => hits(f, b))).length;
  const unmatched = mine.filter((f) => !bugs.some((b) => hits(f, b)));
  const byRule: Record<string, number> = {};
  for (const f of mine) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
  const figures = TOOL_FIGURES[c.dir]!;
  const best = Math.max(...figures.map((x) => x ?? 0));
  perClass[c.dir] = {
    injected: bugs.length,
    found,
    foundMediumOrAbove: foundStrong,
    warnings: mine.length,
    unmatched: unmatched.length,
    unmatchedList: unmatched.map((f) => ({ file: f.file, line: f.line, rule: f.rule, severity: f.severity })),
    byRule,
    tools: Object.fromEntries(TOOLS.map((t, i) => [t, figures[i] ?? null])),
    bestOfSix: best,
  };
  injectedAll += bugs.length;
  foundAll += found;
  bestAll += best;
}

// --- the LLM triage pass (opt-in: --llm-triage) -------------------------------------------------
/** Per class: injected bugs found, warnings of the class in its files, and those matching none. */
function classFigures(fs: Finding[]) {
  const out: Record<string, { found: number; warnings: number; unmatched: number }> = {};
  let found = 0;
  let warnings = 0;
  let unmatched = 0;
  for (const c of CLASSES) {
    const bugs = readInjected(c.dir);
    const mine = fs.filter((f) => f.swc === c.swc && f.file.startsWith(`${c.dir}/`));
    const x = {
      found: bugs.filter((b) => mine.some((f) => hits(f, b))).length,
      warnings: mine.length,
      unmatched: mine.filter((f) => !bugs.some((b) => hits(f, b))).length,
    };
    out[c.dir] = x;
    found += x.found;
    warnings += x.warnings;
    unmatched += x.unmatched;
  }
  return {
    perClass: out,
    found,
    recall: found / injectedAll,
    warnings,
    unmatched,
    matchedShare: (warnings - unmatched) / Math.max(1, warnings),
  };
}
let llmTriage: Record<string, unknown> | null = null;
if (wantsLlmTriage()) {
  const toFinding = (v: EngineVulnerability): Finding => ({
    file: v.location.file,
    line: v.location.startLine,
    endLine: v.location.endLine,
    swc: v.swc,
    rule: v.ruleId,
    severity: v.severity,
  });
  const tree = await openDirectoryTree(datasetDir);
  const base = await scanTree(tree, { type: 'standard' });
  const run = await withScriptedTriage(base.vulnerabilities, (llm) =>
    scanTree(tree, { type: 'standard', llm, llmTriage: true, llmTriageLimit: Number.MAX_SAFE_INTEGER }),
  );
  await tree.close();
  llmTriage = {
    reviewer: 'scripted (bench/llm-triage.ts) on the fake chat-completions server',
    requests: run.requests,
    dismissed: run.dismissed,
    lowered: run.lowered,
    added: run.added,
    ms: run.ms,
    without: classFigures(base.vulnerabilities.map(toFinding)),
    with: classFigures(run.triaged.map(toFinding)),
  };
}

// --- output -----------------------------------------------------------------------------------
const pct = (a: number, b: number): string => (b === 0 ? '—' : `${((100 * a) / b).toFixed(1)}%`);
const cell = (x: number | null): string => (x === null ? '—' : String(x));
console.log(
  `\nSolidiFI development half: ${CLASSES.length} classes, ${findings.length} findings, ${totalLines} lines\n`,
);
console.log(
  `${'class'.padEnd(22)} ${'injected'.padStart(8)} ${'found'.padStart(13)} ${'≥medium'.padStart(8)} ${'unmatched'.padStart(9)}   ${TOOLS.map((t) => t.padStart(10)).join(' ')} ${'best'.padStart(6)}`,
);
for (const c of CLASSES) {
  const s = perClass[c.dir]!;
  const mark = s.found >= s.bestOfSix ? ' ' : '<';
  console.log(
    `${c.dir.padEnd(22)} ${String(s.injected).padStart(8)} ${`${s.found} ${pct(s.found, s.injected)}`.padStart(13)}${mark}${String(s.foundMediumOrAbove).padStart(8)} ${String(s.unmatched).padStart(9)}   ${TOOLS.map((t) => cell(s.tools[t]!).padStart(10)).join(' ')} ${String(s.bestOfSix).padStart(6)}`,
  );
}
console.log(
  `${'all'.padEnd(22)} ${String(injectedAll).padStart(8)} ${`${foundAll} ${pct(foundAll, injectedAll)}`.padStart(13)}  ${''.padStart(8)} ${String(Object.values(perClass).reduce((n, s) => n + s.unmatched, 0)).padStart(9)}   ${''.padStart(65)} ${`${bestAll} ${pct(bestAll, injectedAll)}`}`,
);
const rate = (x: Speed) => ({
  ...x,
  linesPerSecond: Math.round(totalLines / (x.ms / 1000)),
  linesPerCpuSecond: Math.round(totalLines / (x.cpuMs / 1000)),
});
const speed = rate(measured);
const SPEED_TARGET = 40_000;
const loads = (x: Speed): string => x.loadAverages.join(', ');
console.log(
  `\nspeed (one \`vigil engine scan\` process over the whole half, start-up included, fastest of ${REPEAT}; ${cpus().length} cores):`,
);
console.log(
  `  ${speed.ms} ms, ${speed.linesPerSecond} lines/s wall ${speed.linesPerSecond >= SPEED_TARGET ? '≥' : '<'} ${SPEED_TARGET}, ${speed.linesPerCpuSecond} lines per CPU-second, peak RSS ${speed.peakRssMb} MB (load average ${loads(measured)})`,
);
if (llmTriage) {
  const t = llmTriage as {
    requests: number;
    dismissed: number;
    lowered: number;
    added: number;
    without: ReturnType<typeof classFigures>;
    with: ReturnType<typeof classFigures>;
  };
  console.log(
    `\nLLM triage (scripted reviewer on the fake server; ${t.requests} findings reviewed, ${t.dismissed} dismissed, ${t.lowered} lowered, ${t.added} added):`,
  );
  console.log(
    `  ${'class'.padEnd(22)} ${'found'.padStart(14)} ${'unmatched'.padStart(14)}   (without → with)`,
  );
  for (const c of CLASSES) {
    const a = t.without.perClass[c.dir]!;
    const b = t.with.perClass[c.dir]!;
    console.log(
      `  ${c.dir.padEnd(22)} ${`${a.found} → ${b.found}`.padStart(14)} ${`${a.unmatched} → ${b.unmatched}`.padStart(14)}`,
    );
  }
  console.log(
    `  ${'all'.padEnd(22)} ${`${t.without.found} → ${t.with.found}`.padStart(14)} ${`${t.without.unmatched} → ${t.with.unmatched}`.padStart(14)}   recall ${pct(t.without.found, injectedAll)} → ${pct(t.with.found, injectedAll)}, warnings matching an injected bug ${pct(t.without.matchedShare * 1000, 1000)} → ${pct(t.with.matchedShare * 1000, 1000)}`,
  );
  if (t.added > 0) {
    console.error('the triage pass added findings');
    process.exitCode = 1;
  }
}
const scanMessages = report.scan.messages ?? [];
if (scanMessages.length) console.log(`scan messages: ${scanMessages.length}`);

const results = {
  dataset: { dir: 'solidifi-dev', lines: totalLines, injected: injectedAll },
  scoring:
    'a finding of the class (by SWC id) on a line w with loc <= w < loc + length detects the injected bug; findings of the class in the files of the class that match none are unmatched warnings',
  scanType: 'standard',
  found: foundAll,
  recall: foundAll / injectedAll,
  bestOfSix: bestAll,
  perClass,
  speed: { ...speed, target: SPEED_TARGET, cores: cpus().length },
  scanMessages: scanMessages.length,
  llmTriage,
  node: process.version,
  measuredAt: new Date().toISOString(),
};
writeFileSync(
  path.join(repoRoot, 'bench/results/engine-solidifi.json'),
  `${JSON.stringify(results, null, 2)}\n`,
);
console.log('\nwrote bench/results/engine-solidifi.json');
