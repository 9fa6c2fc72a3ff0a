/**
 * Fuzzes every operation of openapi.json from its own schema with fast-check: wrong types, missing
 * and extra fields, boundary lengths, huge numbers, NUL and lone surrogates, invalid uuids,
 * malformed bodies and headers. Each operation runs as the caller the isolation matrix names as
 * having access to it (a company manager for company operations, a reviewer, judge or repository
 * admin for repository operations, a service key of the organization with every scope on v1, a
 * valid signature for upload URLs and webhooks), and its path parameters are mostly the ids of real
 * resources that caller reaches, so that requests pass the access check and reach the services'
 * own validation. Every answer must be below 500 and, when an error, in its API's shape; a
 * rejected request (4xx) must write nothing (a digest of every table unchanged).
 *
 * `npm run test:fuzz` runs it (4 cases per operation, as in the CI suite) and writes
 * bench/results/fuzz.json; `npm run test:fuzz -- --long` runs 100 cases per operation and writes
 * bench/results/fuzz-long.json. `FUZZ_RUNS` and `FUZZ_SEED` override the count and the seed.
 * Under `npm test` it prints the table and writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../helpers/app.ts';
import { defaultParams, type Exemption, MATRIX, type MatrixEntry } from '../security/access-matrix.ts';
import {
  type AccessWorld,
  buildAccessWorld,
  type Caller,
  credentialsOf,
  databaseFingerprint,
  localPath,
} from '../security/access-world.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 4);
const SEED = Number(process.env.FUZZ_SEED ?? 42);
/** Where to write the results (set by `npm run test:fuzz`); unset under `npm test`. */
const RESULTS = process.env.FUZZ_RESULTS;

type Schema = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  body?: Schema;
  /**
   * 502/504 the operation declares: it calls a provider (source host, tracker, LLM), which in this
   * run is unreachable, so a request that passes validation is answered 502 — the provider's
   * failure, never ours.
   */
  gateway: number[];
}

let w: AccessWorld;
let spec: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, Schema> };
};

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
        gateway: Object.keys((op.responses ?? {}) as Record<string, unknown>)
          .map(Number)
          .filter((s) => s === 502 || s === 504),
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

const results: Array<{
  operationId: string;
  caller: Caller;
  cases: number;
  statuses: Record<string, number>;
}> = [];
const startedAt = Date.now();

const t = sharedTestApp({
  env: { VIGIL_RATE_LIMIT_PER_MINUTE: '1000000', VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' },
});
beforeAll(async () => {
  w = await buildAccessWorld(t);
  spec = JSON.parse(await readFile(path.resolve('openapi.json'), 'utf8'));
}, 120_000);

afterAll(async () => {
  const total = results.reduce((n, r) => n + r.cases, 0);
  // 5xx answers that got through are the provider failures operations declare (502, 504).
  const providerFailures = results.reduce(
    (n, r) => n + Object.entries(r.statuses).reduce((m, [s, k]) => m + (Number(s) >= 500 ? k : 0), 0),
    0,
  );
  console.log(`fuzz: ${results.length} operations × ${RUNS} cases = ${total} requests (seed ${SEED})`);
  for (const r of results)
    console.log(
      `  ${r.operationId.padEnd(36)} ${r.caller.padEnd(16)} ${r.cases}  ${JSON.stringify(r.statuses)}`,
    );
  if (RESULTS) {
    await mkdir(path.dirname(RESULTS), { recursive: true });
    await writeFile(
      RESULTS,
      `${JSON.stringify(
        {
          runsPerOperation: RUNS,
          seed: SEED,
          operations: results.length,
          requests: total,
          providerFailures,
          seconds: Math.round((Date.now() - startedAt) / 1000),
          results,
        },
        null,
        2,
      )}\n`,
    );
  }
});

const isEntry = (e: MatrixEntry | Exemption | undefined): e is MatrixEntry => e !== undefined && 'as' in e;

describe('fuzzing every operation of openapi.json', () => {
  it('never answers 5xx, answers errors in the API shape, and writes nothing when it refuses', async () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) {
      const statuses: Record<string, number> = {};
      const v1 = !op.path.startsWith('/api/v0');
      const entry = MATRIX[op.operationId];
      // Exempt operations (probes, sign-out, public guild names) have no caller with more access than an admin.
      const caller: Caller = isEntry(entry) ? entry.as : 'platformAdmin';
      const auth = await credentialsOf(w, caller, isEntry(entry) ? entry.scope : undefined);
      const real = { ...defaultParams(w), ...(isEntry(entry) ? entry.params?.(w, 'allow') : {}) };
      const pathParams = op.parameters.filter((p) => p.in === 'path');
      const queryParams = op.parameters.filter((p) => p.in === 'query');
      // The signed upload URL carries its credential in the query: keep it, fuzz the rest.
      const signedQuery =
        op.operationId === 'putSourceUpload' ? localPath(w.upload.uploadUrl).split('?')[1] : undefined;
      const caseArb = fc.record({
        path: fc.tuple(
          ...pathParams.map((p) =>
            real[p.name] === undefined
              ? valueFor(p.schema)
              : fc.oneof(
                  { weight: 3, arbitrary: fc.constant(real[p.name] as unknown) },
                  { weight: 1, arbitrary: valueFor(p.schema) },
                ),
          ),
        ),
        signed: fc.boolean(),
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
          if (signedQuery && c.signed) query.unshift(signedQuery);
          if (c.extraQuery !== undefined) query.push(`extra_${query.length}=${encode(c.extraQuery)}`);
          if (query.length > 0) url += `?${query.join('&')}`;
          const payload =
            c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
          const before = await databaseFingerprint(t);
          const res = await t.app.inject({
            method: op.method as 'GET',
            url,
            headers: {
              ...auth,
              'idempotency-key': randomUUID(),
              ...(isEntry(entry) && entry.headers ? entry.headers(w, caller, payload ?? '') : {}),
              ...(c.header !== undefined ? { 'x-fuzz': c.header } : {}),
              ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            ...(payload !== undefined ? { payload } : {}),
          });
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          const label = `${op.method} ${url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          if (!op.gateway.includes(res.statusCode)) expect(res.statusCode, label).toBeLessThan(500);
          if (res.statusCode >= 400) {
            const body = res.json() as Record<string, unknown>;
            if (v1) expect(typeof body.error === 'string' && typeof body.code === 'string', label).toBe(true);
            else expect(typeof body.msg, label).toBe('string');
            const after = await databaseFingerprint(t);
            const written = Object.keys(after).filter((table) => after[table] !== before[table]);
            const allowed = isEntry(entry) ? (entry.mayWrite ?? []) : [];
            expect(
              written.filter((table) => !allowed.includes(table)),
              `a refused request wrote: ${label}`,
            ).toEqual([]);
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      results.push({ operationId: op.operationId, caller, cases: RUNS, statuses });
    }
  }, 3_600_000);
});
