/**
 * The isolation matrix, generated from openapi.json (entries in ./access-matrix.ts): every
 * operation is called by every caller that lacks access to it — another company's manager or
 * service key, users outside the company, roles on another repository, roles of the repository
 * that may not do the operation, a key without the scope, a user without the platform permission,
 * no credential, a forged signature — and must answer as the contract says, in its API's error
 * shape, and write nothing (a digest of every table before and after). A control call by a caller
 * with access then shows that the request reached the resource (so a 404 above is not an accident
 * of a wrong id). An operation of openapi.json without an entry or a reasoned exemption fails.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../helpers/app.ts';
import {
  type Denial,
  defaultParams,
  type Exemption,
  MATRIX,
  type MatrixEntry,
  matrixGaps,
} from './access-matrix.ts';
import {
  type AccessWorld,
  buildAccessWorld,
  type Caller,
  credentialsOf,
  databaseFingerprint,
  forgeUploadUrl,
  localPath,
} from './access-world.ts';

type Schema = Record<string, unknown>;
interface SpecOperation {
  operationId: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface Spec {
  paths: Record<string, Record<string, SpecOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

const spec = JSON.parse(readFileSync('openapi.json', 'utf8')) as Spec;
const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

function resolve(schema: Schema | undefined): Schema {
  const ref = schema?.$ref as string | undefined;
  return ref ? (spec.components?.schemas?.[ref.split('/').pop() ?? ''] ?? {}) : (schema ?? {});
}

/** A minimal value that passes the schema (required fields only). */
function exampleOf(raw: Schema | undefined): unknown {
  const schema = resolve(raw);
  if (schema.anyOf) return exampleOf((schema.anyOf as Schema[])[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum) return (schema.enum as unknown[])[0];
  if (schema.const !== undefined) return schema.const;
  if (type === 'object') {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    return Object.fromEntries(((schema.required ?? []) as string[]).map((k) => [k, exampleOf(props[k])]));
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return (schema.minimum as number | undefined) ?? 1;
  if (type === 'boolean') return true;
  if (schema.format === 'uuid') return crypto.randomUUID();
  if (schema.format === 'email') return 'someone@example.com';
  if (schema.format === 'uri') return 'https://example.com';
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  return 'x'.repeat(Math.max(1, (schema.minLength as number | undefined) ?? 1));
}

const isEntry = (e: MatrixEntry | Exemption | undefined): e is MatrixEntry => e !== undefined && 'as' in e;

/** One request of an operation as a caller. */
async function call(
  w: AccessWorld,
  o: (typeof operations)[number],
  entry: MatrixEntry,
  caller: Caller,
  mode: 'allow' | 'deny',
) {
  const params = { ...defaultParams(w), ...entry.params?.(w, mode) };
  let url = o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${o.op.operationId}`);
    return encodeURIComponent(value);
  });
  if (o.op.operationId === 'putSourceUpload') {
    url = caller === 'forged' ? forgeUploadUrl(w.upload.uploadUrl) : localPath(w.upload.uploadUrl);
  }
  if (entry.query) url += `?${entry.query(w)}`;
  const jsonSchema = o.op.requestBody?.content?.['application/json']?.schema;
  const payload = entry.raw
    ? entry.raw.body
    : entry.body
      ? JSON.stringify(entry.body(w, caller))
      : jsonSchema
        ? JSON.stringify(exampleOf(jsonSchema))
        : undefined;
  const headers: Record<string, string> = {
    ...(await credentialsOf(w, caller, entry.scope)),
    ...(payload !== undefined ? { 'content-type': entry.raw?.contentType ?? 'application/json' } : {}),
    ...entry.headers?.(w, caller, payload ?? ''),
  };
  return w.t.app.inject({ method: o.method as 'GET', url, headers, payload });
}

/** The error body of the operation's API: v1 `{error, code}`, v0 `{msg}`. */
function expectErrorShape(path: string, body: string, label: string) {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  if (path.startsWith('/api/scanner/v1') || path.startsWith('/uploads/')) {
    expect(typeof parsed.error === 'string' && typeof parsed.code === 'string', label).toBe(true);
  } else {
    expect(typeof parsed.msg, label).toBe('string');
  }
}

let w: AccessWorld;
const t = sharedTestApp({
  env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32', VIGIL_RATE_LIMIT_PER_MINUTE: '1000000' },
});
beforeAll(async () => {
  w = await buildAccessWorld(t);
}, 120_000);

describe('isolation matrix from openapi.json', () => {
  it('has an entry or a reasoned exemption for every operation, and no stale entry', () => {
    const gaps = matrixGaps(
      operations.map((o) => o.op.operationId),
      MATRIX,
    );
    expect(gaps).toEqual({ missing: [], stale: [] });
    for (const [id, entry] of Object.entries(MATRIX)) {
      if (isEntry(entry)) expect(Object.keys(entry.deny).length, id).toBeGreaterThan(0);
      else expect(entry.exempt.length, id).toBeGreaterThan(20);
    }
  });

  it('fails for an operation added to openapi.json without an entry', () => {
    const ids = [...operations.map((o) => o.op.operationId), 'exportEverything'];
    expect(matrixGaps(ids, MATRIX).missing).toEqual(['exportEverything']);
    const { getHealth: _removed, ...rest } = MATRIX;
    expect(matrixGaps(ids, rest).missing).toEqual(['getHealth', 'exportEverything']);
    expect(matrixGaps(['getHealth'], MATRIX).stale.length).toBe(Object.keys(MATRIX).length - 1);
  });

  it('covers the path scopes: every company, repository, finding and v1 resource path has denials', () => {
    for (const o of operations) {
      const entry = MATRIX[o.op.operationId];
      if (!isEntry(entry)) continue;
      const deny = entry.deny;
      if (/\{company_?[iI]d\}/.test(o.path)) {
        // Platform administration answers 403 to everyone without the permission, whatever the company.
        const expected = o.path.startsWith('/api/v0/admin/') ? 403 : 404;
        if (typeof deny.otherManager === 'number') expect(deny.otherManager, o.op.operationId).toBe(expected);
        else expect(deny.otherManager?.hides, o.op.operationId).toBeDefined();
      }
      if (/\{repo_?[iI]d\}/.test(o.path) && o.op.operationId !== 'joinRepository') {
        for (const c of ['otherManager', 'outsideReviewer', 'outsideJudge', 'outsideTriager'] as const)
          expect(deny[c], `${o.op.operationId} ${c}`).toBe(404);
      }
      if (o.path.includes('{finding_ref}')) expect(deny.otherReviewer, o.op.operationId).toBe(404);
      if (o.path.startsWith('/api/scanner/v1')) {
        expect(deny.keyWithoutScope, o.op.operationId).toBe(403);
        expect(deny.anonymous, o.op.operationId).toBe(401);
      }
      if (o.path.startsWith('/api/scanner/v1') && /\{(scanId|uploadId|findingId)\}/.test(o.path))
        expect(deny.otherKey, o.op.operationId).toBe(404);
    }
  });

  for (const o of operations) {
    const entry = MATRIX[o.op.operationId];
    if (!isEntry(entry)) continue;
    const summary = Object.entries(entry.deny)
      .map(([c, d]) => `${c} → ${typeof d === 'number' ? d : `${d.status} without the resource`}`)
      .join(', ');
    it(`${o.op.operationId}: ${summary}`, async () => {
      for (const [caller, denial] of Object.entries(entry.deny) as Array<[Caller, Denial]>) {
        await credentialsOf(w, caller, entry.scope); // creates a key on first use: before the digest
        const before = await databaseFingerprint(t);
        const res = await call(w, o, entry, caller, 'deny');
        const label = `${o.method} ${o.path} as ${caller} → ${res.statusCode} ${res.body.slice(0, 300)}`;
        if (typeof denial === 'number') {
          expect(res.statusCode, label).toBe(denial);
          expectErrorShape(o.path, res.body, label);
        } else {
          expect(res.statusCode, label).toBe(denial.status);
          for (const id of denial.hides(w)) expect(res.body, `${label} shows ${id}`).not.toContain(id);
        }
        const after = await databaseFingerprint(t);
        const written = Object.keys(after).filter((table) => after[table] !== before[table]);
        expect(
          written.filter((table) => !entry.mayWrite?.includes(table)),
          `${label} wrote`,
        ).toEqual([]);
      }
      const control = await call(w, o, entry, entry.as, 'allow');
      const label = `control: ${o.method} ${o.path} as ${entry.as} → ${control.statusCode} ${control.body.slice(0, 300)}`;
      if (entry.ok !== undefined) expect(control.statusCode, label).toBe(entry.ok);
      else expect(control.statusCode >= 200 && control.statusCode < 300, label).toBe(true);
    });
  }
});
