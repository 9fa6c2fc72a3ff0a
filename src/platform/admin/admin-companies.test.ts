import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany, buildServiceKey, buildUser } from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

describe('GET /api/v0/admin/companies (extension)', () => {
  it('lists every company by handle for a platform admin', async () => {
    const b = await buildCompany(t, { handle: 'list-b', name: 'B' });
    const a = await buildCompany(t, { handle: 'list-a', name: 'A' });
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(res.statusCode).toBe(200);
    const handles = (res.json().companies as Array<{ id: string; handle: string }>).map((c) => c.handle);
    expect(handles.indexOf('list-a')).toBeLessThan(handles.indexOf('list-b'));
    expect(res.json().companies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: a.id, name: 'A' }),
        expect.objectContaining({ id: b.id, name: 'B' }),
      ]),
    );
  });

  it('refuses users who are not platform admins, and service keys', async () => {
    const company = await buildCompany(t);
    const user = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    const asUser = await t.app.inject({
      method: 'GET',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(asUser.statusCode).toBe(403);
    expect(asUser.json()).toHaveProperty('msg');
    const key = await buildServiceKey(t, { companyId: company.id });
    const asKey = await t.app.inject({
      method: 'GET',
      url: '/api/v0/admin/companies',
      headers: { authorization: `Bearer ${key.key}` },
    });
    expect(asKey.statusCode).toBe(401);
    expect(asKey.json().msg).toMatch(/user API token.*not a service key/);
  });

  it('says a truncated service key is malformed instead of asking for a vgl_sk_ key', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': 'vgl_sk_abc123' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toMatch(/Malformed credential.*40 letters and digits.*got 6/);
  });
});
