import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompanyWorld, buildUser } from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

const url = (companyId: string) => `/api/v0/companies/${companyId}/sso-enforcement-rules`;
const domain = () => `d${randomBytes(5).toString('hex')}.example`;

describe('GET /api/v0/companies/{company_id}/sso-enforcement-rules', () => {
  it('lists the rules, oldest first, with the creator as a short user summary', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const first = domain();
    const second = domain();
    await apiOk(t, 'POST', url(company.id), manager.token, { domain: first });
    await apiOk(t, 'POST', url(company.id), t.adminToken, { domain: second });
    const res = await api(t, 'GET', url(company.id), manager.token);
    expect(res.statusCode).toBe(200);
    const rules = res.json() as Array<Record<string, unknown>>;
    expect(rules).toEqual([
      {
        id: expect.any(String),
        companyId: company.id,
        domain: first,
        createdAt: expect.stringMatching(/Z$/),
        createdBy: {
          userId: manager.id,
          name: manager.username,
          username: manager.username,
          avatar: null,
          disabledAt: null,
        },
      },
      expect.objectContaining({ domain: second, createdBy: expect.objectContaining({ username: 'admin' }) }),
    ]);
  });

  it('is for company managers and read_all_companies admins: members 403, others 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const stranger = await buildUser(t);
    expect((await api(t, 'GET', url(company.id), reader.token)).statusCode).toBe(200);
    expect((await api(t, 'GET', url(company.id), member.token)).statusCode).toBe(403);
    expect((await api(t, 'GET', url(company.id), stranger.token)).statusCode).toBe(404);
    expect((await api(t, 'GET', url('00000000-0000-4000-8000-000000000000'), t.adminToken)).statusCode).toBe(
      404,
    );
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: url(companyId), token: manager.token };
    },
  });
});

describe('POST and DELETE /api/v0/companies/{company_id}/sso-enforcement-rules', () => {
  it('stores the domain lower-case and refuses it again anywhere on the platform, in any case (409)', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const name = domain();
    const created = await api(t, 'POST', url(company.id), manager.token, { domain: name.toUpperCase() });
    expect(created.statusCode).toBe(201);
    expect(created.json().domain).toBe(name);
    const again = await api(t, 'POST', url(other.company.id), other.manager.token, {
      domain: name.replace('d', 'D'),
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ msg: expect.stringContaining(name) });
  });

  it('answers 400 naming domain for something that is not a domain', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    for (const bad of ['localhost', 'a b.com', 'http://x.com', '-x.com', '']) {
      const res = await api(t, 'POST', url(company.id), manager.token, { domain: bad });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().msg).toContain('domain');
    }
  });

  it('deletes a rule of the company only; then the domain is free again', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const name = domain();
    const rule = await apiOk<{ id: string }>(t, 'POST', url(company.id), manager.token, { domain: name });
    expect((await api(t, 'DELETE', `${url(company.id)}/${rule.id}`, member.token)).statusCode).toBe(403);
    expect(
      (await api(t, 'DELETE', `${url(other.company.id)}/${rule.id}`, other.manager.token)).statusCode,
    ).toBe(404);
    expect((await api(t, 'DELETE', `${url(company.id)}/${rule.id}`, manager.token)).statusCode).toBe(204);
    expect((await api(t, 'DELETE', `${url(company.id)}/${rule.id}`, manager.token)).statusCode).toBe(404);
    expect(await apiOk(t, 'GET', url(company.id), manager.token)).toEqual([]);
    expect(
      (await api(t, 'POST', url(other.company.id), other.manager.token, { domain: name })).statusCode,
    ).toBe(201);
  });

  it('is for company managers: members 403, read_all_companies readers 403, other companies 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const other = await buildCompanyWorld(t);
    expect((await api(t, 'POST', url(company.id), member.token, { domain: domain() })).statusCode).toBe(403);
    expect((await api(t, 'POST', url(company.id), reader.token, { domain: domain() })).statusCode).toBe(403);
    expect(
      (await api(t, 'POST', url(company.id), other.manager.token, { domain: domain() })).statusCode,
    ).toBe(404);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: url(companyId), payload: { domain: domain() }, token: manager.token };
    },
  });
});

describe('DELETE /api/v0/companies/{company_id}/sso-enforcement-rules/{rule_id}', () => {
  itEnforcesUserAuth(() => t, {
    method: 'DELETE',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      const rule = await apiOk<{ id: string }>(app, 'POST', url(companyId), manager.token, {
        domain: domain(),
      });
      return { url: `${url(companyId)}/${rule.id}`, token: manager.token };
    },
  });
});
