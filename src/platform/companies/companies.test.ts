import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildCompany,
  buildCompanyWorld,
  buildRepository,
  buildUser,
} from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

describe('GET and PATCH /api/v0/companies/{company_id}', () => {
  it('lets company managers change the profile; the repository company summary follows', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const handle = `acme-${randomBytes(3).toString('hex')}`;
    const res = await api(t, 'PATCH', `/api/v0/companies/${company.id}`, manager.token, {
      name: 'Acme Labs',
      handle,
      logo: 'https://img.example/acme.png',
      website: 'https://acme.example',
      sourcehost: 'acme',
      microblog: '@acme',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: company.id,
      name: 'Acme Labs',
      handle,
      logo: 'https://img.example/acme.png',
      website: 'https://acme.example',
      sourcehost: 'acme',
      microblog: '@acme',
      createdAt: expect.any(String),
    });
    expect((await apiOk(t, 'GET', `/api/v0/companies/${company.id}`, member.token)).name).toBe('Acme Labs');
    const repoView = await apiOk<{ company: Record<string, unknown> }>(
      t,
      'GET',
      `/api/v0/repositories/${repo.id}`,
      member.token,
    );
    expect(repoView.company).toEqual({
      id: company.id,
      name: 'Acme Labs',
      handle,
      logo: 'https://img.example/acme.png',
      website: 'https://acme.example',
      sourcehost: 'acme',
      microblog: '@acme',
    });
    const cleared = await apiOk(t, 'PATCH', `/api/v0/companies/${company.id}`, manager.token, { logo: null });
    expect(cleared.logo).toBeNull();
  });

  it('refuses a taken handle (409), an invalid one or an empty body (400)', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const other = await buildCompany(t);
    expect(
      (await api(t, 'PATCH', `/api/v0/companies/${company.id}`, manager.token, { handle: other.handle }))
        .statusCode,
    ).toBe(409);
    const bad = await api(t, 'PATCH', `/api/v0/companies/${company.id}`, manager.token, {
      handle: 'Not A Handle',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toContain('handle');
    expect((await api(t, 'PATCH', `/api/v0/companies/${company.id}`, manager.token, {})).statusCode).toBe(
      400,
    );
  });

  it('is for managers and platform admins: members 403, others 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const stranger = await buildUser(t);
    expect(
      (await api(t, 'PATCH', `/api/v0/companies/${company.id}`, member.token, { name: 'x' })).statusCode,
    ).toBe(403);
    expect(
      (await api(t, 'PATCH', `/api/v0/companies/${company.id}`, stranger.token, { name: 'x' })).statusCode,
    ).toBe(404);
    expect((await api(t, 'GET', `/api/v0/companies/${company.id}`, stranger.token)).statusCode).toBe(404);
    expect(
      (await api(t, 'PATCH', `/api/v0/companies/${company.id}`, t.adminToken, { name: 'By admin' }))
        .statusCode,
    ).toBe(200);
  });

  itEnforcesUserAuth(() => t, {
    method: 'PATCH',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: `/api/v0/companies/${companyId}`, payload: { name: 'Renamed' }, token: manager.token };
    },
  });
});

describe('guilds', () => {
  it('lists guilds publicly; platform admins create them, names unique case-insensitively', async () => {
    const name = `Guild ${randomBytes(3).toString('hex')}`;
    const created = await api(t, 'POST', '/api/v0/guilds', t.adminToken, { name });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name, id: expect.any(String) });
    expect(
      (await api(t, 'POST', '/api/v0/guilds', t.adminToken, { name: name.toLowerCase() })).statusCode,
    ).toBe(409);
    const user = await buildUser(t);
    expect((await api(t, 'POST', '/api/v0/guilds', user.token, { name: 'Mine' })).statusCode).toBe(403);
    expect((await api(t, 'POST', '/api/v0/guilds', null, { name: 'Mine' })).statusCode).toBe(401);
    expect((await api(t, 'POST', '/api/v0/guilds', t.adminToken, { name: '   ' })).statusCode).toBe(400);
    const listed = await apiOk<{ guilds: Array<{ name: string }> }>(t, 'GET', '/api/v0/guilds', null);
    expect(listed.guilds.map((g) => g.name)).toContain(name);
  });
});

describe('GET /api/v0/companies/{company_id}', () => {
  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const member = await buildUser(app, { companyId });
      return { url: `/api/v0/companies/${companyId}`, token: member.token };
    },
  });
});

describe('GET /api/v0/guilds', () => {
  itEnforcesUserAuth(() => t, {
    method: 'GET',
    anonymousAllowed: true,
    crossTenant: false,
    request: async (app) => ({ url: '/api/v0/guilds', token: app.adminToken }),
  });
});

describe('POST /api/v0/guilds', () => {
  itEnforcesUserAuth(() => t, {
    method: 'POST',
    crossTenant: false,
    request: async (app) => ({
      url: '/api/v0/guilds',
      payload: { name: `G ${randomBytes(3).toString('hex')}` },
      token: app.adminToken,
    }),
  });
});
