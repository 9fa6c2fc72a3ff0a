/**
 * Where one all-findings request spends its time, statement by statement. Run against a database
 * that `npm run bench:findings` generated and kept (BENCH_DB_NAME, default vigil_bench_findings):
 *
 *   npx tsx bench/findings-explain.ts [plans]
 *
 * For the member persona of bench/findings-data.ts (a company member seeing its 10 repositories)
 * and the two reads of `npm run bench:api` (`limit=20`; status, severity and label filters), it
 * captures the statements `listAllFindings` sends (after the memberships query) and prints for
 * each: planning and execution time of `EXPLAIN (ANALYZE, BUFFERS)` with the custom plan, and of
 * the generic plan that a prepared statement reuses after five executions (`plan_cache_mode =
 * force_generic_plan`), with the median round trip of 15 executions of that prepared statement.
 * Then it runs 200 requests one after another and reports the wall time and the Node CPU time per
 * request (`process.cpuUsage`): the rest of the wall time is PostgreSQL and the network. With
 * `plans`, the plans themselves are printed. Prints only; nothing is written.
 *
 * For the payload statement (the page's findings by id, with their per-row columns) it then
 * times, as prepared statements on one connection, taking turns, the median of 300 round trips
 * (after six to prepare them and settle on a generic plan) of:
 * the statement as it is; the statement wrapped in `select count(*)`, which PostgreSQL runs
 * without evaluating the per-row columns; and wrapped in `select sum(length(row::text))`, which
 * evaluates them without sending them. The first against the third is the cost of sending and
 * parsing the rows; the third against the second the cost of the columns. Last, it calls the
 * payload statement as the server does (`loadFindingBodies`, one pooled connection) for one finding
 * and for a page of 20, and prints the median call, Node's CPU per call and how many of the
 * executions PostgreSQL planned anew (custom plans) or ran on its kept generic plan.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadFindingAccess } from '../src/access/access.service.ts';
import type { UserActor } from '../src/auth/actor.ts';
import { type Db, openDatabase } from '../src/db/client.ts';
import * as schema from '../src/db/schema/index.ts';
import { loadFindingBodies } from '../src/platform/findings/findings.repo.ts';
import { type AllFindingsQuery, listAllFindings } from '../src/platform/findings/findings-listing.ts';
import { createCursorCodec } from '../src/platform/pagination/cursor.ts';
import { captureStatements } from './findings-data.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(serverUrl);
url.pathname = `/${process.env.BENCH_DB_NAME ?? 'vigil_bench_findings'}`;
const showPlans = process.argv.includes('plans');
const LOOP = 200;

const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
const capture = captureStatements(pool);
const db: Db = drizzle({ client: pool, schema });

const ids = (await pool.query(`select md5('persona-member')::uuid as member, md5('c1')::uuid as company`))
  .rows[0] as { member: string; company: string };
const member: UserActor = {
  kind: 'user',
  credentialId: 'bench-member',
  userId: ids.member,
  username: 'bench_member',
  companies: new Map([[ids.company, 'member']]),
  permissions: new Set(),
};
const cursors = createCursorCodec(Buffer.alloc(32, 1));
const reads: Array<[string, AllFindingsQuery]> = [
  ['limit=20', { limit: 20 }],
  [
    'limit=20, 3 filters',
    { limit: 20, status: 'confirmed,acknowledged', severity: 'high,critical', label: 'label-1' },
  ],
];

const timesOf = (lines: string[]) =>
  lines
    .filter((l) => /^(Planning|Execution) Time/.test(l))
    .map((l) => l.replace(' Time', ''))
    .join(', ');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
let statementNo = 0;
for (const [name, query] of reads) {
  const access = await loadFindingAccess(db, member);
  const { result, statements: captured } = await capture.during(() =>
    listAllFindings(db, access, query, cursors),
  );
  process.stdout.write(
    `\n=== ${name}: ${captured.length} statements after the memberships query, ${result.findingBodies.length} findings, filteredTotal ${result.filteredTotal}\n`,
  );
  for (const [i, statement] of captured.entries()) {
    const custom = (
      await pool.query(`explain (analyze, buffers) ${statement.query}`, statement.params)
    ).rows.map((r) => r['QUERY PLAN'] as string);
    const prepared = `explain_${statementNo++}`;
    await client.query('set plan_cache_mode = force_generic_plan');
    const roundTrips: number[] = [];
    for (let k = 0; k < 16; k++) {
      const start = performance.now();
      await client.query({ name: prepared, text: statement.query, values: statement.params });
      if (k > 0) roundTrips.push(performance.now() - start);
    }
    const literal = (v: unknown): string =>
      v === null || v === undefined
        ? 'null'
        : typeof v === 'number' || typeof v === 'boolean'
          ? String(v)
          : Array.isArray(v)
            ? client.escapeLiteral(`{${v.map((e) => `"${String(e).replace(/["\\]/g, '\\$&')}"`).join(',')}}`)
            : client.escapeLiteral(String(v));
    const literals = statement.params.map(literal).join(', ');
    const generic = (
      await client.query(`explain (analyze, buffers) execute ${prepared}${literals ? `(${literals})` : ''}`)
    ).rows.map((r) => r['QUERY PLAN'] as string);
    await client.query('reset plan_cache_mode');
    process.stdout.write(
      `\n[${i}] ${statement.query.replace(/\s+/g, ' ').slice(0, 110)}…\n    custom plan: ${timesOf(custom)}; generic plan: ${timesOf(generic)}; prepared round trip median ${median(roundTrips).toFixed(2)} ms\n`,
    );
    if (showPlans) process.stdout.write(`${generic.join('\n')}\n`);
  }
}

/** The payload statement of the first read: the one that selects findings by a list of ids. */
const payloadStatement = (
  await capture.during(async () =>
    listAllFindings(db, await loadFindingAccess(db, member), reads[0]![1], cursors),
  )
).statements.find((s) => /= any\(\$\d+::uuid\[\]\)/.test(s.query) && s.query.includes('relevantContent'));
if (!payloadStatement) throw new Error('the payload statement was not found among the captured statements');
const PAYLOAD_ROUND_TRIPS = 300;
const variants: Array<[string, string]> = [
  ['as it is', payloadStatement.query],
  ['in select count(*): no per-row columns', `select count(*) from (${payloadStatement.query}) p`],
  [
    'in select sum(length(p::text)): columns computed, not sent',
    `select sum(length(p::text)) from (${payloadStatement.query}) p`,
  ],
];
const trips = variants.map(() => [] as number[]);
for (let k = 0; k < PAYLOAD_ROUND_TRIPS + 6; k++) {
  for (const [i, [, text]] of variants.entries()) {
    const start = performance.now();
    await client.query({ name: `payload_${i}`, text, values: payloadStatement.params });
    // The first round prepares the statements; a generic plan is chosen after five executions.
    if (k >= 6) trips[i]!.push(performance.now() - start);
  }
}
process.stdout.write(
  `\n=== payload statement of ${reads[0]![0]} (${PAYLOAD_ROUND_TRIPS} prepared round trips each, taking turns)\n`,
);
for (const [i, [name]] of variants.entries())
  process.stdout.write(`${name}: median ${median(trips[i]!).toFixed(2)} ms\n`);

await client.end();
await pool.end();

// Requests one after another through the pool the server uses (prepared statements included).
const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 });
process.stdout.write('\n');
for (const [name, query] of reads) {
  const run = async () =>
    listAllFindings(database.db, await loadFindingAccess(database.db, member), query, cursors);
  for (let i = 0; i < 20; i++) await run();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < LOOP; i++) await run();
  const wall = (performance.now() - start) / LOOP;
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `${name}: ${LOOP} requests in sequence, ${wall.toFixed(2)} ms wall and ${((used.user + used.system) / 1000 / LOOP).toFixed(2)} ms Node CPU per request\n`,
  );
}
await database.close();

// The payload statement alone for one finding and for a page, on one pooled connection as the
// server runs it: the median call, Node's CPU per call, and how PostgreSQL planned its executions
// (a statement planned at every execution shows as custom plans only).
const one = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
const memberAccess = await loadFindingAccess(one.db, member);
const pageIds = (
  await one.executeSql(
    'select id from findings where company_id = $1 and published order by number limit 20',
    [ids.company],
  )
).rows.map((r) => r.id as string);
process.stdout.write('\n');
/** How many executions of the payload statement on the connection PostgreSQL planned, and how. */
const payloadPlans = async () =>
  (
    await one.executeSql(
      `select coalesce(sum(generic_plans), 0)::int as generic, coalesce(sum(custom_plans), 0)::int as custom
        from pg_prepared_statements where statement like '%harbor_asset(asset, position)%'`,
    )
  ).rows[0] as { generic: number; custom: number };
for (const [name, idsOfCall] of [
  ['one finding', pageIds.slice(0, 1)],
  ['a page of 20', pageIds],
] as const) {
  const before = await payloadPlans();
  const calls: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < PAYLOAD_ROUND_TRIPS + 6; i++) {
    const start = performance.now();
    await loadFindingBodies(one.db, memberAccess, [...idsOfCall]);
    if (i >= 6) calls.push(performance.now() - start);
  }
  const used = process.cpuUsage(cpu);
  const after = await payloadPlans();
  process.stdout.write(
    `payload of ${name}: ${PAYLOAD_ROUND_TRIPS + 6} calls, median ${median(calls).toFixed(2)} ms, ${((used.user + used.system) / (PAYLOAD_ROUND_TRIPS + 6)).toFixed(0)} µs Node CPU per call; executions on a generic plan ${after.generic - before.generic}, planned anew ${after.custom - before.custom}\n`,
  );
}
await one.close();
