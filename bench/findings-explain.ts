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
 * The payload of a page is read by one statement (what depends on the reader, with the findings'
 * bodies). It then times, as prepared statements on one connection, taking turns, the median of
 * 300 round trips (after six to prepare them and settle on a generic plan) of: the statement as it
 * is; the statement wrapped in `select count(*)`, which PostgreSQL runs without evaluating the
 * per-row columns; and wrapped in `select sum(length(row::text))`, which evaluates them without
 * sending them. Last, it calls the payload as the server does (`loadFindingPayloads`, one pooled
 * connection) for one finding and for a page of 20, and prints the median call, Node's CPU per
 * call and how many executions PostgreSQL planned anew (custom plans) or ran on its kept generic
 * plan. Nothing is written.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadFindingAccess } from '../src/access/access.service.ts';
import { type Db, openDatabase } from '../src/db/client.ts';
import * as schema from '../src/db/schema/index.ts';
import { loadFindingPayloads } from '../src/platform/findings/finding-payloads.repo.ts';
import { type AllFindingsQuery, listAllFindings } from '../src/platform/findings/findings-listing.ts';
import { createCursorCodec } from '../src/platform/pagination/cursor.ts';
import { captureStatements, memberPersona } from './findings-data.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(serverUrl);
url.pathname = `/${process.env.BENCH_DB_NAME ?? 'vigil_bench_findings'}`;
const showPlans = process.argv.includes('plans');
const LOOP = 200;

const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
const capture = captureStatements(pool);
const db: Db = drizzle({ client: pool, schema });

const { actor: member, companyId } = await memberPersona(pool);
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
    `\n=== ${name}: ${captured.length} statements after the memberships query, ${result.findings.length} findings, filteredTotal ${result.filteredTotal}\n`,
  );
  for (const [i, statement] of captured.entries()) {
    if (/^\s*update\b/i.test(statement.query)) {
      process.stdout.write(
        `\n[${i}] ${statement.query.replace(/\s+/g, ' ').slice(0, 110)}… (writes back; not explained)\n`,
      );
      continue;
    }
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

/** The payload statement of the first read. */
const payloadCaptured = (
  await capture.during(async () =>
    listAllFindings(db, await loadFindingAccess(db, member), reads[0]![1], cursors),
  )
).statements;
const readerStatement = payloadCaptured.find((s) => s.query.includes('"duplicate_group"'));
if (!readerStatement) throw new Error('the payload statement was not found among the captured statements');
const PAYLOAD_ROUND_TRIPS = 300;
const variants: Array<[string, string, unknown[]]> = [];
for (const [which, statement] of [["reader's statement", readerStatement]] as const) {
  variants.push(
    [`${which} as it is`, statement.query, statement.params],
    [
      `${which} in select count(*): no per-row columns`,
      `select count(*) from (${statement.query}) p`,
      statement.params,
    ],
    [
      `${which} in select sum(length(p::text)): columns computed, not sent`,
      `select sum(length(p::text)) from (${statement.query}) p`,
      statement.params,
    ],
  );
}
const trips = variants.map(() => [] as number[]);
for (let k = 0; k < PAYLOAD_ROUND_TRIPS + 6; k++) {
  for (const [i, [, text, values]] of variants.entries()) {
    const start = performance.now();
    await client.query({ name: `payload_${i}`, text, values });
    // The first round prepares the statements; a generic plan is chosen after five executions.
    if (k >= 6) trips[i]!.push(performance.now() - start);
  }
}
process.stdout.write(
  `\n=== payload statements of ${reads[0]![0]} (${PAYLOAD_ROUND_TRIPS} prepared round trips each, taking turns)\n`,
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
    [companyId],
  )
).rows.map((r) => r.id as string);
process.stdout.write('\n');
/** How many executions of each payload statement on the connection PostgreSQL planned, and how. */
const payloadPlans = async () =>
  (
    await one.executeSql(
      `select 'payload' as statement, sum(generic_plans)::int as generic, sum(custom_plans)::int as custom
        from pg_prepared_statements where statement like '%"duplicate_group"[3]%'`,
    )
  ).rows as Array<{ statement: string; generic: number; custom: number }>;
const plansSince = (before: Awaited<ReturnType<typeof payloadPlans>>, after: typeof before) =>
  after
    .map((a) => {
      const b = before.find((r) => r.statement === a.statement) ?? { generic: 0, custom: 0 };
      return `${a.statement}: ${a.generic - b.generic} on a generic plan, ${a.custom - b.custom} planned anew`;
    })
    .join('; ');
for (const [name, idsOfCall] of [
  ['one finding', pageIds.slice(0, 1)],
  ['a page of 20', pageIds],
] as const) {
  const before = await payloadPlans();
  const calls: number[] = [];
  let cpuUs = 0;
  for (let i = 0; i < PAYLOAD_ROUND_TRIPS + 6; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    await loadFindingPayloads(one.db, memberAccess, [...idsOfCall]);
    const used = process.cpuUsage(cpu);
    cpuUs += used.user + used.system;
    if (i >= 6) calls.push(performance.now() - start);
  }
  const after = await payloadPlans();
  process.stdout.write(
    `payload of ${name}: ${PAYLOAD_ROUND_TRIPS + 6} calls, median ${median(calls).toFixed(2)} ms, ${(cpuUs / (PAYLOAD_ROUND_TRIPS + 6)).toFixed(0)} µs Node CPU per call; ${plansSince(before, after)}\n`,
  );
}
await one.close();
