import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/auth/credentials.ts';
import { serviceKeys, userTokens } from '../../src/db/schema/index.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany, buildCompanyWorld, buildServiceKey, buildUser } from '../helpers/factories.ts';

const t = sharedTestApp();

describe('service keys', () => {
  it('grants every scope but findings:write by default and stores only a hash', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    expect(key.scopes.sort()).toEqual(['credits:read', 'findings:read', 'scans:create', 'scans:read']);
    const [row] = await t.container.database.db.select().from(serviceKeys).where(eq(serviceKeys.id, key.id));
    expect(row!.hash).toBe(hashSecret(key.key));
    expect(JSON.stringify(row)).not.toContain(key.key);
  });

  it('grants findings:write only when asked for explicitly', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, {
      companyId: company.id,
      scopes: ['findings:read', 'findings:write'],
    });
    expect(key.scopes).toEqual(['findings:read', 'findings:write']);
  });

  it('shows the key once: the list has prefixes, never keys', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(key.key);
    expect(res.json().items[0]).toMatchObject({ id: key.id, prefix: key.key.slice(0, 11) });
  });

  it('accepts the key as Bearer and as X-API-Key, and refuses it once revoked', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    const bearer = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { authorization: `Bearer ${key.key}` },
    });
    const apiKey = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': key.key },
    });
    expect([bearer.statusCode, apiKey.statusCode]).toEqual([200, 200]);
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/service-keys/${key.id}`,
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(revoke.json().revokedAt).not.toBeNull();
    const after = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': key.key },
    });
    expect(after.statusCode).toBe(401);
    expect(after.json().code).toBe('INVALID_CREDENTIAL');
  });

  it('refuses a user token on a v1 route and a service key on a v0 route', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    const v1 = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(v1.statusCode).toBe(401);
    const v0 = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(v0.statusCode).toBe(401);
    expect(v0.json()).toEqual({ msg: expect.any(String) });
  });

  it('lets company managers manage keys, not members, and hides other companies', async () => {
    const { company } = await buildCompanyWorld(t);
    const member = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const other = await buildCompanyWorld(t);
    const asMember = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: { authorization: `Bearer ${member.token}` },
      payload: { name: 'k' },
    });
    expect(asMember.statusCode).toBe(403);
    const asOther = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/service-keys`,
      headers: { authorization: `Bearer ${other.manager.token}` },
      payload: { name: 'k' },
    });
    expect(asOther.statusCode).toBe(404);
  });
});

describe('user tokens', () => {
  it('requires an expiry in the future and within a year', async () => {
    const user = await buildUser(t);
    const past = await t.app.inject({
      method: 'POST',
      url: `/api/v0/admin/users/${user.id}/tokens`,
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: { expiresAt: '2001-01-01T00:00:00Z' },
    });
    expect(past.statusCode).toBe(400);
    const far = await t.app.inject({
      method: 'POST',
      url: `/api/v0/admin/users/${user.id}/tokens`,
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: { expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() },
    });
    expect(far.statusCode).toBe(400);
    const [row] = await t.container.database.db
      .select()
      .from(userTokens)
      .where(eq(userTokens.userId, user.id));
    expect(row!.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(row!.hash).toBe(hashSecret(user.token));
  });

  it('stops working once revoked and when the user is disabled', async () => {
    const user = await buildUser(t, { permissions: ['admin'] });
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${user.token}` },
      payload: { name: 'X', handle: `h-${user.id.slice(0, 8)}` },
    });
    expect(ok.statusCode).toBe(201);
    const [token] = await t.container.database.db
      .select()
      .from(userTokens)
      .where(eq(userTokens.userId, user.id));
    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/api/v0/admin/users/${user.id}/tokens/${token!.id}`,
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(revoke.statusCode).toBe(204);
    const after = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${user.token}` },
      payload: { name: 'Y', handle: 'yy-y' },
    });
    expect(after.statusCode).toBe(401);
  });

  it('keeps management to platform admins', async () => {
    const user = await buildUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${user.token}` },
      payload: { name: 'Z', handle: 'zz-z' },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('company membership', () => {
  it('lets an invited user act for the company only after joining', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const outsider = await buildUser(t);
    const invite = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/users`,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { username: outsider.username, role: 'member' },
    });
    expect(invite.statusCode).toBeLessThan(300);
    const list = () =>
      t.app.inject({
        method: 'GET',
        url: `/api/v0/companies/${company.id}/users`,
        headers: { authorization: `Bearer ${outsider.token}` },
      });
    expect((await list()).statusCode).toBe(404);
    const join = await t.app.inject({
      method: 'POST',
      url: `/api/v0/invitations/${invite.json().id}/accept`,
      headers: { authorization: `Bearer ${outsider.token}` },
    });
    expect(join.statusCode).toBeLessThan(300);
    expect((await list()).statusCode).toBe(200);
  });
});

describe('first start', () => {
  it('creates the admin once, with the given token, and never again', async () => {
    const again = await t.container.services.admin.bootstrapAdmin({ token: null });
    expect(again).toBeNull();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: { name: 'B', handle: 'boot-strap' },
    });
    expect(res.statusCode).toBe(201);
  });

  it('refuses a VIGIL_ADMIN_TOKEN that is not a user token', async () => {
    await expect(t.container.services.admin.bootstrapAdmin({ token: 'secret' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });
});
