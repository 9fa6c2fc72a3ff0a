/**
 * Fuzzes every operation of openapi.json from its own schema with fast-check, as a caller with
 * access (the platform admin on v0, a service key with every scope on v1): wrong types, missing and
 * extra fields, boundary lengths, huge numbers, NUL and lone surrogates, invalid uuids, malformed
 * bodies and headers. Every answer must be below 500 and, when an error, in its API's shape; a
 * rejected request (4xx) must write nothing (row counts of every table unchanged).
 *
 * `npm run test:fuzz` runs it; `FUZZ_RUNS` sets the cases per operation (default 4 in CI; e.g.
 * `FUZZ_RUNS=200 npm run test:fuzz` for a long run). Prints operations × cases and writes
 * bench/results/fuzz.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/auth/credentials.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompany, buildServiceKey } from '../helpers/factories.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 4);
const SEED = Number(process.env.FUZZ_SEED ?? 42);

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  body?: Schema;
}

let t: TestApp;
let companyId: string;
let serviceKey: string;
let spec: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, Schema> };
};
let countSql: string;

const hostileString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    '',
    ' ',
    "'; drop table users; --",
    '%00',
    '../..',
    'a'.repeat(5000),
  ),
  fc.string({ unit: 'binary', maxLength: 10 }),
);
const hugeNumber = fc.constantFrom(
  2 ** 31,
  2 ** 31 - 1,
  -(2 ** 31) - 1,
  2 ** 53,
  1e308,
  -1,
  0,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
);
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
);

function resolve(schema: Schema | undefined): Schema {
  if (!schema) return {};
  const ref = schema.$ref as string | undefined;
  if (ref) return spec.components?.schemas?.[ref.split('/').pop() ?? ''] ?? {};
  return schema;
}

/** A value for a schema: usually a hostile variant of its type, sometimes a valid-looking one. */
function valueFor(raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const options: fc.Arbitrary<unknown>[] = [wrongType, hostileString];
  if (schema.enum) options.push(fc.constantFrom(...(schema.enum as unknown[])));
  if (schema.format === 'uuid')
    options.push(fc.uuid(), fc.constant('not-a-uuid'), fc.constant(randomUUID().toUpperCase()));
  if (type === 'integer' || type === 'number') options.push(hugeNumber, fc.integer());
  if (type === 'string' && typeof schema.maxLength === 'number') {
    options.push(fc.constant('a'.repeat(schema.maxLength)), fc.constant('a'.repeat(schema.maxLength + 1)));
  }
  if (type === 'object' && depth < 3) options.push(objectFor(schema, depth + 1));
  if (type === 'array' && depth < 3)
    options.push(fc.array(valueFor(schema.items as Schema, depth + 1), { maxLength: 3 }));
  for (const branch of (schema.anyOf ?? schema.oneOf ?? []) as Schema[])
    options.push(valueFor(branch, depth + 1));
  return fc.oneof(...options);
}

function objectFor(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const entries = Object.entries(properties).map(
    ([k, s]) => [k, fc.option(valueFor(s, depth), { nil: undefined })] as const,
  );
  return fc
    .record({
      known: fc.record(Object.fromEntries(entries)),
      extra: fc.option(fc.dictionary(hostileString, hostileString, { maxKeys: 2 }), { nil: undefined }),
    })
    .map(({ known, extra }) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(known)) if (v !== undefined) out[k] = v;
      return { ...out, ...(extra ?? {}) };
    });
}

function operations(): Operation[] {
  const ops: Operation[] = [];
  for (const [p, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)
        ?.content;
      ops.push({
        method: method.toUpperCase(),
        path: p,
        operationId: String(op.operationId ?? `${method} ${p}`),
        parameters: (op.parameters ?? []) as Operation['parameters'],
        body: content?.['application/json']?.schema,
      });
    }
  }
  return ops;
}

/**
 * Percent-encodes like encodeURIComponent, but a lone UTF-16 surrogate (which encodeURIComponent
 * refuses) is sent as the three bytes of its code point, as a client with a broken encoder would.
 */
function encode(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/g, (unit) => {
    if (unit.length === 1 && unit >= '\uD800' && unit <= '\uDFFF') {
      const u = unit.charCodeAt(0);
      return [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    }
    return encodeURIComponent(unit);
  });
}

async function rowCounts(): Promise<string> {
  const res = await t.container.database.db.execute(sql.raw(countSql));
  return JSON.stringify((res as unknown as { rows: unknown[] }).rows ?? res);
}

const results: Array<{ operationId: string; cases: number; statuses: Record<string, number> }> = [];

beforeAll(async () => {
  t = await createTestApp({ env: { VIGIL_RATE_LIMIT_PER_MINUTE: '1000000' } });
  companyId = (await buildCompany(t)).id;
  serviceKey = (await buildServiceKey(t, companyId, [...SCOPES])).key;
  spec = JSON.parse(await readFile(path.resolve('openapi.json'), 'utf8'));
  const tables = (await t.container.database.db.execute(
    sql.raw(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1",
    ),
  )) as unknown as { rows: Array<{ table_name: string }> };
  countSql = `select ${tables.rows.map((r) => `(select count(*) from "${r.table_name}")::text as "${r.table_name}"`).join(', ')}`;
}, 120_000);

afterAll(async () => {
  const total = results.reduce((n, r) => n + r.cases, 0);
  console.log(`fuzz: ${results.length} operations × ${RUNS} cases = ${total} requests (seed ${SEED})`);
  for (const r of results)
    console.log(`  ${r.operationId.padEnd(40)} ${r.cases}  ${JSON.stringify(r.statuses)}`);
  await mkdir('bench/results', { recursive: true });
  await writeFile(
    'bench/results/fuzz.json',
    `${JSON.stringify({ runsPerOperation: RUNS, seed: SEED, operations: results.length, requests: total, results }, null, 2)}\n`,
  );
  await t?.close();
});

describe('fuzzing every operation of openapi.json', () => {
  it('never answers 5xx, answers errors in the API shape, and writes nothing when it refuses', async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) {
      const statuses: Record<string, number> = {};
      const v1 = !op.path.startsWith('/api/v0');
      const auth = v1
        ? { authorization: `Bearer ${serviceKey}` }
        : { authorization: `Bearer ${t.adminToken}` };
      const pathParams = op.parameters.filter((p) => p.in === 'path');
      const queryParams = op.parameters.filter((p) => p.in === 'query');
      const caseArb = fc.record({
        path: fc.tuple(...pathParams.map((p) => fc.oneof(valueFor(p.schema), fc.constant(companyId)))),
        query: fc.tuple(...queryParams.map((p) => fc.option(valueFor(p.schema), { nil: undefined }))),
        extraQuery: fc.option(hostileString, { nil: undefined }),
        body: op.body
          ? fc.oneof(valueFor(op.body), fc.constant('{"unterminated'), fc.constant(''))
          : fc.constant(undefined),
        header: fc.option(fc.constantFrom('a\u0000b', 'é', 'x'.repeat(9000)), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          let url = op.path;
          pathParams.forEach((p, i) => {
            url = url.replace(`{${p.name}}`, encode(c.path[i]) || 'x');
          });
          const query: string[] = [];
          queryParams.forEach((p, i) => {
            if (c.query[i] !== undefined) query.push(`${p.name}=${encode(c.query[i])}`);
          });
          if (c.extraQuery !== undefined) query.push(`extra_${query.length}=${encode(c.extraQuery)}`);
          if (query.length > 0) url += `?${query.join('&')}`;
          const before = await rowCounts();
          const res = await t.app.inject({
            method: op.method as 'GET',
            url,
            headers: {
              ...auth,
              'idempotency-key': randomUUID(),
              ...(c.header !== undefined ? { 'x-fuzz': c.header } : {}),
              ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(c.body !== undefined
              ? { payload: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) }
              : {}),
          });
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          const label = `${op.method} ${url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, label).toBeLessThan(500);
          if (res.statusCode >= 400) {
            const body = res.json() as Record<string, unknown>;
            if (v1) expect(typeof body.error === 'string' && typeof body.code === 'string', label).toBe(true);
            else expect(typeof body.msg, label).toBe('string');
            expect(await rowCounts(), `a refused request wrote: ${label}`).toBe(before);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      results.push({ operationId: op.operationId, cases: RUNS, statuses });
    }
  }, 3_600_000);
});
