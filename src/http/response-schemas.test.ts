import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { requireResponseSchemas, responseSchemaProblem } from './response-schemas.ts';

const t = sharedTestApp();

type Operation = { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> };

describe('response schemas of the API routes', () => {
  it('every operation declares a schema for each of its success codes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json() as { paths: Record<string, Record<string, Operation>> };
    const missing: string[] = [];
    let checked = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const success = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
        if (success.length === 0) missing.push(`${method} ${path}: no success response`);
        for (const [status, response] of success) {
          checked += 1;
          if (status === '204') continue;
          const schemas = Object.values(response.content ?? {}).map((c) => c.schema);
          if (schemas.length === 0 || schemas.some((schema) => schema === undefined))
            missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('the app refuses to register an API route without one', async () => {
    expect(responseSchemaProblem({ url: '/api/v0/x', method: 'GET', schema: {} })).toMatch(/no success/);
    expect(
      responseSchemaProblem({ url: '/api/v0/x', method: 'GET', schema: { response: { 400: {} } } }),
    ).toMatch(/no success/);
    expect(
      responseSchemaProblem({ url: '/api/v0/x', method: 'GET', schema: { response: { 200: {} } } }),
    ).toMatch(/no schema for 200/);
    expect(
      responseSchemaProblem({ url: '/api/v0/x', method: 'DELETE', schema: { response: { 204: {} } } }),
    ).toBeNull();
    expect(responseSchemaProblem({ url: '/healthz', method: 'GET' })).toBeNull();

    const app = Fastify();
    requireResponseSchemas(app);
    const registered = (async () => {
      app.get('/api/v0/bare', async () => ({ secret: 'leaks' }));
      await app.ready();
    })();
    await expect(registered).rejects.toThrow('GET /api/v0/bare declares no success response schema');
    await app.close().catch(() => undefined);
  });
});
