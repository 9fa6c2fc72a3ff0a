/**
 * Two builds, or two command lines, of `vigil engine scan` compared by alternating runs on the
 * development half of SolidiFI (../shared/datasets/solidifi-dev, SOLIDIFI_DIR overrides it):
 *
 *   npm run bench:engine:alternate -- --a <revision> --b <revision> [--runs 8]
 *       [--a-args "--type lite"] [--b-args "--type standard"]
 *
 * A side is a git revision, checked out into a temporary worktree that shares this checkout's
 * node_modules, or `.`: this checkout as it is, uncommitted changes included (the default of
 * both sides, so `--a-args`/`--b-args` alone compare two command lines of one build). Each side
 * runs once to warm up (its first run also builds it), then A and B alternate, A first, so that
 * the machine's load, which moves wall-clock times by more than most changes, drifts over both
 * alike. Each run is one `vigil engine scan` process writing the SAST report, start-up included,
 * timed with GNU time (CPU of all threads, peak RSS). Prints per side the mean, median and
 * minimum of wall and CPU milliseconds, and the mean of B − A over the pairs with its standard
 * deviation; writes bench/results/engine-alternate.json (BENCH_RESULTS: an absolute path
 * outside bench/results) with every run and the load average before each pair.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timedEngineScan } from './engine-scan-process.ts';
import { benchResultsPath } from './results-path.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasetDir = process.env.SOLIDIFI_DIR ?? path.resolve(repoRoot, '../shared/datasets/solidifi-dev');
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : fallback;
};
const RUNS = Number(option('runs', '8'));

interface Side {
  label: 'A' | 'B';
  spec: string;
  /** The commit the side runs, or null for this checkout's working tree. */
  commit: string | null;
  dir: string;
  extraArgs: string[];
  runs: Array<{ wallMs: number; cpuMs: number; peakRssMb: number }>;
}

const work = mkdtempSync(path.join(tmpdir(), 'vigil-engine-alternate-'));
const timeFile = path.join(work, 'time.txt');
const worktrees: string[] = [];

function git(...gitArgs: string[]): string {
  return execFileSync('git', gitArgs, { cwd: repoRoot, encoding: 'utf8' }).trim();
}

function openSide(label: 'A' | 'B', spec: string, extra: string): Side {
  const extraArgs = extra.split(' ').filter(Boolean);
  if (spec === '.') return { label, spec, commit: null, dir: repoRoot, extraArgs, runs: [] };
  let commit: string;
  try {
    commit = git('rev-parse', '--verify', `${spec}^{commit}`);
  } catch {
    throw new Error(`--${label.toLowerCase()} ${spec}: not a revision of this repository`);
  }
  const dir = path.join(work, label);
  git('worktree', 'add', '--detach', '--quiet', dir, commit);
  worktrees.push(dir);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return { label, spec, commit, dir, extraArgs, runs: [] };
}

function scanOnce(side: Side): { wallMs: number; cpuMs: number; peakRssMb: number } {
  const run = timedEngineScan({
    checkout: side.dir,
    datasetDir,
    reportFile: path.join(work, `report-${side.label}.json`),
    timeFile,
    extraArgs: side.extraArgs,
  });
  return { wallMs: Math.round(run.wallMs), cpuMs: Math.round(run.cpuMs), peakRssMb: run.peakRssMb };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const sd = (xs: number[]) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / Math.max(1, xs.length - 1));
};

if (!existsSync(datasetDir)) throw new Error(`no dataset at ${datasetDir} (SOLIDIFI_DIR)`);
const sides: Side[] = [];
const loadBeforePair: number[] = [];
try {
  sides.push(openSide('A', option('a', '.'), option('a-args', '')));
  sides.push(openSide('B', option('b', '.'), option('b-args', '')));
  for (const side of sides) {
    process.stderr.write(`warm-up ${side.label} (${side.spec} ${side.extraArgs.join(' ')})\n`);
    scanOnce(side);
  }
  for (let i = 0; i < RUNS; i++) {
    loadBeforePair.push(Math.round(loadavg()[0]! * 100) / 100);
    for (const side of sides) side.runs.push(scanOnce(side));
    const [a, b] = sides as [Side, Side];
    process.stderr.write(
      `pair ${i + 1}/${RUNS}: A ${a.runs[i]!.wallMs} ms, B ${b.runs[i]!.wallMs} ms (load ${loadBeforePair[i]})\n`,
    );
  }
} finally {
  for (const dir of worktrees) {
    try {
      git('worktree', 'remove', '--force', dir);
    } catch {
      // Left for `git worktree prune`.
    }
  }
  rmSync(work, { recursive: true, force: true });
}

const [a, b] = sides as [Side, Side];
const summary = (side: Side) => {
  const wall = side.runs.map((r) => r.wallMs);
  const cpu = side.runs.map((r) => r.cpuMs);
  return {
    side: side.label,
    spec: side.spec,
    commit: side.commit,
    args: side.extraArgs,
    wallMs: { mean: Math.round(mean(wall)), median: Math.round(median(wall)), min: Math.min(...wall) },
    cpuMs: { mean: Math.round(mean(cpu)), median: Math.round(median(cpu)), min: Math.min(...cpu) },
    peakRssMb: Math.max(...side.runs.map((r) => r.peakRssMb)),
    runs: side.runs,
  };
};
const wallDiffs = a.runs.map((r, i) => b.runs[i]!.wallMs - r.wallMs);
const cpuDiffs = a.runs.map((r, i) => b.runs[i]!.cpuMs - r.cpuMs);
const results = [summary(a), summary(b)];

const rows = [
  ['side', 'build', 'arguments', 'wall mean', 'median', 'min', 'CPU mean', 'median', 'min', 'peak RSS MB'],
  ...results.map((r) => [
    r.side,
    r.commit ? `${r.spec} (${r.commit.slice(0, 10)})` : 'this checkout',
    r.args.join(' ') || '(defaults)',
    String(r.wallMs.mean),
    String(r.wallMs.median),
    String(r.wallMs.min),
    String(r.cpuMs.mean),
    String(r.cpuMs.median),
    String(r.cpuMs.min),
    String(r.peakRssMb),
  ]),
];
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
const line = (row: string[]) => row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
process.stdout.write(
  `\nvigil engine scan over ${datasetDir}, ${RUNS} alternating pairs (ms)\n${line(rows[0]!)}\n${widths
    .map((w) => '-'.repeat(w))
    .join('  ')}\n${rows.slice(1).map(line).join('\n')}\n`,
);
process.stdout.write(
  `B − A per pair: wall ${Math.round(mean(wallDiffs))} ± ${Math.round(sd(wallDiffs))} ms, CPU ${Math.round(
    mean(cpuDiffs),
  )} ± ${Math.round(sd(cpuDiffs))} ms (mean ± standard deviation); load average before the pairs ${Math.min(
    ...loadBeforePair,
  )}–${Math.max(...loadBeforePair)} on ${cpus().length} CPUs\n`,
);

const resultsPath = benchResultsPath('engine-alternate');
writeFileSync(
  resultsPath,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      dataset: path.relative(repoRoot, datasetDir),
      pairs: RUNS,
      cpus: cpus().length,
      node: process.version,
      loadAverageBeforePairs: loadBeforePair,
      sides: results,
      differenceBMinusA: {
        wallMs: { mean: Math.round(mean(wallDiffs)), sd: Math.round(sd(wallDiffs)) },
        cpuMs: { mean: Math.round(mean(cpuDiffs)), sd: Math.round(sd(cpuDiffs)) },
      },
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(`wrote ${path.relative(repoRoot, resultsPath)}\n`);
