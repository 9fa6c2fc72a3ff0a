/**
 * Start-up time and idle memory: `npm run bench:startup [-- --runs N] [--settle S] [--no-tsx]`.
 *
 * On a temporary VIGIL_DATA_DIR filled by `vigil seed demo` (the embedded default with data), it
 * measures, `--runs` times each (median reported):
 *   - `vigil --help` wall time (beside `node -e 0`, Node's own start);
 *   - `vigil start` from spawn to the first `/healthz` 200 (the embedded PostgreSQL server stopped
 *     before each run, so its start is included, as after a reboot);
 *   - the resident memory of the idle `vigil start` of the last run, `--settle` seconds after
 *     `/healthz` answered: the Node process (VmRSS, and V8's heap figures through
 *     bench/startup-memory-probe.mjs) and, separately, the embedded PostgreSQL processes (RSS sum,
 *     which counts shared memory once per process, and PSS sum, which divides it among them).
 * The same with `VIGIL_NO_BUNDLE=1` (the TypeScript sources through tsx, as before the compiled
 * build) unless `--no-tsx`. Targets: start to /healthz ≤ 1.5 s, `--help` ≤ 0.4 s, idle Node RSS
 * < 250 MB. Writes bench/results/startup.json with the load average before and after: the figures
 * are wall times, and other processes on the machine stretch them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const vigilBin = path.join(root, 'bin/vigil.js');
const probe = path.join(import.meta.dirname, 'startup-memory-probe.mjs');
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : fallback;
};
const RUNS = Number(option('runs', '5'));
const SETTLE_S = Number(option('settle', '10'));
const WITH_TSX = !args.includes('--no-tsx');
const TARGET_HEALTHZ_S = 1.5;
const TARGET_HELP_S = 0.4;
const TARGET_IDLE_RSS_MB = 250;

const log = (message: string) =>
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? Number.NaN;
};
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
});

function run(command: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, command, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  child.stdout?.on('data', (d) => {
    output = (output + String(d)).slice(-20_000);
  });
  child.stderr?.on('data', (d) => {
    output = (output + String(d)).slice(-20_000);
  });
  return { child, output: () => output };
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Wall seconds of one run of `node <command>` to its exit (fails on a non-zero exit). */
async function wallTime(command: string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const p = run(command, env);
  const code = await exited(p.child);
  if (code !== 0) throw new Error(`node ${command.join(' ')} exited ${code}:\n${p.output()}`);
  return (performance.now() - started) / 1000;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function status(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(VmRSS|RssAnon|RssFile|RssShmem|Threads|PPid):\s+(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

function pssKb(pid: number): number {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/** The postmaster of the data folder and its children (backends, checkpointer, …). */
async function postgresProcesses(dataDir: string): Promise<number[]> {
  const state = JSON.parse(await readFile(path.join(dataDir, 'postgres.state.json'), 'utf8')) as {
    pid: number;
  };
  const pids = [state.pid];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (status(Number(entry)).PPid === state.pid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface StartRun {
  healthzS: number;
  /** CPU time of the Node process until then: what the load on the machine stretches the least. */
  cpuS: number;
  /** Exit code after SIGTERM when it was not 0. */
  stopExitCode?: number | null;
  memory?: {
    node: { rssMb: number; rssAnonMb: number; rssFileMb: number; threads: number; v8: unknown };
    postgres: { processes: number; rssSumMb: number; pssSumMb: number };
  };
}

/** `vigil start` until /healthz answers 200, optionally its idle memory, then stopped. */
async function startToHealthz(
  dataDir: string,
  env: Record<string, string>,
  measureMemory: boolean,
): Promise<StartRun> {
  const port = await freePort();
  const probeFile = path.join(dataDir, 'memory-probe.json');
  const started = performance.now();
  const p = run([...(measureMemory ? ['--import', probe] : []), vigilBin, 'start'], {
    ...env,
    VIGIL_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: '',
    VIGIL_MEMORY_PROBE: probeFile,
  });
  let healthzS = Number.NaN;
  let cpuS = Number.NaN;
  while (Number.isNaN(healthzS)) {
    if (p.child.exitCode !== null) throw new Error(`vigil start exited:\n${p.output()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`)
      .then((res) => res.status === 200)
      .catch(() => false);
    if (ok) {
      healthzS = (performance.now() - started) / 1000;
      cpuS = cpuSeconds(p.child.pid!);
    } else await sleep(10);
    if (performance.now() - started > 180_000) throw new Error(`no /healthz after 180 s:\n${p.output()}`);
  }
  const result: StartRun = { healthzS, cpuS };
  if (measureMemory) {
    await sleep(SETTLE_S * 1000);
    const pid = p.child.pid!;
    await rm(probeFile, { force: true });
    p.child.kill('SIGUSR2');
    let v8: unknown = null;
    for (let i = 0; i < 100 && v8 === null; i++) {
      v8 = await readFile(probeFile, 'utf8').then(JSON.parse, () => null);
      if (v8 === null) await sleep(50);
    }
    const node = status(pid);
    const pg = await postgresProcesses(dataDir);
    let rssSum = 0;
    let pssSum = 0;
    for (const pgPid of pg) {
      try {
        rssSum += status(pgPid).VmRSS ?? 0;
        pssSum += pssKb(pgPid);
      } catch {
        // a backend that exited meanwhile
      }
    }
    result.memory = {
      node: {
        rssMb: round((node.VmRSS ?? 0) / 1024, 1),
        rssAnonMb: round((node.RssAnon ?? 0) / 1024, 1),
        rssFileMb: round((node.RssFile ?? 0) / 1024, 1),
        threads: node.Threads ?? 0,
        v8,
      },
      postgres: {
        processes: pg.length,
        rssSumMb: round(rssSum / 1024, 1),
        pssSumMb: round(pssSum / 1024, 1),
      },
    };
  }
  p.child.kill('SIGTERM');
  const code = await exited(p.child);
  // Not what is measured here, but not to be lost either: recorded and shown.
  if (code !== 0) {
    result.stopExitCode = code;
    log(`vigil start exited ${code} on SIGTERM: ${p.output().trim().split('\n').slice(-8).join(' | ')}`);
  }
  return result;
}

interface Variant {
  name: string;
  env: Record<string, string>;
}

const variants: Variant[] = [{ name: 'compiled (dist/server)', env: {} }];
if (WITH_TSX) variants.push({ name: 'sources through tsx', env: { VIGIL_NO_BUNDLE: '1' } });

const loadBefore = os.loadavg();
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-bench-startup-'));
try {
  // The build is made (or found current) once, outside the measured runs.
  await wallTime(['scripts/build.mjs'], {});
  log('vigil seed demo (the data folder the starts below use)');
  await wallTime([vigilBin, 'seed', 'demo'], { VIGIL_DATA_DIR: dataDir, DATABASE_URL: '' });

  const nodeBare: number[] = [];
  for (let i = 0; i < RUNS; i++) nodeBare.push(await wallTime(['-e', '0'], {}));
  const results = [];
  for (const variant of variants) {
    const help: number[] = [];
    for (let i = 0; i < RUNS; i++) help.push(await wallTime([vigilBin, '--help'], variant.env));
    log(`${variant.name}: vigil --help median ${median(help).toFixed(3)} s`);
    const healthz: number[] = [];
    const cpu: number[] = [];
    const stopExitCodes: Array<number | null> = [];
    let memory: StartRun['memory'];
    for (let i = 0; i < RUNS; i++) {
      const r = await startToHealthz(dataDir, variant.env, i === RUNS - 1);
      healthz.push(r.healthzS);
      cpu.push(r.cpuS);
      if (r.stopExitCode !== undefined) stopExitCodes.push(r.stopExitCode);
      memory ??= r.memory;
      log(`${variant.name}: start to /healthz ${r.healthzS.toFixed(3)} s (Node CPU ${r.cpuS.toFixed(2)} s)`);
    }
    results.push({
      variant: variant.name,
      helpS: { median: round(median(help)), runs: help.map((x) => round(x)) },
      startToHealthzS: { median: round(median(healthz)), runs: healthz.map((x) => round(x)) },
      startCpuS: { median: round(median(cpu), 2), runs: cpu.map((x) => round(x, 2)) },
      idle: memory,
      stopExitCodes,
    });
  }
  const loadAfter = os.loadavg();

  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(
    `\nload average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} → ${loadAfter.map((x) => x.toFixed(2)).join(' ')}; ${os.cpus().length} CPUs; node -e 0: ${median(nodeBare).toFixed(3)} s; ${RUNS} runs each (median)\n\n`,
  );
  process.stdout.write(
    `${pad('', 24)}${pad('vigil --help', 16)}${pad('start → /healthz (CPU)', 24)}${pad('idle Node RSS', 16)}${pad('(V8 heap used)', 16)}embedded PostgreSQL RSS / PSS\n`,
  );
  for (const r of results) {
    const v8 = r.idle?.node.v8 as { heapUsed?: number } | null | undefined;
    process.stdout.write(
      `${pad(r.variant, 24)}${pad(`${r.helpS.median.toFixed(3)} s`, 16)}${pad(`${r.startToHealthzS.median.toFixed(3)} s (${r.startCpuS.median.toFixed(2)} s)`, 24)}${pad(`${r.idle?.node.rssMb ?? '?'} MB`, 16)}${pad(v8?.heapUsed ? `${Math.round(v8.heapUsed / 1048576)} MB` : '?', 16)}${r.idle?.postgres.rssSumMb ?? '?'} MB / ${r.idle?.postgres.pssSumMb ?? '?'} MB (${r.idle?.postgres.processes ?? '?'} processes)\n`,
    );
  }
  process.stdout.write(
    `\ntargets: --help ≤ ${TARGET_HELP_S} s, start → /healthz ≤ ${TARGET_HEALTHZ_S} s, idle Node RSS < ${TARGET_IDLE_RSS_MB} MB\n`,
  );
  await writeFile(
    path.join(root, 'bench/results/startup.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cpus: os.cpus().length,
        loadAverageBefore: loadBefore.map((x) => round(x, 2)),
        loadAverageAfter: loadAfter.map((x) => round(x, 2)),
        runs: RUNS,
        settleSeconds: SETTLE_S,
        nodeBareS: round(median(nodeBare)),
        targets: {
          helpS: TARGET_HELP_S,
          startToHealthzS: TARGET_HEALTHZ_S,
          idleNodeRssMb: TARGET_IDLE_RSS_MB,
        },
        results,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
