/**
 * Benchmark of the all-findings listing on PostgreSQL with 1,000,000 findings over 1,000
 * repositories. Run: `npm run bench:findings` (BENCH_DATABASE_URL, default the local server).
 *
 * Creates a fresh database `vigil_bench_findings`, applies the migrations, generates the data set
 * with INSERT … SELECT generate_series, then measures `listAllFindings` (the service function the
 * route calls) for several users, filters and orders: p50/p99 over repeated runs, the EXPLAIN
 * (ANALYZE, BUFFERS) plans of the page and count queries, and `filteredTotal` checked against an
 * independent plain count. Writes bench/results/findings.json (BENCH_RESULTS: an absolute path outside bench/results;
 * BENCH_DB_NAME: another database name).
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadFindingAccess } from '../src/access/access.service.ts';
import type { UserActor } from '../src/auth/actor.ts';
import { type Db, migrateDatabase, openDatabase } from '../src/db/client.ts';
import * as schema from '../src/db/schema/index.ts';
import { type AllFindingsQuery, listAllFindings } from '../src/platform/findings/findings-listing.ts';
import { createCursorCodec } from '../src/platform/pagination/cursor.ts';
import { captureStatements, generateFindingsDataSet } from './findings-data.ts';
import { benchResultsPath } from './results-path.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = process.env.BENCH_DB_NAME ?? 'vigil_bench_findings';
const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 1_000_000);
const REPOSITORIES = 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const TARGET_P99_MS = 50;

const log = (message: string) =>
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

async function timed<T>(label: string, run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  log(`${label} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  return result;
}

// --- database ---------------------------------------------------------------------------------
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`drop database if exists ${DB_NAME} with (force)`);
await admin.query(`create database ${DB_NAME}`);
await admin.end();
const url = new URL(serverUrl);
url.pathname = `/${DB_NAME}`;

const migrating = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
await timed('migrations applied', () => migrateDatabase(migrating));
await migrating.close();

const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
const capture = captureStatements(pool);
const db: Db = drizzle({ client: pool, schema });
const run = (text: string, values?: unknown[]) => pool.query(text, values);

// --- data set ---------------------------------------------------------------------------------
await generateFindingsDataSet({ run, db, findings: FINDINGS, repositories: REPOSITORIES, log, timed });

const ids = async (sql: string) => (await run(sql)).rows[0] as Record<string, string>;
const { member, reviewer, reader, company } = await ids(
  `select md5('persona-member')::uuid as member, md5('persona-reviewer')::uuid as reviewer, md5('persona-reader')::uuid as reader, md5('c1')::uuid as company`,
);
const actor = (
  userId: string,
  username: string,
  companies: Array<[string, 'member']>,
  permissions: string[],
): UserActor => ({
  kind: 'user',
  credentialId: `bench-${username}`,
  userId,
  username,
  companies: new Map(companies),
  permissions: new Set(permissions),
});
const personas = {
  member: actor(member as string, 'bench_member', [[company as string, 'member']], []),
  reviewer: actor(reviewer as string, 'bench_reviewer', [], []),
  reader: actor(reader as string, 'bench_reader', [], ['read_all_companies']),
};
const someRepos = (
  await run(
    `select string_agg(id::text, ',') as ids from (select md5('r'||g)::uuid as id from generate_series(500, 504) g) s`,
  )
).rows[0].ids as string;

// --- scenarios --------------------------------------------------------------------------------
interface Scenario {
  name: string;
  persona: keyof typeof personas;
  query: AllFindingsQuery;
  /** Follow this many pages first and measure the page after them. */
  deepPages?: number;
  /** An independent count of what the filters select. */
  plainCount: string;
}
const visibleToReviewer = `(f.repository_id in (select m.repository_id from repository_members m join repositories r on r.id = m.repository_id
    where m.user_id = '${reviewer}' and m.deleted_at is null and (m.role <> 'reviewer' or r.show_all_findings))
  or (f.created_by = '${reviewer}' and f.repository_id in (select repository_id from repository_members where user_id = '${reviewer}' and deleted_at is null)))`;
const memberRows = `f.published and f.company_id = '${company}'`;
/** Comments of f the user did not write and has not read, with the visibility rule given. */
const unreadBy = (
  userId: string,
  readable: string,
) => `exists (select 1 from comments c where c.finding_id = f.id
    and c.author_id is distinct from '${userId}' and c.deleted_at is null and (${readable})
    and c.created_at > coalesce((select read_at from comment_reads r where r.user_id = '${userId}' and r.finding_id = f.id), '-infinity'))`;
// The reviewer persona is a reviewer or judge, never admin or company user: public, and private
// on the findings they filed or the repositories they judge.
const reviewerReads = `c.visibility = 'public' or (c.visibility = 'private' and (f.created_by = '${reviewer}'
    or f.repository_id in (select repository_id from repository_members where user_id = '${reviewer}' and role in ('judge', 'triager') and deleted_at is null)))`;
const scenarios: Scenario[] = [
  {
    name: 'member: default listing',
    persona: 'member',
    query: {},
    plainCount: `select count(*) from findings f where ${memberRows}`,
  },
  {
    name: 'member: page 51 (after 50 cursors)',
    persona: 'member',
    query: {},
    deepPages: 50,
    plainCount: `select count(*) from findings f where ${memberRows}`,
  },
  {
    name: 'member: status+severity, created_at_desc',
    persona: 'member',
    query: { status: 'confirmed,acknowledged', severity: 'high,critical', order_by: 'created_at_desc' },
    plainCount: `select count(*) from findings f where ${memberRows} and status in ('confirmed','acknowledged') and severity in ('high','critical')`,
  },
  {
    name: 'member: label, last_updated_at_desc',
    persona: 'member',
    query: { label: 'label-1', order_by: 'last_updated_at_desc' },
    plainCount: `select count(*) from findings f where ${memberRows} and exists (select 1 from finding_labels fl join labels l on l.id = fl.label_id where fl.finding_id = f.id and l.name = 'label-1')`,
  },
  {
    name: 'member: q text search, reward_desc',
    persona: 'member',
    query: { q: 'overflow', order_by: 'reward_desc' },
    plainCount: `select count(*) from findings f where ${memberRows} and (title ilike '%overflow%' or description ilike '%overflow%')`,
  },
  {
    name: 'reviewer: default listing',
    persona: 'reviewer',
    query: {},
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer}`,
  },
  {
    name: 'reviewer: path + require_review, username_asc',
    persona: 'reviewer',
    query: { path: 'contracts/C7.sol', filter_for: 'require_review', order_by: 'username_asc' },
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer} and f.status in ('new','in_review','disputed')
      and exists (select 1 from finding_related_files rf where rf.finding_id = f.id and rf.path = 'contracts/C7.sol')`,
  },
  {
    name: 'member: with_unread_comments, last_comment_desc',
    persona: 'member',
    query: { with_unread_comments: true, order_by: 'last_comment_desc' },
    plainCount: `select count(*) from findings f where ${memberRows} and ${unreadBy(member as string, `c.visibility in ('public', 'private', 'internal')`)}`,
  },
  {
    name: 'reviewer: with_unread_comments',
    persona: 'reviewer',
    query: { with_unread_comments: true },
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer} and ${unreadBy(reviewer as string, reviewerReads)}`,
  },
  {
    name: 'reviewer: last_comment_desc',
    persona: 'reviewer',
    query: { order_by: 'last_comment_desc' },
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer}`,
  },
  {
    name: 'member: with_unread_comments',
    persona: 'member',
    query: { with_unread_comments: true },
    plainCount: `select count(*) from findings f where ${memberRows} and ${unreadBy(member as string, `c.visibility in ('public', 'private', 'internal')`)}`,
  },
  {
    name: 'member: last_comment_asc',
    persona: 'member',
    query: { order_by: 'last_comment_asc' },
    plainCount: `select count(*) from findings f where ${memberRows}`,
  },
  {
    name: 'member: last_comment_desc, page 121 (past the commented findings)',
    persona: 'member',
    query: { order_by: 'last_comment_desc' },
    deepPages: 120,
    plainCount: `select count(*) from findings f where ${memberRows}`,
  },
  {
    name: 'reviewer: with_unread_comments, last_comment_asc',
    persona: 'reviewer',
    query: { with_unread_comments: true, order_by: 'last_comment_asc' },
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer} and ${unreadBy(reviewer as string, reviewerReads)}`,
  },
  {
    name: 'reviewer: last_comment_asc',
    persona: 'reviewer',
    query: { order_by: 'last_comment_asc' },
    plainCount: `select count(*) from findings f where f.published and ${visibleToReviewer}`,
  },
  {
    name: 'reader: 5 repositories, last_comment_desc',
    persona: 'reader',
    query: { repositories: [someRepos], order_by: 'last_comment_desc', duplicates: false },
    plainCount: `select count(*) from findings f where f.published and f.duplicate_of is null and f.repository_id in (${someRepos
      .split(',')
      .map((id) => `'${id}'`)
      .join(',')})`,
  },
  {
    name: 'reader: all 1M findings, severity_desc',
    persona: 'reader',
    query: { order_by: 'severity_desc' },
    plainCount: `select count(*) from findings f where f.published and f.repository_id is not null`,
  },
];

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

interface Result {
  name: string;
  query: AllFindingsQuery;
  runs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meetsTarget: boolean;
  filteredTotal: number;
  plainCount: number;
  totalExact: boolean;
  pageSize: number;
  plans: string[];
}
const results: Result[] = [];
const cursors = createCursorCodec(randomBytes(32));
// Other processes on the machine distort latencies; the load average is recorded with the results.
const loadBefore = os.loadavg();
for (const scenario of scenarios) {
  const access = await loadFindingAccess(db, personas[scenario.persona]);
  let query: AllFindingsQuery = { ...scenario.query };
  for (let page = 0; page < (scenario.deepPages ?? 0); page++) {
    const res = await listAllFindings(db, access, query, cursors);
    if (!res.nextValue) break;
    query = { ...scenario.query, next: res.nextValue };
  }
  // Warm up, then measure what a request costs: access loading plus the listing.
  for (let i = 0; i < 3; i++) await listAllFindings(db, access, query, cursors);
  const times: number[] = [];
  let last = await listAllFindings(db, access, query, cursors);
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const fresh = await loadFindingAccess(db, personas[scenario.persona]);
    last = await listAllFindings(db, fresh, query, cursors);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const { statements: captured } = await capture.during(() => listAllFindings(db, access, query, cursors));
  const plans: string[] = [];
  // The first two statements are the count and the page (run together); the rest hydrate the page.
  for (const statement of captured.slice(0, 2)) {
    const plan = await run(`explain (analyze, buffers) ${statement.query}`, statement.params);
    plans.push(plan.rows.map((r) => (r as Record<string, string>)['QUERY PLAN']).join('\n'));
  }
  const plain = Number((await run(scenario.plainCount)).rows[0].count);
  const result: Result = {
    name: scenario.name,
    query: { ...scenario.query, ...(scenario.deepPages ? { next: '(page 51)' } : {}) },
    runs: RUNS,
    p50Ms: Number(percentile(times, 50).toFixed(2)),
    p99Ms: Number(percentile(times, 99).toFixed(2)),
    maxMs: Number((times[times.length - 1] ?? 0).toFixed(2)),
    meetsTarget: percentile(times, 99) <= TARGET_P99_MS,
    filteredTotal: last.filteredTotal,
    plainCount: plain,
    totalExact: last.filteredTotal === plain,
    pageSize: last.findings.length,
    plans,
  };
  results.push(result);
  log(
    `${scenario.name}: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, total ${result.filteredTotal} (plain ${plain})`,
  );
}

process.stdout.write('\nPlans (count, then page):\n');
for (const r of results) process.stdout.write(`\n=== ${r.name}\n${r.plans.join('\n---\n')}\n`);
process.stdout.write(
  `\nload average before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}, after ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} CPUs\n`,
);
const header = [
  'scenario',
  'p50 ms',
  'p99 ms',
  `p99<=${TARGET_P99_MS}`,
  'filteredTotal',
  'plain count',
  'exact',
];
const rows = results.map((r) => [
  r.name,
  String(r.p50Ms),
  String(r.p99Ms),
  r.meetsTarget ? 'yes' : 'NO',
  String(r.filteredTotal),
  String(r.plainCount),
  r.totalExact ? 'yes' : 'NO',
]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
for (const row of [header, widths.map((w) => '-'.repeat(w)), ...rows]) {
  process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}\n`);
}

await writeFile(
  benchResultsPath('findings'),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      findings: FINDINGS,
      repositories: REPOSITORIES,
      runsPerScenario: RUNS,
      targetP99Ms: TARGET_P99_MS,
      postgres: (await run('show server_version')).rows[0].server_version,
      cpus: os.cpus().length,
      loadAverageBefore: loadBefore,
      loadAverageAfter: os.loadavg(),
      results,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${benchResultsPath('findings')}`);
await pool.end();

// A run that misses the target or miscounts is a failed run, not just a row marked NO.
if (results.some((r) => !r.meetsTarget || !r.totalExact)) {
  console.error('bench:findings: a scenario missed p99 ≤ 50 ms or its filteredTotal was not exact');
  process.exitCode = 1;
}
