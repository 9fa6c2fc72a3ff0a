import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany, buildServiceKey } from '../helpers/factories.ts';

const t = sharedTestApp({ env: { VIGIL_BODY_LIMIT_BYTES: '2048' } });

const admin = () => ({ authorization: `Bearer ${t.adminToken}` });

describe('error responses', () => {
  it('names the failing body field in a v0 validation error', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: admin(),
      payload: { name: 'A' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ msg: expect.stringContaining("'handle'") });
    expect(res.headers['x-error-code']).toBe('VALIDATION_FAILED');
  });

  it('names an unknown body field and a wrongly typed one', async () => {
    const extra = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: admin(),
      payload: { name: 'A', handle: 'abc', color: 'red' },
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().msg).toContain("'color'");
    const typed = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies/00000000-0000-4000-8000-000000000000/credits',
      headers: admin(),
      payload: { amount: 'lots' },
    });
    expect(typed.statusCode).toBe(400);
    expect(typed.json().msg).toContain("'amount'");
  });

  it('answers v1 validation errors as {error, code} naming the field', async () => {
    const company = await buildCompany(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: admin(),
      payload: { name: 'k', scopes: ['everything'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toContain('scopes');
  });

  it('answers unknown routes with 404 in the shape of the API', async () => {
    const v1 = await t.app.inject({ method: 'GET', url: '/api/scanner/v1/nothing-here' });
    expect(v1.statusCode).toBe(404);
    expect(v1.json()).toEqual({ error: expect.any(String), code: 'ROUTE_NOT_FOUND' });
    const v0 = await t.app.inject({ method: 'GET', url: '/api/v0/nothing-here' });
    expect(v0.statusCode).toBe(404);
    expect(v0.json()).toEqual({ msg: expect.any(String) });
  });

  it('answers a known path with another method as 405 with Allow', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/scanner/v1/credits' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expect(res.json().code).toBe('METHOD_NOT_ALLOWED');
    const v0 = await t.app.inject({ method: 'PATCH', url: '/api/v0/admin/companies' });
    expect(v0.statusCode).toBe(405);
    expect(v0.json()).toEqual({ msg: expect.any(String) });
  });

  it('answers malformed JSON with 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { ...admin(), 'content-type': 'application/json' },
      payload: '{"name": "A",',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['x-error-code']).toBe('MALFORMED_JSON');
    expect(res.json()).toEqual({ msg: expect.stringContaining('JSON') });
  });

  it('answers a body over the limit with 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { ...admin(), 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(5000), handle: 'big' }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ msg: expect.any(String) });
  });

  it('answers an unsupported media type with 415', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: { ...admin(), 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expect(res.statusCode).toBe(415);
    expect(res.headers['x-error-code']).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(key.key).toMatch(/^vgl_sk_/);
  });

  it('answers an unexpected failure with 500, a request id and no internals', async () => {
    const app = await buildApp(t.container);
    // Every /api/ route declares its success answer (src/http/response-schemas.ts).
    const schema = { response: { 200: { type: 'object' } } };
    app.get('/api/scanner/v1/test-failure', { schema, config: { auth: { kind: 'none' } } }, async () => {
      throw new Error('select secret_column from hidden_table -- at Object.<anonymous> (/src/x.ts:1:1)');
    });
    app.get('/api/v0/test-failure', { schema, config: { auth: { kind: 'none' } } }, async () => {
      throw new Error('relation "users" does not exist');
    });
    await app.ready();
    const v1 = await app.inject({
      method: 'GET',
      url: '/api/scanner/v1/test-failure',
      headers: { 'x-request-id': 'req-123' },
    });
    expect(v1.statusCode).toBe(500);
    expect(v1.json()).toEqual({ error: 'Internal server error.', code: 'INTERNAL', requestId: 'req-123' });
    expect(v1.body).not.toMatch(/select|hidden_table|\.ts:/);
    const v0 = await app.inject({ method: 'GET', url: '/api/v0/test-failure' });
    expect(v0.statusCode).toBe(500);
    expect(v0.json().msg).toContain(v0.headers['x-request-id']);
    expect(v0.body).not.toContain('relation');
    await app.close();
  });
});
