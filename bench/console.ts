/**
 * Benchmark of the console in Chromium: JavaScript shipped to the first page (gzipped) and the
 * findings page's time to interactive over 1,000,000 findings. Run: `npm run bench:console`
 * (BENCH_DATABASE_URL, default the local server; BENCH_FINDINGS, default 1,000,000; BENCH_DB_NAME,
 * default vigil_bench_console). Needs
 * /usr/bin/chromium and a built console (`npm run build:console`).
 *
 * Creates the database `vigil_bench_console`, generates the findings with generate_series, starts
 * Vigil on it, signs in as a user who reads every company (all findings visible), then loads
 * /app/findings in a fresh page RUNS times and measures from navigation start until the first rows
 * are rendered and the "Load more" button responds. Writes bench/results/console.json.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import pino from 'pino';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { CONSOLE_DIST } from '../src/http/console.ts';
import { bulkLoad } from './findings-data.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = process.env.BENCH_DB_NAME ?? 'vigil_bench_console';
const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 1_000_000);
const REPOSITORIES = 1000;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGET_JS_KB = 150;
const TARGET_INTERACTIVE_MS = 1000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const log = (message: string) =>
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is absent: apt-get install chromium`);
if (!existsSync(path.join(CONSOLE_DIST, 'index.html')))
  throw new Error('Build the console first: npm run build:console');

// --- database and data set ----------------------------------------------------------------------
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`drop database if exists ${DB_NAME} with (force)`);
await admin.query(`create database ${DB_NAME}`);
await admin.end();
const url = new URL(serverUrl);
url.pathname = `/${DB_NAME}`;

const dataDir = path.join(os.tmpdir(), `vigil-bench-console-${randomBytes(4).toString('hex')}`);
const adminToken = `vgl_u_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;
const config = loadConfig(
  {
    DATABASE_URL: url.toString(),
    VIGIL_DATA_DIR: dataDir,
    VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
    VIGIL_RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'silent',
  },
  dataDir,
);
const container = await createContainer(config, { log: pino({ level: 'silent' }) });
await container.services.admin.bootstrapAdmin({ token: adminToken });

const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
const run = (text: string) => pool.query(text);
const timed = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
  const start = performance.now();
  const result = await fn();
  log(`${label} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  return result;
};
const STATUSES = `array['new','in_review','disputed','rejected','spam','confirmed','acknowledged','fixed','withdrawn']`;
const SEVERITIES = `array['critical','high','medium','low','informational','gas_optimization']`;
log(`generating ${FINDINGS.toLocaleString('en')} findings over ${REPOSITORIES} repositories`);
await bulkLoad(run, timed, async () => {
  await run(`insert into companies (id, name, handle)
    select md5('c'||g)::uuid, 'Bench company '||g, 'bench-co-'||g from generate_series(1, 100) g`);
  await run(`insert into users (id, username, name)
    select md5('u'||g)::uuid, 'bench_user_'||g, 'Bench User '||g from generate_series(1, 1000) g`);
  await run(`insert into repositories (id, company_id, name, finding_seq)
    select md5('r'||g)::uuid, md5('c'||((g - 1) / 10 + 1))::uuid, 'bench-repo-'||g, ${FINDINGS / REPOSITORIES}
    from generate_series(1, ${REPOSITORIES}) g`);
  await run(`insert into findings (id, company_id, repository_id, number, published, title, description, status, severity,
      created_by, attributed_to, created_at, last_updated_at)
    select md5('f'||g)::uuid, md5('c'||((r - 1) / 10 + 1))::uuid, md5('r'||r)::uuid, n, true,
      'Finding '||n||': '||(array['reentrancy in withdraw','integer overflow in mint','missing access control',
        'unchecked return value','oracle manipulation','front-running of approve'])[g % 6 + 1],
      'Description of finding '||g||'.',
      (${STATUSES})[(g * 31) % 9 + 1], (${SEVERITIES})[(g * 17) % 6 + 1],
      md5('u'||(g % 1000 + 1))::uuid, md5('u'||(g % 1000 + 1))::uuid,
      timestamptz '2023-01-01' + g * interval '29 seconds', timestamptz '2023-01-01' + g * interval '29 seconds'
    from (select g, ((g - 1) % ${REPOSITORIES}) + 1 as r, (g - 1) / ${REPOSITORIES} + 1 as n
          from generate_series(1, ${FINDINGS}) g) s`);
  await run(
    `insert into users (id, username, name) values (md5('persona-reader')::uuid, 'bench_reader', 'Reader')`,
  );
  await run(
    `insert into platform_permissions (user_id, permission) values (md5('persona-reader')::uuid, 'read_all_companies')`,
  );
});
await run('vacuum analyze');
await pool.end();
log('data set ready');

const app = await buildApp(container);
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const tokenRes = await app.inject({
  method: 'POST',
  url: `/api/v0/admin/users/${await (
    async () => {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      const r = await c.query(`select md5('persona-reader')::uuid as id`);
      await c.end();
      return r.rows[0].id as string;
    }
  )()}/tokens`,
  headers: { authorization: `Bearer ${adminToken}` },
  payload: {},
});
const readerToken = (tokenRes.json() as { token: string }).token;

// --- browser --------------------------------------------------------------------------------------
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const signIn = await context.newPage();

// JavaScript of the first page: everything the sign-in page loads, gzipped as served over the wire.
const firstPageJs: Array<{ url: string; bytes: number; gzipBytes: number }> = [];
signIn.on('response', async (response) => {
  if (!/\.js(\?|$)/.test(response.url())) return;
  const body = await response.body();
  firstPageJs.push({
    url: new URL(response.url()).pathname,
    bytes: body.length,
    gzipBytes: gzipSync(body, { level: 9 }).length,
  });
});
await signIn.goto(`${base}/app/`);
await signIn.waitForSelector('#token');
await signIn.waitForLoadState('networkidle');
const firstPageGzipKb = firstPageJs.reduce((n, f) => n + f.gzipBytes, 0) / 1024;
await signIn.fill('#token', readerToken);
await signIn.click('button[type=submit]');
await signIn.waitForSelector('[data-testid=signed-in-as]');
await signIn.close();

const timings: number[] = [];
let total = '';
for (let i = 0; i < RUNS; i += 1) {
  const page = await context.newPage();
  const start = Date.now();
  await page.goto(`${base}/app/findings`);
  await page.waitForSelector('table.findings tbody tr');
  // Interactive: the page answers input (the search box takes a key, the button is enabled).
  await page.focus('#s');
  await page.keyboard.type('s');
  await page.waitForSelector('[role=option]');
  timings.push(Date.now() - start);
  total = (await page.textContent('[data-testid=filtered-total]')) ?? '';
  await page.close();
}
await browser.close();
await app.close();
await container.close();

const sorted = [...timings].sort((a, b) => a - b);
const p50 = sorted[Math.floor(sorted.length / 2)]!;
const max = sorted[sorted.length - 1]!;
const rows = [
  [
    'first-page JavaScript (gzip)',
    `${firstPageGzipKb.toFixed(1)} KB`,
    `≤ ${TARGET_JS_KB} KB`,
    firstPageGzipKb <= TARGET_JS_KB,
  ],
  [
    `findings page interactive, p50 of ${RUNS}`,
    `${p50} ms`,
    `≤ ${TARGET_INTERACTIVE_MS} ms`,
    p50 <= TARGET_INTERACTIVE_MS,
  ],
  [`findings page interactive, max of ${RUNS}`, `${max} ms`, '', true],
] as const;
console.log(`\nConsole bench: ${FINDINGS.toLocaleString('en')} findings; the page reports "${total}"`);
console.log('| measure | value | target | met |\n|---|---|---|---|');
for (const [name, value, target, met] of rows)
  console.log(`| ${name} | ${value} | ${target} | ${met ? 'yes' : 'NO'} |`);
console.log('\nfirst-page scripts:');
for (const f of firstPageJs)
  console.log(`  ${f.url}: ${(f.bytes / 1024).toFixed(1)} KB, ${(f.gzipBytes / 1024).toFixed(1)} KB gzipped`);
await writeFile(
  'bench/results/console.json',
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, node: process.version },
      findings: FINDINGS,
      filteredTotalText: total,
      firstPageJs,
      firstPageGzipKb: Number(firstPageGzipKb.toFixed(1)),
      interactiveMs: { runs: timings, p50, max },
      targets: { firstPageGzipKb: TARGET_JS_KB, interactiveMs: TARGET_INTERACTIVE_MS },
    },
    null,
    2,
  )}\n`,
);
if (firstPageGzipKb > TARGET_JS_KB || p50 > TARGET_INTERACTIVE_MS) process.exitCode = 1;
