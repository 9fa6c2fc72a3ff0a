/**
 * How the page statement of each all-findings order runs for a company member: the member persona
 * of bench/findings-data.ts walks `--depth` pages of 20 (default 25) in each order given (default:
 * every order but the user's own last-comment ones), and the page statement of the last page,
 * captured with its values, is run under `EXPLAIN (ANALYZE)` `--runs` times (default 30). Prints,
 * per order, the median and the largest execution time, the indexes the plan reads and whether it
 * sorts. Run against a database `npm run bench:findings`, `npm run bench:api -- --keep` or
 * `npm run bench:api -- --traffic --keep` left (BENCH_DB_NAME, default vigil_bench_findings):
 *
 *   npm run bench:findings-orders -- [--depth 25] [--runs 30] [order ...]
 *
 * Writes bench/results/findings-orders.json (BENCH_RESULTS: another file). Nothing else is
 * written but the kept bodies of the findings it reads.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { loadFindingAccess } from '../src/access/access.service.ts';
import type { Db } from '../src/db/client.ts';
import * as schema from '../src/db/schema/index.ts';
import { FINDING_ORDERS, type FindingOrder } from '../src/platform/findings/findings.schemas.ts';
import { listAllFindings } from '../src/platform/findings/findings-listing.ts';
import { createCursorCodec } from '../src/platform/pagination/cursor.ts';
import { captureStatements, memberPersona } from './findings-data.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(serverUrl);
url.pathname = `/${process.env.BENCH_DB_NAME ?? 'vigil_bench_findings'}`;
const args = process.argv.slice(2);
const numberOption = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args.splice(at, 2)[1]) : fallback;
};
const DEPTH = numberOption('depth', 25);
const RUNS = numberOption('runs', 30);
const orders = (
  args.length > 0 ? args : FINDING_ORDERS.filter((o) => !o.startsWith('last_comment_'))
) as FindingOrder[];
for (const order of orders) if (!FINDING_ORDERS.includes(order)) throw new Error(`unknown order ${order}`);

const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
const capture = captureStatements(pool);
const db: Db = drizzle({ client: pool, schema });
const { actor, companyId } = await memberPersona(pool);
const access = await loadFindingAccess(db, actor);
const cursors = createCursorCodec(Buffer.alloc(32, 1));
const companyFindings = Number(
  (
    await pool.query(
      'select count(*)::int as n from findings where company_id = $1 and published and repository_id is not null',
      [companyId],
    )
  ).rows[0]?.n,
);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

interface OrderResult {
  order: FindingOrder;
  depth: number;
  medianExecutionMs: number;
  maxExecutionMs: number;
  indexes: string[];
  sorts: boolean;
}
const results: OrderResult[] = [];
for (const order of orders) {
  let next: string | null = null;
  let depth = 0;
  for (; depth < DEPTH - 1; depth++) {
    const page = await listAllFindings(
      db,
      access,
      { limit: 20, order_by: order, ...(next ? { next } : {}) },
      cursors,
    );
    if (!page.nextValue) break;
    next = page.nextValue;
  }
  const { statements } = await capture.during(() =>
    listAllFindings(db, access, { limit: 20, order_by: order, ...(next ? { next } : {}) }, cursors),
  );
  const page = statements.find((s) => / order by /.test(s.query) && / limit /.test(s.query));
  if (!page) throw new Error(`${order}: no page statement among ${statements.length}`);
  const times: number[] = [];
  let plan: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    plan = (await pool.query(`explain (analyze, buffers) ${page.query}`, page.params)).rows.map(
      (r) => r['QUERY PLAN'] as string,
    );
    const line = plan.find((l) => l.startsWith('Execution Time'));
    times.push(Number(/([0-9.]+) ms/.exec(line ?? '')?.[1] ?? Number.NaN));
  }
  const text = plan.join('\n');
  const result: OrderResult = {
    order,
    depth: depth + 1,
    medianExecutionMs: Number(median(times).toFixed(3)),
    maxExecutionMs: Number(Math.max(...times).toFixed(3)),
    indexes: [...new Set([...text.matchAll(/ using (\S+)/gi)].map((m) => m[1] as string))],
    sorts: /\bSort\b/.test(text),
  };
  results.push(result);
  process.stdout.write(
    `${order.padEnd(22)} page ${String(result.depth).padStart(3)}: median ${result.medianExecutionMs.toFixed(2)} ms, max ${result.maxExecutionMs.toFixed(2)} ms; ${result.sorts ? 'SORTS' : 'no sort'}; ${result.indexes.join(', ')}\n`,
  );
}
await pool.end();

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = process.env.BENCH_RESULTS ?? path.join(root, 'bench', 'results', 'findings-orders.json');
await writeFile(
  out,
  `${JSON.stringify(
    {
      bench: 'findings-orders',
      measures:
        'Execution time (EXPLAIN ANALYZE, median and max of the runs) of the page statement of each all-findings order for a company member, at a cursor depth, with the indexes its plan reads and whether it sorts',
      command: `npx tsx bench/findings-orders.ts ${process.argv.slice(2).join(' ')}`.trim(),
      date: new Date().toISOString(),
      database: url.pathname.slice(1),
      companyFindings,
      depth: DEPTH,
      runs: RUNS,
      target: { medianExecutionMs: 2, sorts: false },
      results,
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(`wrote ${path.relative(process.cwd(), out)}\n`);
