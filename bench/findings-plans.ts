/**
 * How PostgreSQL plans the pages of the all-findings listing when a client pages through them: for
 * each order given (default `number_asc`), the member persona of bench/findings-data.ts walks
 * `--pages` pages of 20 (default 500) one after another, each from the cursor of the one before,
 * twice, on one pooled connection as the server runs them (`listAllFindings`). Prints, per order,
 * the second walk's wall time and Node CPU per page, and how many executions of each of the
 * listing's statements on the connection PostgreSQL ran on its kept generic plan or planned anew
 * (`pg_prepared_statements`): a statement planned at every execution shows as custom plans only.
 * Run against a database `npm run bench:findings` or `npm run bench:api -- --keep` left
 * (BENCH_DB_NAME, default vigil_bench_findings):
 *
 *   npx tsx bench/findings-plans.ts [--pages 500] [order ...]
 *
 * Writes bench/results/findings-plans.json (BENCH_RESULTS: an absolute path outside bench/results). Nothing else is
 * written but the kept bodies of the findings it reads.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadFindingAccess } from '../src/access/access.service.ts';
import { openDatabase } from '../src/db/client.ts';
import { FINDING_ORDERS, type FindingOrder } from '../src/platform/findings/findings.schemas.ts';
import { listAllFindings } from '../src/platform/findings/findings-listing.ts';
import { createCursorCodec } from '../src/platform/pagination/cursor.ts';
import { memberPersona } from './findings-data.ts';
import { benchResultsPath } from './results-path.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const url = new URL(serverUrl);
url.pathname = `/${process.env.BENCH_DB_NAME ?? 'vigil_bench_findings'}`;
const args = process.argv.slice(2);
const pagesAt = args.indexOf('--pages');
const PAGES = pagesAt >= 0 ? Number(args.splice(pagesAt, 2)[1]) : 500;
const orders = (args.length > 0 ? args : ['number_asc']) as FindingOrder[];
for (const order of orders) if (!FINDING_ORDERS.includes(order)) throw new Error(`unknown order ${order}`);

interface OrderResult {
  order: FindingOrder;
  pages: number;
  msPerPage: number;
  nodeCpuMsPerPage: number;
  statements: Array<{ statement: string; generic: number; custom: number }>;
}

const results: OrderResult[] = [];
for (const order of orders) {
  // A connection of its own per order: its prepared statements are this order's only.
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
  const { actor } = await memberPersona({ query: (text) => database.executeSql(text) });
  const access = await loadFindingAccess(database.db, actor);
  const cursors = createCursorCodec(Buffer.alloc(32, 1));
  const walk = async () => {
    let next: string | null = null;
    const cpu = process.cpuUsage();
    const start = performance.now();
    let pages = 0;
    for (; pages < PAGES; pages++) {
      const page = await listAllFindings(
        database.db,
        access,
        { limit: 20, order_by: order, ...(next ? { next } : {}) },
        cursors,
      );
      next = page.nextValue;
    }
    const used = process.cpuUsage(cpu);
    return {
      pages,
      msPerPage: (performance.now() - start) / pages,
      nodeCpuMsPerPage: (used.user + used.system) / 1000 / pages,
    };
  };
  await walk();
  const timed = await walk();
  const { rows } = await database.executeSql(
    `select left(regexp_replace(statement, '\\s+', ' ', 'g'), 70) as statement,
        generic_plans::int as generic, custom_plans::int as custom
      from pg_prepared_statements order by generic_plans + custom_plans desc, statement`,
  );
  await database.close();
  results.push({ order, ...timed, statements: rows as OrderResult['statements'] });
  process.stdout.write(
    `\n${order}: ${timed.pages} pages in sequence, ${timed.msPerPage.toFixed(2)} ms and ${timed.nodeCpuMsPerPage.toFixed(2)} ms of Node CPU per page\n` +
      '  generic  custom  statement\n' +
      (rows as OrderResult['statements'])
        .map((r) => `  ${String(r.generic).padStart(7)}  ${String(r.custom).padStart(6)}  ${r.statement}`)
        .join('\n') +
      '\n',
  );
}

const out = benchResultsPath('findings-plans');
await writeFile(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), database: url.pathname.slice(1), pagesPerWalk: PAGES, results }, null, 2)}\n`,
);
process.stdout.write(`\nwrote ${path.relative(process.cwd(), out)}\n`);
