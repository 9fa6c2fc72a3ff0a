import { eq } from 'drizzle-orm';
import { expect, it } from 'vitest';
import type { Scope } from '../../src/auth/credentials.ts';
import { SCOPES } from '../../src/auth/credentials.ts';
import { serviceKeys, userTokens } from '../../src/db/schema/index.ts';
import type { TestApp } from './app.ts';
import { buildCompany, buildServiceKey, buildUser } from './factories.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface ServiceRouteUnderTest {
  method: Method;
  /** The scope the route requires. */
  scope: Scope;
  /** Builds a valid request for `companyId` (creating what it needs) and returns its URL and body. */
  request(
    t: TestApp,
    companyId: string,
  ): Promise<{ url: string; payload?: unknown; headers?: Record<string, string> }>;
  /** Whether a request to another organization's resource should answer 404 (routes with a resource id). */
  crossTenant?: boolean;
}

function expectV1Error(res: { statusCode: number; json(): unknown }, status: number) {
  expect(res.statusCode).toBe(status);
  const body = res.json() as { error?: unknown; code?: unknown };
  expect(typeof body.error).toBe('string');
  expect(typeof body.code).toBe('string');
}

/**
 * The auth cases every v1 route must pass: no credential, malformed, expired and revoked keys →
 * 401; a key without the scope → 403; another organization's resource → 404. Call inside a
 * describe block; `getApp` returns the suite's app.
 */
export function itEnforcesServiceAuth(getApp: () => TestApp, route: ServiceRouteUnderTest): void {
  const send = async (
    t: TestApp,
    req: { url: string; payload?: unknown; headers?: Record<string, string> },
    headers: Record<string, string>,
  ) =>
    t.app.inject({
      method: route.method,
      url: req.url,
      payload: req.payload as object | undefined,
      headers: { ...req.headers, ...headers },
    });

  it('answers 401 without a credential', async () => {
    const t = getApp();
    const company = await buildCompany(t);
    const req = await route.request(t, company.id);
    expectV1Error(await send(t, req, {}), 401);
  });

  it('answers 401 for a malformed or unknown key', async () => {
    const t = getApp();
    const company = await buildCompany(t);
    const req = await route.request(t, company.id);
    expectV1Error(await send(t, req, { authorization: 'Bearer not-a-key' }), 401);
    expectV1Error(await send(t, req, { 'x-api-key': `vgl_sk_${'A'.repeat(40)}` }), 401);
    expectV1Error(await send(t, req, { authorization: 'Basic Zm9vOmJhcg==' }), 401);
  });

  it('answers 401 for an expired key and for a revoked key', async () => {
    const t = getApp();
    const company = await buildCompany(t);
    const req = await route.request(t, company.id);
    const expired = await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] });
    await t.container.database.db
      .update(serviceKeys)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(serviceKeys.id, expired.id));
    expectV1Error(await send(t, req, { authorization: `Bearer ${expired.key}` }), 401);
    const revoked = await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] });
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/service-keys/${revoked.id}`,
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(del.statusCode).toBe(200);
    expectV1Error(await send(t, req, { 'x-api-key': revoked.key }), 401);
  });

  it(`answers 403 for a key without ${route.scope}`, async () => {
    const t = getApp();
    const company = await buildCompany(t);
    const req = await route.request(t, company.id);
    const others = SCOPES.filter((s) => s !== route.scope);
    const key = await buildServiceKey(t, { companyId: company.id, scopes: others });
    const res = await send(t, req, { authorization: `Bearer ${key.key}` });
    expectV1Error(res, 403);
    expect((res.json() as { code: string }).code).toBe('INSUFFICIENT_SCOPE');
  });

  if (route.crossTenant !== false) {
    it("answers 404 for another organization's resource", async () => {
      const t = getApp();
      const owner = await buildCompany(t);
      const req = await route.request(t, owner.id);
      const intruder = await buildCompany(t);
      const key = await buildServiceKey(t, { companyId: intruder.id, scopes: [...SCOPES] });
      expectV1Error(await send(t, req, { 'x-api-key': key.key }), 404);
    });
  }
}

export interface UserRouteUnderTest {
  method: Method;
  /** Builds a valid request for a company (creating what it needs) and a user allowed to make it. */
  request(t: TestApp, companyId: string): Promise<{ url: string; payload?: unknown; token: string }>;
  /** Whether an anonymous caller is allowed (public routes). */
  anonymousAllowed?: boolean;
  crossTenant?: boolean;
}

function expectV0Error(res: { statusCode: number; json(): unknown }, status: number) {
  expect(res.statusCode).toBe(status);
  expect(typeof (res.json() as { msg?: unknown }).msg).toBe('string');
}

/** The auth cases of a v0 route: no, malformed, expired and revoked tokens → 401; another company → 404. */
export function itEnforcesUserAuth(getApp: () => TestApp, route: UserRouteUnderTest): void {
  const send = (t: TestApp, req: { url: string; payload?: unknown }, headers: Record<string, string>) =>
    t.app.inject({ method: route.method, url: req.url, payload: req.payload as object | undefined, headers });

  if (!route.anonymousAllowed) {
    it('answers 401 without a token', async () => {
      const t = getApp();
      const company = await buildCompany(t);
      expectV0Error(await send(t, await route.request(t, company.id), {}), 401);
    });
  }

  it('answers 401 for malformed, expired and revoked tokens', async () => {
    const t = getApp();
    const company = await buildCompany(t);
    const req = await route.request(t, company.id);
    expectV0Error(await send(t, req, { authorization: 'Bearer nope' }), 401);
    const user = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    await t.container.database.db
      .update(userTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(userTokens.userId, user.id));
    expectV0Error(await send(t, req, { authorization: `Bearer ${user.token}` }), 401);
    const other = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    await t.container.database.db
      .update(userTokens)
      .set({ revokedAt: new Date() })
      .where(eq(userTokens.userId, other.id));
    expectV0Error(await send(t, req, { authorization: `Bearer ${other.token}` }), 401);
  });

  if (route.crossTenant !== false) {
    it("answers 404 for another company's resource", async () => {
      const t = getApp();
      const owner = await buildCompany(t);
      const req = await route.request(t, owner.id);
      const intruderCompany = await buildCompany(t);
      const intruder = await buildUser(t, { companyId: intruderCompany.id, companyRole: 'manager' });
      expectV0Error(await send(t, req, { authorization: `Bearer ${intruder.token}` }), 404);
    });
  }
}
