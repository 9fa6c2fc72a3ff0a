/**
 * Real traffic: `npm run bench:api -- --traffic [--findings N] [--duration S] [--capture N]
 * [--users-per-role N] [--backends postgres,embedded] [--keep] [--reuse]`.
 *
 * For each backend — a database `vigil_bench_traffic` created (and dropped) on the PostgreSQL
 * server of BENCH_DATABASE_URL (default the local one), and the embedded server in a temporary
 * VIGIL_DATA_DIR — it migrates, generates the findings data set of bench/findings-data.ts over 20
 * companies of 10 repositories (default 1,000,000 findings), adds `--users-per-role` users (default
 * 200) of every role (company manager and member; repository client, reviewer, judge, triager,
 * admin, each on one repository; the reviewers file some of their repository's findings), and
 * starts `vigil serve` and `vigil worker`. `--keep` leaves the PostgreSQL database in place and
 * `--reuse` runs on it again (migrations apply, the data and earlier runs' writes stay).
 *
 * Each virtual user reads its own mix, one request at a time from a seeded random source: the
 * all-findings listing with random filters, orders and page sizes, walking its cursor to a random
 * depth; a finding of a page it read, that finding's comments, the users (company users, or the
 * repository's members), reports, the audit log (a manager's company log, or the repository's log),
 * its company's credits and a scan's status (with the company's service key); and 10% writes
 * (comments, status changes along the transition table, label edits on findings it read). 20
 * connections send the next request of a virtual user picked at random as soon as they are free,
 * for `--duration` seconds (default 30) after a 5 s warm-up.
 *
 * Ceiling (c): the same operations' SQL alone. Before the measured run, `--capture` requests
 * (default 600) of the same mix are answered one at a time by the same application in this process
 * (`app.inject`) while every statement it sends is recorded per request; (c) replays those
 * statements, request after request, on a pg pool of 20 connections (each request's statements in
 * order on one connection, each text prepared once per connection) for the same duration, in the
 * same run. A replayed write that fails (a label added twice, say) is rolled back and counted.
 *
 * Prints p50/p99 per operation beside the same operation's SQL alone in (c), and the throughput
 * beside (c)'s; writes
 * bench/results/api-traffic.json (BENCH_RESULTS: an absolute path elsewhere, see results-path.ts).
 * Targets: p99 ≤ 50 ms for every operation and throughput ≥ 50% of (c). Exits 1 when a target is
 * missed.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import {
  canTransition,
  type FindingStatus,
  type RepositoryRole,
  statusChangeNeedsReason,
} from '../src/access/rules.ts';
import { buildApp } from '../src/app.ts';
import { hashSecret } from '../src/auth/credentials.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer, createLogger } from '../src/container.ts';
import { type Db, migrateDatabase, openDatabase, sessionConnectionConfig } from '../src/db/client.ts';
import { acquireEmbeddedServer } from '../src/db/embedded-server.ts';
import * as schema from '../src/db/schema/index.ts';
import { findingStatuses, severities } from '../src/db/schema/index.ts';
import { FINDING_ORDERS } from '../src/platform/findings/findings.schemas.ts';
import { freePort, repositoryRoot, sleep, spawnNode, stopProcess, waitFor } from './bench-processes.ts';
import { generateFindingsDataSet } from './findings-data.ts';
import { benchResultsPath } from './results-path.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : fallback;
};
const FINDINGS = Number(option('findings', '1000000'));
const COMPANIES = 20;
const REPOSITORIES = COMPANIES * 10;
const USERS_PER_ROLE = Number(option('users-per-role', '200'));
const DURATION = Number(option('duration', '30'));
const WARM_UP = 5;
const CAPTURE = Number(option('capture', '600'));
const CONNECTIONS = 20;
const WRITE_SHARE = 0.1;
const BACKENDS = option('backends', 'postgres,embedded').split(',') as Array<'postgres' | 'embedded'>;
const KEEP = args.includes('--keep');
/** Reuses the database a `--keep` run left (postgres only): migrations apply, the data stays. */
const REUSE = args.includes('--reuse');
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = process.env.BENCH_DB_NAME ?? 'vigil_bench_traffic';
const TARGET_P99_MS = 50;
const TARGET_RATIO = 0.5;

const log = (message: string) =>
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  log(`${label} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  return result;
}

/** A small seeded random source (mulberry32): the same seed, the same traffic. */
function randomSource(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(values: readonly T[]): T => values[int(values.length)] as T;
  const some = <T>(values: readonly T[], most: number): T[] => {
    const chosen = new Set<T>();
    const count = 1 + int(most);
    while (chosen.size < count) chosen.add(pick(values));
    return [...chosen];
  };
  return { next, int, pick, some };
}
type Random = ReturnType<typeof randomSource>;

const ROLES = ['manager', 'member', 'client', 'reviewer', 'judge', 'triager', 'admin'] as const;
type Role = (typeof ROLES)[number];
const OPERATIONS = [
  'all-findings',
  'finding',
  'comments',
  'users',
  'reports',
  'audit log',
  'credits',
  'scan status',
  'comment (write)',
  'status change (write)',
  'label edit (write)',
] as const;
type Operation = (typeof OPERATIONS)[number];
/** Shares of the reads (90% of the traffic together). */
const READ_WEIGHTS: Array<[Operation, number]> = [
  ['all-findings', 45],
  ['finding', 15],
  ['comments', 12],
  ['users', 6],
  ['reports', 6],
  ['audit log', 6],
  ['credits', 5],
  ['scan status', 5],
];
const WRITE_WEIGHTS: Array<[Operation, number]> = [
  ['comment (write)', 4],
  ['status change (write)', 3],
  ['label edit (write)', 3],
];

interface SeenFinding {
  id: string;
  repositoryId: string;
  status: FindingStatus;
  authorId: string | null;
  labelIds: string[];
}

interface VirtualUser {
  id: string;
  role: Role;
  token: string;
  companyId: string;
  /** The repository of a repository role (company users: null). */
  repositoryId: string | null;
  serviceKey: string;
  scanId: string;
  /** An all-findings walk under way: its query and the cursor of the next page. */
  walk: { query: string; next: string; pagesLeft: number } | null;
  /** Findings of the last page read. */
  seen: SeenFinding[];
}

interface Request {
  operation: Operation;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  path: string;
  token: string;
  body?: unknown;
  /** Learns from the answer (a page's cursor and findings, a finding's new status). */
  answered?: (status: number, body: unknown) => void;
}

interface World {
  /** Repository id → its labels (reviewers may use only those with reviewerUse). */
  labels: Map<string, Array<{ id: string; reviewerUse: boolean; name: string }>>;
  /** Company id → its repository ids. */
  repositoriesOf: Map<string, string[]>;
}

const weighted = (random: Random, weights: Array<[Operation, number]>): Operation => {
  const total = weights.reduce((s, [, w]) => s + w, 0);
  let at = random.next() * total;
  for (const [operation, w] of weights) {
    at -= w;
    if (at < 0) return operation;
  }
  return weights[0]![0];
};

/** The effective repository role of a virtual user on its findings (company users act as the client). */
const effectiveRole = (user: VirtualUser): RepositoryRole =>
  user.role === 'manager' || user.role === 'member' ? 'client' : user.role;

function allFindingsQuery(user: VirtualUser, world: World, random: Random): string {
  const params = new URLSearchParams();
  params.set('order_by', random.pick(FINDING_ORDERS));
  params.set('limit', String(random.pick([10, 20, 20, 20, 50])));
  if (random.next() < 0.25) params.set('status', random.some(findingStatuses, 3).join(','));
  if (random.next() < 0.25) params.set('severity', random.some(severities, 2).join(','));
  // `label` and `unlabeled` exclude each other.
  if (random.next() < 0.1) params.set('label', `label-${random.int(5)}`);
  else if (random.next() < 0.05) params.set('unlabeled', 'true');
  if (random.next() < 0.15) {
    const repositories = user.repositoryId
      ? [user.repositoryId]
      : (world.repositoriesOf.get(user.companyId) ?? []);
    params.set('repositories', random.pick(repositories));
  }
  if (random.next() < 0.05) params.set('q', random.pick(['reentrancy', 'oracle', 'overflow', '12']));
  if (random.next() < 0.1)
    params.set('filter_for', random.pick(['client_recommended', 'with_duplicates', 'require_review']));
  if (random.next() < 0.05) params.set('with_unread_comments', 'true');
  return `/api/v0/repositories/all-findings?${params}`;
}

function seenOf(finding: {
  id: string;
  repository: { id: string };
  status: FindingStatus;
  createdBy: { id: string } | null;
  labels: Array<{ id: string }>;
}): SeenFinding {
  return {
    id: finding.id,
    repositoryId: finding.repository.id,
    status: finding.status,
    authorId: finding.createdBy?.id ?? null,
    labelIds: finding.labels.map((l) => l.id),
  };
}

function listingRequest(user: VirtualUser, world: World, random: Random): Request {
  let path: string;
  if (user.walk && user.walk.pagesLeft > 0) {
    path = `${user.walk.query}&next=${encodeURIComponent(user.walk.next)}`;
    user.walk.pagesLeft -= 1;
  } else {
    const query = allFindingsQuery(user, world, random);
    path = query;
    // Most walks stop after a page or two; some go 20 pages deep.
    const depth = Math.floor(random.next() ** 2 * 20);
    user.walk = { query, next: '', pagesLeft: depth };
  }
  return {
    operation: 'all-findings',
    method: 'GET',
    path,
    token: user.token,
    answered: (status, body) => {
      if (status !== 200 || !user.walk) return;
      const page = body as { findings: Parameters<typeof seenOf>[0][]; nextValue: string | null };
      if (page.nextValue) user.walk.next = page.nextValue;
      else user.walk.pagesLeft = 0;
      if (page.findings.length > 0) user.seen = page.findings.map(seenOf);
    },
  };
}

/** The next request of a virtual user: its own mix, by its role. */
function nextRequest(user: VirtualUser, world: World, random: Random): Request {
  const write = random.next() < WRITE_SHARE;
  const operation = weighted(random, write ? WRITE_WEIGHTS : READ_WEIGHTS);
  const finding = user.seen.length > 0 ? random.pick(user.seen) : null;
  const base = finding ? `/api/v0/repositories/${finding.repositoryId}/findings/${finding.id}` : null;
  const get = (op: Operation, path: string, token = user.token): Request => ({
    operation: op,
    method: 'GET',
    path,
    token,
  });
  switch (operation) {
    case 'finding':
      if (base) return get(operation, base);
      break;
    case 'comments':
      if (base) return get(operation, `${base}/comments`);
      break;
    case 'users':
      // Company users list their company's users; repository admins and clients its members;
      // the others read a profile (their own, or that of a finding's author).
      if (user.role === 'manager' || user.role === 'member')
        return get(operation, `/api/v0/companies/${user.companyId}/users`);
      if (user.role === 'admin' || user.role === 'client')
        return get(operation, `/api/v0/repositories/${user.repositoryId}/members`);
      return get(operation, `/api/v0/users/${finding?.authorId ?? user.id}/profile`);
    case 'reports':
      return get(operation, '/api/v0/reports');
    case 'audit log':
      // Managers read their company's audit log, repository admins and clients its change log;
      // the others may read neither.
      if (user.role === 'manager') return get(operation, `/api/v0/companies/${user.companyId}/audit-log`);
      if (user.role === 'admin' || user.role === 'client')
        return get(operation, `/api/v0/repositories/${user.repositoryId}/log`);
      break;
    case 'credits':
      return get(operation, '/api/scanner/v1/credits', user.serviceKey);
    case 'scan status':
      return get(operation, `/api/scanner/v1/scans/${user.scanId}`, user.serviceKey);
    case 'comment (write)':
      if (base)
        return {
          operation,
          method: 'POST',
          path: `${base}/comment`,
          token: user.token,
          body: { content: `Traffic comment ${random.int(1e9)}`, visibility: 'public' },
        };
      break;
    case 'status change (write)': {
      if (!finding || !base) break;
      const to = findingStatuses.filter((s) =>
        canTransition(effectiveRole(user), finding.status, s, finding.authorId === user.id),
      );
      if (to.length === 0) break;
      const status = random.pick(to);
      return {
        operation,
        method: 'PUT',
        path: `${base}/status`,
        token: user.token,
        // A person states why when the change needs it (rejecting, disputing, reopening …).
        body: statusChangeNeedsReason(finding.status, status)
          ? { status, reason: `Traffic reason ${random.int(1e9)}` }
          : { status },
        answered: (code) => {
          if (code === 200) finding.status = status;
        },
      };
    }
    case 'label edit (write)': {
      if (!finding || !base) break;
      const usable = (world.labels.get(finding.repositoryId) ?? []).filter(
        (l) => user.role !== 'reviewer' || l.reviewerUse,
      );
      if (usable.length === 0) break;
      const label = random.pick(usable);
      const has = finding.labelIds.includes(label.id);
      return {
        operation,
        method: 'PATCH',
        path: `${base}/labels`,
        token: user.token,
        body: has ? { remove: [label.id] } : { add: [label.id] },
        answered: (code) => {
          if (code !== 200) return;
          finding.labelIds = has
            ? finding.labelIds.filter((id) => id !== label.id)
            : [...finding.labelIds, label.id];
        },
      };
    }
    default:
      break;
  }
  // No finding read yet (or no write it may make on it): the listing, which gives it some.
  return listingRequest(user, world, random);
}

/** The traffic's data beside the findings: users of every role, their memberships, logs, reports, scans. */
async function addTrafficFixtures(run: (text: string) => Promise<unknown>): Promise<void> {
  const n = USERS_PER_ROLE;
  await run(`insert into users (id, username, name)
    select md5('traffic-'||role||'-'||k)::uuid, 'traffic_'||role||'_'||k, 'Traffic '||role||' '||k
    from unnest(array['${ROLES.join("','")}']) role, generate_series(1, ${n}) k`);
  await run(`insert into company_members (company_id, user_id, role, joined_at)
    select md5('c'||(k % ${COMPANIES} + 1))::uuid, md5('traffic-'||role||'-'||k)::uuid, role, now()
    from unnest(array['manager','member']) role, generate_series(1, ${n}) k`);
  await run(`insert into repository_members (repository_id, user_id, role)
    select md5('r'||((k * 7 + length(role)) % ${REPOSITORIES} + 1))::uuid, md5('traffic-'||role||'-'||k)::uuid, role
    from unnest(array['client','reviewer','judge','triager','admin']) role, generate_series(1, ${n}) k
    on conflict do nothing`);
  // The reviewers file a share of their repository's findings (a reviewer sees their own only
  // where the repository does not show all findings).
  await run(`update findings f set created_by = m.user_id
    from repository_members m
    where m.repository_id = f.repository_id and m.role = 'reviewer' and m.user_id in
      (select md5('traffic-reviewer-'||k)::uuid from generate_series(1, ${n}) k)
      and f.number % 7 = 1`);
  await run(`insert into audit_log (company_id, action, target_user_id, performed_by, details, created_at)
    select md5('c'||(g % ${COMPANIES} + 1))::uuid, (array['user_invited','user_disabled','user_reenabled','company_role_changed'])[g % 4 + 1],
      md5('u'||(g % 60 + 1))::uuid, md5('traffic-manager-'||(g % ${n} + 1))::uuid, jsonb_build_object('n', g), now() - g * interval '1 minute'
    from generate_series(1, ${COMPANIES * 200}) g`);
  await run(`insert into reports (company_id, repository_id, is_private, project_title, client_name, description, created_at, published_at)
    select md5('c'||(g % ${COMPANIES} + 1))::uuid, md5('r'||(g % ${REPOSITORIES} + 1))::uuid, g % 3 <> 0, 'Audit of bench-repo-'||g,
      'Bench company '||(g % ${COMPANIES} + 1), 'Engagement report '||g, now() - g * interval '1 day',
      case when g % 4 <> 0 then now() - g * interval '1 day' end
    from generate_series(1, ${COMPANIES * 12}) g`);
  await run(`insert into workspaces (id, company_id, name)
    select md5('ws'||c)::uuid, md5('c'||c)::uuid, 'bench' from generate_series(1, ${COMPANIES}) c`);
  await run(`insert into scans (id, company_id, workspace_id, type, status, sources, cost, files_total, files_done, findings_count, started_at, completed_at)
    select md5('scan'||c)::uuid, md5('c'||c)::uuid, md5('ws'||c)::uuid, 'standard', 'completed', '[]'::jsonb, 2, 120, 120, 14,
      now() - interval '5 minutes', now()
    from generate_series(1, ${COMPANIES}) c`);
  await run('vacuum analyze');
}

/** Runs `work` on `count` items with at most `parallel` at once. */
async function inParallel<T, R>(items: T[], parallel: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let at = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (at < items.length) {
        const i = at++;
        results[i] = await work(items[i] as T);
      }
    }),
  );
  return results;
}

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

/** Latencies of one operation, in ms, and its answers by status code. */
interface Tally {
  latencies: number[];
  statuses: Map<number, number>;
  /** The first answer of each status ≥ 400, with its request. */
  refusals: Map<number, string>;
}
const newTallies = () =>
  new Map<Operation, Tally>(
    OPERATIONS.map((o) => [o, { latencies: [], statuses: new Map(), refusals: new Map() }]),
  );
const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number);
/** p50 and p99 of latencies in milliseconds, sorted ascending. */
const percentiles = (sorted: number[]) => ({
  p50Ms: Number(quantile(sorted, 0.5).toFixed(2)),
  p99Ms: Number(quantile(sorted, 0.99).toFixed(2)),
});

/**
 * Sends the virtual users' requests over `CONNECTIONS` keep-alive connections for `seconds`:
 * each connection, when free, sends the next request of a virtual user picked at random.
 */
async function drive(
  http: HttpPool,
  users: VirtualUser[],
  world: World,
  random: Random,
  seconds: number,
): Promise<{ tallies: Map<Operation, Tally>; seconds: number }> {
  const tallies = newTallies();
  const busy = new Set<VirtualUser>();
  const started = performance.now();
  const end = started + seconds * 1000;
  // A virtual user sends one request at a time: with fewer users than connections, fewer connections.
  await Promise.all(
    Array.from({ length: Math.min(CONNECTIONS, users.length) }, async () => {
      while (performance.now() < end) {
        let user = random.pick(users);
        while (busy.has(user)) user = random.pick(users);
        busy.add(user);
        const request = nextRequest(user, world, random);
        const start = performance.now();
        const res = await http.request({
          method: request.method,
          path: request.path,
          headers: {
            authorization: `Bearer ${request.token}`,
            ...(request.body ? { 'content-type': 'application/json' } : {}),
          },
          ...(request.body ? { body: JSON.stringify(request.body) } : {}),
        });
        const text = await res.body.text();
        const tally = tallies.get(request.operation) as Tally;
        tally.latencies.push(performance.now() - start);
        tally.statuses.set(res.statusCode, (tally.statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode >= 400 && !tally.refusals.has(res.statusCode))
          tally.refusals.set(
            res.statusCode,
            `${request.method} ${request.path} (${user.role}): ${text.slice(0, 300)}`,
          );
        request.answered?.(res.statusCode, res.statusCode < 300 && text ? JSON.parse(text) : null);
        busy.delete(user);
      }
    }),
  );
  return { tallies, seconds: (performance.now() - started) / 1000 };
}

interface CapturedRequest {
  operation: Operation;
  statements: Array<{ text: string; values: unknown[] }>;
}

/**
 * Answers `count` requests of the mix one at a time by the application in this process
 * (`app.inject`) and records the statements each sends (every pg client's `query`).
 */
async function captureStatements(
  env: Record<string, string>,
  databaseUrl: string,
  users: VirtualUser[],
  world: World,
  random: Random,
  count: number,
): Promise<{ captured: CapturedRequest[]; failures: number }> {
  let recording: CapturedRequest['statements'] | null = null;
  const prototype = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const c = config as { text?: string; values?: unknown[] } | string;
    const text = typeof c === 'string' ? c : c?.text;
    // Values come in the config or as the argument after it.
    const values = (typeof c === 'object' && c?.values) || (Array.isArray(rest[0]) ? rest[0] : []);
    if (recording && typeof text === 'string' && !/^\s*(un)?listen\b/i.test(text))
      recording.push({ text, values: Array.isArray(values) ? values : [] });
    return original.call(this, config, ...rest);
  };
  const config = loadConfig({ ...process.env, ...env, DATABASE_URL: databaseUrl }, repositoryRoot);
  const container = await createContainer(
    { ...config, database: { kind: 'postgres', url: databaseUrl, poolSize: 10 } },
    { migrate: false, log: createLogger({ logLevel: 'silent' }) },
  );
  const app = await buildApp(container);
  await app.ready();
  const captured: CapturedRequest[] = [];
  let failures = 0;
  try {
    for (let i = 0; i < count; i++) {
      const user = random.pick(users);
      const request = nextRequest(user, world, random);
      const statements: CapturedRequest['statements'] = [];
      recording = statements;
      const res = await app.inject({
        method: request.method,
        url: request.path,
        headers: {
          authorization: `Bearer ${request.token}`,
          ...(request.body ? { 'content-type': 'application/json' } : {}),
        },
        ...(request.body ? { payload: JSON.stringify(request.body) } : {}),
      });
      recording = null;
      if (res.statusCode >= 300) failures += 1;
      request.answered?.(res.statusCode, res.statusCode < 300 && res.body ? res.json() : null);
      captured.push({ operation: request.operation, statements });
    }
  } finally {
    recording = null;
    await app.close();
    await container.close();
    prototype.query = original;
  }
  return { captured, failures };
}

/**
 * Ceiling (c): the captured requests' statements replayed on a pg pool of `CONNECTIONS`, each
 * request's in order on one connection, every text prepared once per connection.
 */
async function replayCeiling(
  databaseUrl: string,
  captured: CapturedRequest[],
  seconds: number,
): Promise<{
  requestsPerSecond: number;
  requests: number;
  failed: number;
  failures: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** Per operation: how long its SQL alone took, in the same replay. */
  operations: CeilingOperation[];
}> {
  // The application's session settings, so that (c) runs the same statements the same way.
  const pool = new pg.Pool({ ...sessionConnectionConfig(databaseUrl), max: CONNECTIONS });
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = `c${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  /** Failed replays by error message. */
  const failures = new Map<string, number>();
  const control = /^\s*(begin|commit|rollback|savepoint|release|set|reset|select set_config)\b/i;
  const replay = async (request: CapturedRequest, measure: boolean) => {
    const client = await pool.connect();
    try {
      for (const s of request.statements) {
        if (s.values.length === 0) await client.query(s.text);
        // A transaction's settings (`set_config($1, …)`) take their values too, unprepared.
        else if (control.test(s.text)) await client.query(s.text, s.values);
        else await client.query({ name: nameOf(s.text), text: s.text, values: s.values });
      }
      return true;
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      const message = `${(err as Error).message}`.slice(0, 200);
      // Counted as `failed` is: in the measured run only.
      if (measure) failures.set(message, (failures.get(message) ?? 0) + 1);
      return false;
    } finally {
      client.release();
    }
  };
  let at = 0;
  let failed = 0;
  const byOperation = new Map<Operation, number[]>();
  const run = async (until: number, measure: boolean) => {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const request = captured[at++ % captured.length] as CapturedRequest;
          const start = performance.now();
          const ok = await replay(request, measure);
          if (measure) {
            const own = byOperation.get(request.operation) ?? [];
            own.push(performance.now() - start);
            byOperation.set(request.operation, own);
            if (!ok) failed += 1;
          }
        }
      }),
    );
  };
  await run(performance.now() + WARM_UP * 1000, false);
  const started = performance.now();
  await run(started + seconds * 1000, true);
  const elapsed = (performance.now() - started) / 1000;
  await pool.end();
  const latencies = [...byOperation.values()].flat().sort((a, b) => a - b);
  return {
    requestsPerSecond: Math.round(latencies.length / elapsed),
    requests: latencies.length,
    failed,
    failures: Object.fromEntries(failures),
    ...percentiles(latencies),
    operations: [...byOperation].map(([operation, ms]) => ({
      operation,
      requests: ms.length,
      ...percentiles(ms.sort((a, b) => a - b)),
    })),
  };
}

/** One operation's requests in the replay of ceiling (c). */
interface CeilingOperation {
  operation: Operation;
  requests: number;
  p50Ms: number;
  p99Ms: number;
}

interface OperationResult {
  operation: Operation;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers by status code (a 409 of a concurrent status change is an answer, not an error). */
  statuses: Record<string, number>;
  /** The first answer of each refusal status, with its request. */
  refusals: Record<string, string>;
  meetsP99Target: boolean;
}

interface BackendResult {
  backend: 'postgres' | 'embedded';
  virtualUsers: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  serverErrors: number;
  operations: OperationResult[];
  ceiling: Awaited<ReturnType<typeof replayCeiling>> & {
    capturedRequests: number;
    capturedFailures: number;
    statementsPerRequest: number;
  };
  ratioToCeiling: number;
  meetsTargets: boolean;
  machineBusyShare: number;
}

/** Busy CPU seconds of the whole machine so far, all CPUs together (/proc/stat). */
async function machineBusySeconds(): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '';
  const times = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = (times[3] ?? 0) + (times[4] ?? 0);
  return (times.reduce((a, b) => a + b, 0) - idle) / 100;
}

async function benchBackend(backend: 'postgres' | 'embedded'): Promise<BackendResult> {
  log(`--- backend: ${backend}`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-bench-traffic-'));
  await chmod(work, 0o755); // as root the embedded server runs as "postgres"
  const dataDir = path.join(work, 'data');
  let databaseUrl: string;
  let releaseEmbedded: (() => Promise<void>) | null = null;
  let reused = false;
  if (backend === 'postgres') {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    reused =
      REUSE && (await admin.query('select 1 from pg_database where datname = $1', [DB_NAME])).rowCount === 1;
    if (!reused) {
      await admin.query(`drop database if exists ${DB_NAME} with (force)`);
      await admin.query(`create database ${DB_NAME}`);
    }
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
    LOG_LEVEL: 'warn',
  };
  const serve = spawnNode(['bin/vigil.js', 'serve'], env);
  const base = `http://127.0.0.1:${port}`;
  await timed('vigil serve answers /healthz', () => waitFor(`${base}/healthz`, serve));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const run = (text: string, values?: unknown[]) => pool.query(text, values);
  const db: Db = drizzle({ client: pool, schema });
  if (reused) {
    log(`reusing the data of database ${DB_NAME}`);
    // The platform admin exists already: this run's token is added to it.
    await run(
      `insert into user_tokens (user_id, name, prefix, hash, expires_at)
        select id, 'bench', $1, $2, now() + interval '1 day' from users where username = 'admin'`,
      [adminToken.slice(0, 11), hashSecret(adminToken)],
    );
  } else {
    await generateFindingsDataSet({
      run,
      db,
      findings: FINDINGS,
      repositories: REPOSITORIES,
      companies: COMPANIES,
      log,
      timed,
    });
    await timed('traffic users, logs, reports, scans', () => addTrafficFixtures(run));
  }
  const worker = spawnNode(['bin/vigil.js', 'worker'], { ...env, PORT: '0' });

  const world: World = { labels: new Map(), repositoriesOf: new Map() };
  for (const row of (
    await run('select id, repository_id as "repositoryId", reviewer_use as "reviewerUse", name from labels')
  ).rows as Array<{ id: string; repositoryId: string; reviewerUse: boolean; name: string }>) {
    const list = world.labels.get(row.repositoryId) ?? [];
    list.push(row);
    world.labels.set(row.repositoryId, list);
  }
  for (const row of (await run('select id, company_id as "companyId" from repositories')).rows as Array<{
    id: string;
    companyId: string;
  }>) {
    world.repositoriesOf.set(row.companyId, [...(world.repositoriesOf.get(row.companyId) ?? []), row.id]);
  }

  // Credentials through the API, as an operator would make them.
  const companies = (
    await run(`select c as n, md5('c'||c)::uuid as id, md5('scan'||c)::uuid as scan
      from generate_series(1, ${COMPANIES}) c`)
  ).rows as Array<{ n: number; id: string; scan: string }>;
  const keys = new Map<string, { key: string; scan: string }>();
  await timed('service keys and credits', () =>
    inParallel(companies, 4, async (c) => {
      const key = (
        await call(base, 'POST', `/api/v0/companies/${c.id}/service-keys`, adminToken, { name: 'traffic' })
      ).key as string;
      await call(base, 'POST', `/api/v0/admin/companies/${c.id}/credits`, adminToken, { amount: 1000 });
      keys.set(c.id, { key, scan: c.scan });
    }),
  );
  const people = (
    await run(`select u.id, split_part(u.username, '_', 2) as role,
        coalesce(cm.company_id, r.company_id) as "companyId", rm.repository_id as "repositoryId"
      from users u
      left join company_members cm on cm.user_id = u.id
      left join repository_members rm on rm.user_id = u.id
      left join repositories r on r.id = rm.repository_id
      where u.username like 'traffic\\_%'
      order by u.username`)
  ).rows as Array<{ id: string; role: Role; companyId: string; repositoryId: string | null }>;
  const users: VirtualUser[] = await timed(`${people.length} user tokens`, () =>
    inParallel(people, 4, async (p) => {
      const token = (await call(base, 'POST', `/api/v0/admin/users/${p.id}/tokens`, adminToken, {}))
        .token as string;
      const company = keys.get(p.companyId) as { key: string; scan: string };
      return {
        ...p,
        token,
        serviceKey: company.key,
        scanId: company.scan,
        walk: null,
        seen: [],
      };
    }),
  );

  const random = randomSource(20261127);
  const { captured, failures } = await timed(`${CAPTURE} requests captured in process`, () =>
    captureStatements(env, databaseUrl, users, world, randomSource(7), CAPTURE),
  );
  const http = new HttpPool(base, { connections: CONNECTIONS, pipelining: 1 });
  await timed('warm-up', () => drive(http, users, world, random, WARM_UP));
  const busyBefore = await machineBusySeconds();
  const measured = await timed('traffic', () => drive(http, users, world, random, DURATION));
  const busy = (await machineBusySeconds()) - busyBefore;
  await http.close();
  const ceilingRun = await timed('ceiling (c): the same SQL alone', () =>
    replayCeiling(databaseUrl, captured, DURATION),
  );

  const all: number[] = [];
  let serverErrors = 0;
  const operations: OperationResult[] = [];
  for (const [operation, tally] of measured.tallies) {
    const sorted = [...tally.latencies].sort((a, b) => a - b);
    all.push(...sorted);
    for (const [code, n] of tally.statuses) if (code >= 500) serverErrors += n;
    const { p50Ms, p99Ms } = percentiles(sorted);
    operations.push({
      operation,
      requests: sorted.length,
      requestsPerSecond: Number((sorted.length / measured.seconds).toFixed(1)),
      p50Ms,
      p99Ms,
      statuses: Object.fromEntries([...tally.statuses].sort(([a], [b]) => a - b)),
      refusals: Object.fromEntries(tally.refusals),
      meetsP99Target: p99Ms <= TARGET_P99_MS,
    });
  }
  all.sort((a, b) => a - b);
  const requestsPerSecond = Math.round(all.length / measured.seconds);
  const ratioToCeiling = Number((requestsPerSecond / ceilingRun.requestsPerSecond).toFixed(3));
  const statementsPerRequest = Number(
    (captured.reduce((s, r) => s + r.statements.length, 0) / Math.max(1, captured.length)).toFixed(2),
  );

  await stopProcess(worker);
  await stopProcess(serve);
  await pool.end();
  if (backend === 'postgres' && KEEP) {
    log(`kept database ${DB_NAME}`);
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
    virtualUsers: users.length,
    requestsPerSecond,
    ...percentiles(all),
    serverErrors,
    operations,
    ceiling: {
      ...ceilingRun,
      capturedRequests: captured.length,
      capturedFailures: failures,
      statementsPerRequest,
    },
    ratioToCeiling,
    meetsTargets:
      serverErrors === 0 && ratioToCeiling >= TARGET_RATIO && operations.every((o) => o.meetsP99Target),
    machineBusyShare: Number((busy / (measured.seconds * os.cpus().length)).toFixed(3)),
  };
}

const loadBefore = os.loadavg();
const backends: BackendResult[] = [];
for (const backend of BACKENDS) backends.push(await benchBackend(backend));
const loadAfter = os.loadavg();

for (const b of backends) {
  process.stdout.write(
    `\n${b.backend}: ${FINDINGS.toLocaleString('en')} findings in ${COMPANIES} companies, ${b.virtualUsers} virtual users, ${CONNECTIONS} connections, ${DURATION} s\n`,
  );
  const header = [
    'operation',
    'requests',
    'req/s',
    'p50 ms',
    'p99 ms',
    'p99 ≤ 50 ms',
    '(c) p50 ms',
    '(c) p99 ms',
    'answers',
  ];
  const alone = new Map(b.ceiling.operations.map((o) => [o.operation, o]));
  const rows = b.operations.map((o) => [
    o.operation,
    String(o.requests),
    String(o.requestsPerSecond),
    o.p50Ms.toFixed(1),
    o.p99Ms.toFixed(1),
    o.requests === 0 ? '' : o.meetsP99Target ? 'yes' : 'NO',
    alone.get(o.operation)?.p50Ms.toFixed(1) ?? '',
    alone.get(o.operation)?.p99Ms.toFixed(1) ?? '',
    Object.entries(o.statuses)
      .map(([code, n]) => `${code}×${n}`)
      .join(' '),
  ]);
  rows.push([
    'all operations',
    String(b.operations.reduce((s, o) => s + o.requests, 0)),
    String(b.requestsPerSecond),
    b.p50Ms.toFixed(1),
    b.p99Ms.toFixed(1),
    '',
    '',
    '',
    '',
  ]);
  rows.push([
    '(c) the same SQL alone, pg pool',
    String(b.ceiling.requests),
    String(b.ceiling.requestsPerSecond),
    b.ceiling.p50Ms.toFixed(1),
    b.ceiling.p99Ms.toFixed(1),
    '',
    '',
    '',
    `${b.ceiling.statementsPerRequest} statements/request, ${b.ceiling.failed} failed`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  for (const row of [header, widths.map((w) => '-'.repeat(w)), ...rows])
    process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}\n`);
  for (const o of b.operations)
    for (const [code, answer] of Object.entries(o.refusals))
      process.stdout.write(`  ${o.operation} ${code}: ${answer}\n`);
  for (const [message, n] of Object.entries(b.ceiling.failures))
    process.stdout.write(`  (c) replay failed ×${n}: ${message}\n`);
  process.stdout.write(
    `throughput ${b.requestsPerSecond} req/s = ${Math.round(b.ratioToCeiling * 100)}% of (c) ${b.ceiling.requestsPerSecond} req/s (target ≥ ${TARGET_RATIO * 100}%); machine busy ${Math.round(b.machineBusyShare * 100)}%; meets targets: ${b.meetsTargets ? 'yes' : 'NO'}\n`,
  );
}
process.stdout.write(
  `\nload average before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}, after ${loadAfter
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} CPUs (other processes share them)\n`,
);

const resultsPath = benchResultsPath('api-traffic');
await writeFile(
  resultsPath,
  `${JSON.stringify(
    {
      bench: 'api-traffic',
      command: `npm run bench:api -- --traffic ${args.filter((a) => a !== '--traffic').join(' ')}`.trim(),
      measures:
        'Requests per second and p50/p99 latency per operation of virtual users of every role sending their own mix over 20 connections (all-findings with random filters, orders and cursor depths, a finding, its comments, users, reports, the audit log, credits, scan status; 10% writes: comments, status changes, label edits), beside ceiling (c): the same operations’ SQL, captured per request, replayed alone on a pg pool of 20 connections in the same run, with its p50/p99 per operation.',
      date: new Date().toISOString(),
      findings: FINDINGS,
      companies: COMPANIES,
      repositories: REPOSITORIES,
      usersPerRole: USERS_PER_ROLE,
      roles: ROLES,
      connections: CONNECTIONS,
      durationSeconds: DURATION,
      writeShare: WRITE_SHARE,
      targets: { p99MsPerOperation: TARGET_P99_MS, ratioToCeiling: TARGET_RATIO },
      ceiling:
        '(c): the statements each of `capturedRequests` requests of the same mix sent, replayed request after request on a pg pool of 20 connections (each text prepared once per connection)',
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
log(`wrote ${path.relative(repositoryRoot, resultsPath)}`);
if (backends.some((b) => !b.meetsTargets)) {
  process.stderr.write('bench:api --traffic: a target was missed\n');
  process.exitCode = 1;
}
// Sleeping handles (undici, pg) must not keep the process alive.
await sleep(100);
process.exit(process.exitCode ?? 0);
