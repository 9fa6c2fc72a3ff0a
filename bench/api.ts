/**
 * Real traffic instead: `npm run bench:api -- --traffic` (bench/api-traffic.ts).
 *
 * API throughput: `npm run bench:api [-- --findings N] [--duration S] [--backends postgres,embedded]
 * [--profile] [--only <read name part>[,<another>]] [--keep] [--serve-node-args "<node options>"]`.
 *
 * For each backend — a database `vigil_bench_api` created (and dropped) on the PostgreSQL server
 * of BENCH_DATABASE_URL (default the local one), and the embedded default in a temporary
 * VIGIL_DATA_DIR — it migrates, generates the all-findings data set of bench/findings-data.ts
 * (default 1,000,000 findings), starts `vigil serve` and `vigil worker` as separate processes
 * (rate limits raised out of the way), and runs autocannon (20 connections, `--duration` seconds
 * each) against:
 *   (a) a bare Fastify route returning the credits JSON (bench/api-ceiling.ts, its own process),
 *   (b) the same after one `select 1` on a node-postgres pool to the same database — the
 *       database-bound ceiling every read is compared to; measured before the reads and again
 *       after them, the ratios are to the higher of the two,
 *   (c) the 500 pages of the paging read below answered by the ceiling process from their
 *       findings' stored bodies, read by their ids with one prepared statement: the least a page
 *       read from the database costs; the reads of pages in turn are also given as a ratio to it,
 *   Vigil's reads: getScan, getCreditBalances, all-findings (limit=20; 500 pages of 20
 *       requested in turn, more than a process keeps, so none is answered from memory; with 3
 *       filters; the same page again with writes beside it, through the same `vigil serve`:
 *       10 credit grants a second, a table the listing does not read, or another user opening a
 *       finding's comments 10 times a second, which moves that user's read marker, or a judge of
 *       another company commenting on its findings 10 times a second), company users, reports,
 *       audit log, and last the 500 pages again with the findings' stored bodies cleared 10 times a
 *       second (the first read of each page after writes to all its findings).
 * The CPU columns say where each run's CPU went, in microseconds per answered request: the process
 * answering (the ceiling server or `vigil serve`), the PostgreSQL backends connected to the bench
 * database, this script (autocannon, the writes beside), and the rest of the machine's busy time
 * (`vigil worker`, PostgreSQL's background processes, other processes); "API in kernel" is the
 * share of the answering process's CPU time spent in system calls; "busy" is the share of all
 * CPUs' time that was busy (/proc/<pid>/stat and /proc/stat).
 * Targets: every read ≥ 50% of (b)'s req/s, with p99 ≤ 20 ms (all-findings: p99 ≤ 50 ms); "meets target" needs both.
 * Samples VmRSS of `vigil serve` during the runs (peak) and, on the embedded backend, the idle RSS
 * of `vigil start`. `--profile` runs `vigil serve` under `node --cpu-prof` (profiles in
 * bench/results/profiles/; summarise with `npx tsx bench/cpuprofile-summary.ts <file>`).
 * `--keep` leaves the PostgreSQL server's database in place and prints how to start `vigil serve` on
 * it with the run's credentials (to profile or EXPLAIN one read by hand). `--serve-node-args`
 * passes node options to `vigil serve` (`--trace-gc`, heap sizes); BENCH_SERVE_LOG names a file
 * that receives what it prints.
 * Writes bench/results/api.json (BENCH_RESULTS: an absolute path outside bench/results) with the load average before/after:
 * other processes share the CPUs, so the ratio to (b), measured in the same run, is the figure
 * that compares.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { type Db, migrateDatabase, openDatabase } from '../src/db/client.ts';
import { acquireEmbeddedServer } from '../src/db/embedded-server.ts';
import * as schema from '../src/db/schema/index.ts';
import { freePort, sleep, spawnNode, stopProcess, waitFor } from './bench-processes.ts';
import { generateFindingsDataSet } from './findings-data.ts';
import { benchResultsPath } from './results-path.ts';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
// `--traffic`: the bench of real traffic (bench/api-traffic.ts), which exits when done.
if (args.includes('--traffic')) await import('./api-traffic.ts');
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : fallback;
};
const FINDINGS = Number(option('findings', '1000000'));
const REPOSITORIES = Math.min(1000, Math.max(10, Math.floor(FINDINGS / 100)));
const DURATION = Number(option('duration', '10'));
const CONNECTIONS = 20;
const BACKENDS = option('backends', 'postgres,embedded').split(',') as Array<'postgres' | 'embedded'>;
const PROFILE = args.includes('--profile');
/** Only the reads whose name contains this text, or one of these comma-separated texts (the two ceilings always run). */
const ONLY = option('only', '');
const KEEP = args.includes('--keep');
/** Extra node options for `vigil serve` (`--serve-node-args "--trace-gc --max-semi-space-size=32"`). */
const SERVE_NODE_ARGS = option('serve-node-args', '').split(' ').filter(Boolean);
/** A file that receives everything `vigil serve` prints (its own log, and `--trace-gc` lines). */
const SERVE_LOG = process.env.BENCH_SERVE_LOG;
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = process.env.BENCH_DB_NAME ?? 'vigil_bench_api';
const TARGET_RATIO = 0.5;
const DB_CEILING_AGAIN = '(b) again, after the reads';
const PAGE_CEILING = '(c) the pages in turn: their stored bodies by id, one statement';
const TARGET_P99_MS = 20;
const TARGET_ALL_FINDINGS_P99_MS = 50;
/** Pages of the all-findings read requested in turn, each a different page of the database. */
const PAGES_IN_TURN = 500;
const PAGE_ORDERS = [
  'number_asc',
  'number_desc',
  'severity_desc',
  'status_asc',
  'severity_asc',
  'status_desc',
];

const log = (message: string) =>
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  log(`${label} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  return result;
}

function rssKb(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Peak VmRSS of a process, sampled every 250 ms until stopped. */
function rssSampler(pid: number | undefined) {
  let peak = 0;
  const first = rssKb(pid) ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid) ?? 0);
  }, 250);
  return {
    first,
    stop() {
      clearInterval(timer);
      return Math.max(peak, first);
    },
  };
}

/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU seconds a process has used so far in user and in system (kernel) mode, or null once it is gone. */
function cpuTimesOf(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": state is field 3, utime field 14 and stime field 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS };
  } catch {
    return null;
  }
}

function cpuSecondsOf(pid: number): number | null {
  const times = cpuTimesOf(pid);
  return times && times.user + times.system;
}

/** Busy CPU seconds of the whole machine so far, all CPUs together (/proc/stat). */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal
  const times = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (times[3] ?? 0) + (times[4] ?? 0);
  return (times.reduce((a, b) => a + b, 0) - idle) / CLOCK_TICKS;
}

/** CPU seconds each process of `pids` has used so far (those still there). */
function cpuSecondsOfAll(pids: Iterable<number>): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    const s = cpuSecondsOf(pid);
    if (s !== null) seconds.set(pid, s);
  }
  return seconds;
}

/**
 * Where the CPU of one measured run went: the process answering (the ceiling server or `vigil
 * serve`), the PostgreSQL backends connected to the bench database (their pids read before and
 * after; a backend that ended during the run is missed, one that began is counted whole), this
 * script (autocannon and the writes beside), and the rest of the machine's busy time (`vigil
 * worker`, PostgreSQL's background processes, anything else running).
 */
async function cpuMeter(apiPid: number | undefined, backendPids: () => Promise<number[]>) {
  const api = apiPid ? cpuTimesOf(apiPid) : null;
  const clientStart = process.cpuUsage();
  const machineStart = machineBusySeconds();
  const backendsStart = cpuSecondsOfAll(await backendPids());
  return async () => {
    const backendsEnd = cpuSecondsOfAll(await backendPids());
    const client = process.cpuUsage(clientStart);
    const machine = machineBusySeconds() - machineStart;
    const apiEnd = apiPid ? cpuTimesOf(apiPid) : null;
    let postgres = 0;
    for (const [pid, s] of backendsEnd) postgres += s - (backendsStart.get(pid) ?? 0);
    const apiSystem = api !== null && apiEnd !== null ? apiEnd.system - api.system : 0;
    const apiSeconds = api !== null && apiEnd !== null ? apiEnd.user - api.user + apiSystem : 0;
    const clientSeconds = (client.user + client.system) / 1e6;
    return {
      clientSystem: client.system / 1e6,
      api: apiSeconds,
      apiSystem,
      postgres,
      client: clientSeconds,
      rest: Math.max(0, machine - apiSeconds - postgres - clientSeconds),
      machine,
    };
  };
}

interface Target {
  name: string;
  kind: 'ceiling' | 'read';
  url: string;
  token?: string;
  p99TargetMs?: number;
  /**
   * Paths requested in turn instead of `url`'s, so that no path comes again before all the others
   * have: with more paths than a process keeps, none is answered from memory.
   */
  paths?: string[];
  /** Writes sent through the same `vigil serve` while the read runs, one at a time at this rate. */
  writesBeside?: { perSecond: number; write: () => Promise<unknown> };
}

interface Measurement {
  name: string;
  kind: 'ceiling' | 'read';
  path: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  ratioToDbCeiling: number | null;
  /** Of the reads of pages in turn: the ratio to ceiling (c), the same pages' stored bodies by id. */
  ratioToPageCeiling: number | null;
  p99TargetMs: number | null;
  meetsTarget: boolean | null;
  peakServeRssMb: number | null;
  /** Bytes received per answer, headers included (the client's work grows with them). */
  bytesPerAnswer: number;
  /** Writes answered per second beside the read (null: none were sent). */
  writesPerSecond: number | null;
  /**
   * CPU microseconds per answered request (see {@link cpuMeter}): the answering process,
   * PostgreSQL's backends, the client, and the rest of the machine's busy time.
   */
  cpuMicrosPerRequest: { api: number; postgres: number; client: number; rest: number };
  /** The answering process's share of its CPU time spent in the kernel (system time). */
  apiSystemShare: number | null;
  /** The same share of the client's (this script's) CPU time. */
  clientSystemShare: number | null;
  /** Share of all CPUs' time that was busy during the run. */
  machineBusyShare: number;
}

/**
 * Sends `write` at `perSecond` (one at a time; a slow write delays the next) until stopped.
 * Resolves with the writes answered; a failed write fails the run.
 */
function writeBeside(perSecond: number, write: () => Promise<unknown>): { stop(): Promise<number> } {
  let stopped = false;
  let done = 0;
  const loop = (async () => {
    const every = 1000 / perSecond;
    for (let next = performance.now(); !stopped; ) {
      await write();
      done += 1;
      next += every;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return done;
    },
  };
}

function cannon(target: Target, duration = DURATION): Promise<autocannon.Result> {
  const options: autocannon.Options = {
    url: target.url,
    connections: CONNECTIONS,
    duration,
    headers: target.token ? { authorization: `Bearer ${target.token}` } : {},
  };
  const paths = target.paths;
  if (!paths) return autocannon(options);
  // One counter for all connections and runs of the target (autocannon resets a connection's
  // context after each request when it has one request to loop over): a path comes again only
  // after all the others, the warm-up included.
  return autocannon({
    ...options,
    requests: [
      {
        setupRequest: (request) => {
          const sent = pathsSent.get(target) ?? 0;
          pathsSent.set(target, sent + 1);
          return { ...request, path: paths[sent % paths.length] as string };
        },
      },
    ],
  });
}

/** Requests made so far of each target with `paths`. */
const pathsSent = new WeakMap<Target, number>();

/** The metrics token the bench's `vigil serve` is started with (`/metrics` answers no one else). */
const METRICS_TOKEN = randomBytes(24).toString('hex');

async function call(base: string, method: string, url: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Rows the reads list besides the findings: company users, an audit log, reports, one scan. */
async function addReadFixtures(run: (text: string) => Promise<unknown>, repositories: number): Promise<void> {
  await run(
    `insert into users (id, username, name) values (md5('persona-manager')::uuid, 'bench_manager', 'Manager')`,
  );
  await run(`insert into company_members (company_id, user_id, role, joined_at)
    values (md5('c1')::uuid, md5('persona-manager')::uuid, 'manager', now())`);
  await run(`insert into company_members (company_id, user_id, role, joined_at)
    select md5('c1')::uuid, md5('u'||g)::uuid, 'member', now() - g * interval '1 hour' from generate_series(1, 60) g`);
  await run(`insert into audit_log (company_id, action, target_user_id, performed_by, details, created_at)
    select md5('c1')::uuid, (array['user_invited','user_disabled','user_reenabled','company_role_changed'])[g % 4 + 1],
      md5('u'||(g % 60 + 1))::uuid, md5('persona-manager')::uuid, jsonb_build_object('n', g), now() - g * interval '1 minute'
    from generate_series(1, 500) g`);
  await run(`insert into reports (company_id, repository_id, is_private, project_title, client_name, description, created_at, published_at)
    select md5('c'||(g % 10 + 1))::uuid, md5('r'||(g % ${repositories} + 1))::uuid, g % 3 <> 0, 'Audit of bench-repo-'||g, 'Bench company '||(g % 10 + 1),
      'Engagement report '||g, now() - g * interval '1 day', case when g % 4 <> 0 then now() - g * interval '1 day' end
    from generate_series(1, 120) g`);
  await run(
    `insert into workspaces (id, company_id, name) values (md5('ws1')::uuid, md5('c1')::uuid, 'bench')`,
  );
  await run(`insert into scans (id, company_id, workspace_id, type, status, sources, cost, files_total, files_done, findings_count, started_at, completed_at)
    values (md5('scan1')::uuid, md5('c1')::uuid, md5('ws1')::uuid, 'standard', 'completed', '[]'::jsonb, 2, 120, 120, 14, now() - interval '5 minutes', now())`);
  await run('analyze');
}

interface BackendResult {
  backend: 'postgres' | 'embedded';
  measurements: Measurement[];
  peakServeRssMb: number;
  serveRssAtStartMb: number;
  idleStartRssMb: number | null;
  profile: string | null;
  /** Seconds after `vigil serve` started when the load on it began (see bench/cpuprofile-summary.ts). */
  profileLoadFromSeconds: number | null;
}

async function benchBackend(backend: 'postgres' | 'embedded'): Promise<BackendResult> {
  log(`--- backend: ${backend}`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-bench-api-'));
  await chmod(work, 0o755); // as root the embedded server runs as "postgres"
  const dataDir = path.join(work, 'data');
  let databaseUrl: string;
  let releaseEmbedded: (() => Promise<void>) | null = null;
  if (backend === 'postgres') {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${DB_NAME} with (force)`);
    await admin.query(`create database ${DB_NAME}`);
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${DB_NAME}`;
    databaseUrl = url.toString();
  } else {
    const server = await timed('embedded server started', () => acquireEmbeddedServer({ dataDir }));
    databaseUrl = server.url;
    releaseEmbedded = () => server.release();
  }
  const migrating = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 2 });
  await timed('migrations applied', () => migrateDatabase(migrating));
  await migrating.close();

  const port = await freePort();
  const adminToken = `vgl_u_${randomBytes(20).toString('hex')}`;
  const env: Record<string, string> = {
    ...(backend === 'postgres' ? { DATABASE_URL: databaseUrl } : {}),
    VIGIL_DATA_DIR: dataDir,
    VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
    VIGIL_ADMIN_TOKEN: adminToken,
    VIGIL_RATE_LIMIT_PER_MINUTE: '100000000',
    VIGIL_RATE_LIMIT_BURST: '100000000',
    PORT: String(port),
    HOST: '127.0.0.1',
    VIGIL_METRICS_TOKEN: METRICS_TOKEN,
    LOG_LEVEL: 'warn',
  };
  const profileDir = path.join(root, 'bench', 'results', 'profiles');
  if (PROFILE) await mkdir(profileDir, { recursive: true });
  const serveArgs = [
    ...SERVE_NODE_ARGS,
    ...(PROFILE
      ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `serve-${backend}.cpuprofile`]
      : []),
    'bin/vigil.js',
    'serve',
  ];
  const serve = spawnNode(serveArgs, env);
  if (SERVE_LOG) {
    const out = createWriteStream(SERVE_LOG, { flags: 'a' });
    serve.child.stdout?.pipe(out);
    serve.child.stderr?.pipe(out);
  }
  const serveStartedAt = performance.now();
  const base = `http://127.0.0.1:${port}`;
  await timed('vigil serve answers /healthz', () => waitFor(`${base}/healthz`, serve));
  // The platform admin of VIGIL_ADMIN_TOKEN is created on the first start of an empty database:
  // the data set comes after it.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const run = (text: string, values?: unknown[]) => pool.query(text, values);
  const db: Db = drizzle({ client: pool, schema });
  await generateFindingsDataSet({ run, db, findings: FINDINGS, repositories: REPOSITORIES, log, timed });
  await addReadFixtures(run, REPOSITORIES);
  const ids = (
    await run(`select md5('c1')::uuid as company, md5('persona-member')::uuid as member,
      md5('persona-manager')::uuid as manager, md5('scan1')::uuid as scan,
      md5('r1')::uuid as repository, md5('f1')::uuid as finding,
      md5('r11')::uuid as "otherRepository", md5('f11')::uuid as "otherFinding",
      (select user_id from repository_members where repository_id = md5('r11')::uuid and role = 'judge'
        limit 1) as "otherJudge"`)
  ).rows[0] as Record<string, string>;

  const worker = spawnNode(['bin/vigil.js', 'worker'], { ...env, PORT: '0' });

  // Credentials through the API, as an operator would make them.
  const serviceKey = (
    await call(base, 'POST', `/api/v0/companies/${ids.company}/service-keys`, adminToken, { name: 'bench' })
  ).key as string;
  await call(base, 'POST', `/api/v0/admin/companies/${ids.company}/credits`, adminToken, { amount: 1000 });
  const memberToken = (await call(base, 'POST', `/api/v0/admin/users/${ids.member}/tokens`, adminToken, {}))
    .token as string;
  const managerToken = (await call(base, 'POST', `/api/v0/admin/users/${ids.manager}/tokens`, adminToken, {}))
    .token as string;
  const otherJudgeToken = (
    await call(base, 'POST', `/api/v0/admin/users/${ids.otherJudge}/tokens`, adminToken, {})
  ).token as string;
  const credits = await call(base, 'GET', '/api/scanner/v1/credits', serviceKey);

  const ceiling = spawnNode(['--import', 'tsx', 'bench/api-ceiling.ts'], {
    DATABASE_URL: databaseUrl,
    BENCH_BODY: JSON.stringify(credits),
    BENCH_POOL_SIZE: '10',
  });
  const ceilingPort = await new Promise<number>((resolve, reject) => {
    ceiling.child.stdout?.on('data', (chunk: Buffer) => {
      const match = /"port":(\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    ceiling.child.once('exit', () => reject(new Error(`ceiling server exited: ${ceiling.output.join('')}`)));
  });
  const ceilingBase = `http://127.0.0.1:${ceilingPort}`;
  const backendPids = async () =>
    (
      await run(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
    ).rows.map((r) => Number(r.pid));

  // The member's pages one after another (their cursors), in several orders when one has too few,
  // for the read of pages nothing keeps.
  // Each page's finding ids too, for the ceiling (c) of the same pages.
  const pagePaths: string[] = [];
  const pageIdPaths: string[] = [];
  for (const order of PAGE_ORDERS) {
    for (let next: string | null = ''; next !== null && pagePaths.length < PAGES_IN_TURN; ) {
      const path: string = `/api/v0/repositories/all-findings?limit=20&order_by=${order}${next ? `&next=${encodeURIComponent(next)}` : ''}`;
      pagePaths.push(path);
      const page = (await call(base, 'GET', path, memberToken)) as {
        findings: Array<{ id: string }>;
        nextValue: string | null;
      };
      pageIdPaths.push(`/page?ids=${page.findings.map((f) => f.id).join(',')}`);
      next = page.nextValue;
    }
  }

  /** The member's all-findings page, read while `write` is sent 10 times a second. */
  const pageBeside = (writes: string, write: () => Promise<unknown>): Target => ({
    name: `all-findings limit=20, ${writes} beside`,
    kind: 'read',
    url: `${base}/api/v0/repositories/all-findings?limit=20`,
    token: memberToken,
    p99TargetMs: TARGET_ALL_FINDINGS_P99_MS,
    writesBeside: { perSecond: 10, write },
  });
  const targets: Target[] = [
    { name: '(a) bare Fastify route', kind: 'ceiling', url: `${ceilingBase}/bare` },
    { name: '(b) + select 1 on a pool', kind: 'ceiling', url: `${ceilingBase}/db` },
    { name: 'getScan', kind: 'read', url: `${base}/api/scanner/v1/scans/${ids.scan}`, token: serviceKey },
    { name: 'getCreditBalances', kind: 'read', url: `${base}/api/scanner/v1/credits`, token: serviceKey },
    {
      name: 'all-findings limit=20',
      kind: 'read',
      url: `${base}/api/v0/repositories/all-findings?limit=20`,
      token: memberToken,
      p99TargetMs: TARGET_ALL_FINDINGS_P99_MS,
    },
    {
      name: `all-findings limit=20, ${pagePaths.length} pages in turn`,
      kind: 'read',
      url: `${base}${pagePaths[0]}`,
      paths: pagePaths,
      token: memberToken,
      p99TargetMs: TARGET_ALL_FINDINGS_P99_MS,
    },
    // The least a page from the database costs: the same pages' stored bodies by their ids.
    { name: PAGE_CEILING, kind: 'ceiling', url: `${ceilingBase}${pageIdPaths[0]}`, paths: pageIdPaths },
    // The same page again, with writes sent through the same `vigil serve` beside it.
    pageBeside('10 credit grants/s', () =>
      call(base, 'POST', `/api/v0/admin/companies/${ids.company}/credits`, adminToken, { amount: 1 }),
    ),
    // Another user (the company's manager) opens a finding's comments: its read marker moves.
    pageBeside('10 comment reads/s', () =>
      call(
        base,
        'GET',
        `/api/v0/repositories/${ids.repository}/findings/${ids.finding}/comments`,
        managerToken,
      ),
    ),
    // A judge of another company's repository comments on one of its findings.
    pageBeside('10 comments/s in another company', () =>
      call(
        base,
        'POST',
        `/api/v0/repositories/${ids.otherRepository}/findings/${ids.otherFinding}/comment`,
        otherJudgeToken,
        { content: 'Confirmed on the latest commit.' },
      ),
    ),
    {
      name: 'all-findings 3 filters',
      kind: 'read',
      url: `${base}/api/v0/repositories/all-findings?limit=20&status=confirmed,acknowledged&severity=high,critical&label=label-1`,
      token: memberToken,
      p99TargetMs: TARGET_ALL_FINDINGS_P99_MS,
    },
    {
      name: 'company users',
      kind: 'read',
      url: `${base}/api/v0/companies/${ids.company}/users`,
      token: managerToken,
    },
    { name: 'reports', kind: 'read', url: `${base}/api/v0/reports`, token: memberToken },
    {
      name: 'audit log',
      kind: 'read',
      url: `${base}/api/v0/companies/${ids.company}/audit-log`,
      token: managerToken,
    },
  ];
  const selected = targets.filter(
    (t) => t.kind === 'ceiling' || ONLY.split(',').some((part) => t.name.includes(part)),
  );
  // (b) once more after the reads: the ratios are to the higher of its two measurements, so that
  // a ceiling depressed by the moment (PostgreSQL writing out the freshly loaded data set, say)
  // does not flatter the reads.
  selected.push({ name: DB_CEILING_AGAIN, kind: 'ceiling', url: `${ceilingBase}/db` });
  // Every read must answer 200 before it is measured: a fast error is not a result.
  for (const target of selected) {
    const res = await fetch(target.url, {
      headers: target.token ? { authorization: `Bearer ${target.token}` } : {},
    });
    if (res.status !== 200) throw new Error(`${target.name}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }

  let profileLoadFromSeconds: number | null = null;
  const serveRssAtStartMb = (rssKb(serve.child.pid) ?? 0) / 1024;
  const overall = rssSampler(serve.child.pid);
  const measurements: Measurement[] = [];
  for (const target of selected) {
    // A short warm-up lets the JIT, the pools and the caches settle.
    await cannon(target, 2);
    if (target.kind === 'read' && profileLoadFromSeconds === null) {
      profileLoadFromSeconds = Math.floor((performance.now() - serveStartedAt) / 1000);
    }
    const sampler = rssSampler(serve.child.pid);
    const cpuUsed = await cpuMeter(
      target.kind === 'ceiling' ? ceiling.child.pid : serve.child.pid,
      backendPids,
    );
    const startedAt = performance.now();
    const writer = target.writesBeside
      ? writeBeside(target.writesBeside.perSecond, target.writesBeside.write)
      : null;
    const result = await cannon(target);
    const writes = writer ? await writer.stop() : null;
    const cpu = await cpuUsed();
    const runSeconds = (performance.now() - startedAt) / 1000;
    const perRequest = (seconds: number) =>
      result.requests.total > 0 ? Math.round((seconds * 1e6) / result.requests.total) : 0;
    const peak = sampler.stop();
    measurements.push({
      name: target.name,
      kind: target.kind,
      path: new URL(target.url).pathname + new URL(target.url).search,
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      ratioToDbCeiling: null,
      ratioToPageCeiling: null,
      p99TargetMs: target.kind === 'read' ? (target.p99TargetMs ?? TARGET_P99_MS) : null,
      meetsTarget: null,
      peakServeRssMb: target.kind === 'read' ? Math.round(peak / 1024) : null,
      bytesPerAnswer:
        result.requests.average > 0 ? Math.round(result.throughput.average / result.requests.average) : 0,
      writesPerSecond: writes === null ? null : Number((writes / DURATION).toFixed(1)),
      cpuMicrosPerRequest: {
        api: perRequest(cpu.api),
        postgres: perRequest(cpu.postgres),
        client: perRequest(cpu.client),
        rest: perRequest(cpu.rest),
      },
      apiSystemShare: cpu.api > 0 ? Number((cpu.apiSystem / cpu.api).toFixed(2)) : null,
      clientSystemShare: cpu.client > 0 ? Number((cpu.clientSystem / cpu.client).toFixed(2)) : null,
      machineBusyShare: Number((cpu.machine / (runSeconds * os.cpus().length)).toFixed(3)),
    });
    const m = measurements[measurements.length - 1]!;
    const heap = process.memoryUsage();
    log(
      `${target.name}: ${m.requestsPerSecond} req/s, p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, non-2xx ${m.non2xx}; client heap ${Math.round(heap.heapUsed / 1048576)} MB, RSS ${Math.round(heap.rss / 1048576)} MB`,
    );
  }
  const peakServeRssMb = Math.round(overall.stop() / 1024);
  const dbCeiling = Math.max(...measurements.filter((m) => m.path === '/db').map((m) => m.requestsPerSecond));
  const pageCeiling = measurements.find((m) => m.name === PAGE_CEILING)?.requestsPerSecond;
  for (const m of measurements) {
    m.ratioToDbCeiling = Number((m.requestsPerSecond / dbCeiling).toFixed(3));
    if (m.kind === 'read' && pageCeiling && m.name.includes('pages in turn'))
      m.ratioToPageCeiling = Number((m.requestsPerSecond / pageCeiling).toFixed(3));
    if (m.kind === 'read') {
      m.meetsTarget =
        m.non2xx === 0 &&
        m.errors === 0 &&
        m.p99Ms <= (m.p99TargetMs ?? TARGET_P99_MS) &&
        m.ratioToDbCeiling >= TARGET_RATIO;
    }
  }

  await stopProcess(ceiling);
  await stopProcess(worker);
  await stopProcess(serve);

  let idleStartRssMb: number | null = null;
  if (backend === 'embedded') {
    // An idle `vigil start` (API and worker in one process) on the same data folder.
    const start = spawnNode(['bin/vigil.js', 'start'], env);
    await waitFor(`${base}/healthz`, start);
    await sleep(10_000);
    idleStartRssMb = Math.round((rssKb(start.child.pid) ?? 0) / 1024);
    log(`idle vigil start: VmRSS ${idleStartRssMb} MB`);
    await stopProcess(start);
  }

  await pool.end();
  if (backend === 'postgres' && KEEP) {
    log(`kept database ${DB_NAME}; serve it with:`);
    log(
      `  DATABASE_URL=${databaseUrl} VIGIL_SECRET_KEY=${env.VIGIL_SECRET_KEY} VIGIL_RATE_LIMIT_PER_MINUTE=100000000 VIGIL_RATE_LIMIT_BURST=100000000 LOG_LEVEL=warn node bin/vigil.js serve`,
    );
    for (const target of targets)
      if (target.kind === 'read')
        log(`  ${target.name}: ${new URL(target.url).pathname}${new URL(target.url).search} ${target.token}`);
  } else if (backend === 'postgres') {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${DB_NAME} with (force)`);
    await admin.end();
  }
  await releaseEmbedded?.();
  await rm(work, { recursive: true, force: true });
  return {
    backend,
    measurements,
    peakServeRssMb,
    serveRssAtStartMb: Math.round(serveRssAtStartMb),
    idleStartRssMb,
    profile: PROFILE ? path.join('bench', 'results', 'profiles', `serve-${backend}.cpuprofile`) : null,
    profileLoadFromSeconds: PROFILE ? profileLoadFromSeconds : null,
  };
}

const loadBefore = os.loadavg();
const backends: BackendResult[] = [];
for (const backend of BACKENDS) backends.push(await benchBackend(backend));
const loadAfter = os.loadavg();

for (const b of backends) {
  process.stdout.write(
    `\n${b.backend}: ${FINDINGS.toLocaleString('en')} findings, ${CONNECTIONS} connections, ${DURATION} s each; serve RSS ${b.serveRssAtStartMb} MB at start, peak ${b.peakServeRssMb} MB${b.idleStartRssMb !== null ? `; idle vigil start ${b.idleStartRssMb} MB` : ''}\n`,
  );
  const header = [
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'ratio to (b)',
    'ratio to (c)',
    'p99 target',
    'meets target',
    'bytes/answer',
    'writes/s',
    'CPU µs/req: API',
    'API in kernel',
    'PostgreSQL',
    'client',
    'rest',
    'busy',
  ];
  const rows = b.measurements.map((m) => [
    m.name,
    String(m.requestsPerSecond),
    String(m.p50Ms),
    String(m.p99Ms),
    m.ratioToDbCeiling === null ? '' : `${Math.round(m.ratioToDbCeiling * 100)}%`,
    m.ratioToPageCeiling === null ? '' : `${Math.round(m.ratioToPageCeiling * 100)}%`,
    m.p99TargetMs === null ? '' : `≤ ${m.p99TargetMs} ms`,
    m.meetsTarget === null ? '' : m.meetsTarget ? 'yes' : 'NO',
    String(m.bytesPerAnswer),
    m.writesPerSecond === null ? '' : String(m.writesPerSecond),
    String(m.cpuMicrosPerRequest.api),
    m.apiSystemShare === null ? '' : `${Math.round(m.apiSystemShare * 100)}%`,
    String(m.cpuMicrosPerRequest.postgres),
    String(m.cpuMicrosPerRequest.client),
    String(m.cpuMicrosPerRequest.rest),
    `${Math.round(m.machineBusyShare * 100)}%`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  for (const row of [header, widths.map((w) => '-'.repeat(w)), ...rows]) {
    process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}\n`);
  }
}
process.stdout.write(
  `\nload average before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}, after ${loadAfter
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} CPUs (other processes share them)\n`,
);

const resultsPath = benchResultsPath('api');
await writeFile(
  resultsPath,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      findings: FINDINGS,
      repositories: REPOSITORIES,
      connections: CONNECTIONS,
      durationSeconds: DURATION,
      targets: {
        ratioToDbCeiling: TARGET_RATIO,
        p99Ms: TARGET_P99_MS,
        allFindingsP99Ms: TARGET_ALL_FINDINGS_P99_MS,
      },
      cpus: os.cpus().length,
      node: process.version,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadAfter,
      backends,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${path.relative(root, resultsPath)}`);
if (backends.some((b) => b.measurements.some((m) => m.meetsTarget === false))) {
  console.error('bench:api: a read missed its target');
  process.exitCode = 1;
}
