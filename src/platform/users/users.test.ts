import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompany, buildCompanyWorld, buildUser } from '../../../test/helpers/factories.ts';
import { users } from '../../db/schema/index.ts';

const t = sharedTestApp();

interface CompanyUserBody {
  userId: string;
  name: string;
  username: string;
  email: string | null;
  isActivated: boolean;
  companyRole: string;
  joinedAt: string | null;
  disabledAt: string | null;
  deletedAt: string | null;
  [key: string]: unknown;
}

interface AuditItem {
  action: string;
  target: { userId: string } | null;
  createdBy: { userId: string } | null;
  details: Record<string, unknown>;
}

async function listUsers(companyId: string, token: string, query = ''): Promise<CompanyUserBody[]> {
  return (
    await apiOk<{ users: CompanyUserBody[] }>(t, 'GET', `/api/v0/companies/${companyId}/users${query}`, token)
  ).users;
}

async function auditOf(companyId: string): Promise<AuditItem[]> {
  return (
    await apiOk<{ items: AuditItem[] }>(
      t,
      'GET',
      `/api/v0/companies/${companyId}/audit-log?limit=100`,
      t.adminToken,
    )
  ).items;
}

describe('GET /api/v0/companies/{company_id}/users', () => {
  it('returns every field of a company user', async () => {
    const company = await buildCompany(t);
    const user = await buildUser(t, {
      companyId: company.id,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
    });
    await apiOk(t, 'PATCH', `/api/v0/users/${user.id}/profile`, user.token, {
      chat_a: 'ada#1',
      chat_b: '@ada',
      timezone: 'Europe/London',
      avatar: 'https://img.example/ada.png',
    });
    const [row] = await listUsers(company.id, user.token);
    expect(row).toEqual({
      userId: user.id,
      name: 'Ada Lovelace',
      username: user.username,
      email: 'ada@example.com',
      isActivated: true,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
      isBot: false,
      companyId: company.id,
      avatar: 'https://img.example/ada.png',
      isGeneratedAvatar: false,
      chat_a: 'ada#1',
      chat_b: '@ada',
      timezone: 'Europe/London',
      disabledAt: null,
      companyRole: 'member',
      invitedAt: expect.any(String),
      joinedAt: expect.any(String),
      deletedAt: null,
    });
  });

  it('lists only active users by default; include_all adds disabled and deleted users, never invited people', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const disabled = await buildUser(t, { companyId: company.id });
    const deleted = await buildUser(t, { companyId: company.id });
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/users/${disabled.id}/disable`, manager.token);
    await t.container.database.db
      .update(users)
      .set({ deletedAt: new Date() })
      .where(eq(users.id, deleted.id));
    // An invited person is an invitation until they accept: not a company user, in no list.
    const outsider = await buildUser(t, { email: `outsider${Date.now()}@example.com` });
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/users`, manager.token, {
      username: outsider.username,
    });

    const active = await listUsers(company.id, member.token);
    expect(active.map((u) => u.userId).sort()).toEqual([manager.id, member.id].sort());
    const all = await listUsers(company.id, member.token, '?include_all=true');
    expect(all.map((u) => u.userId).sort()).toEqual([manager.id, member.id, disabled.id, deleted.id].sort());
    expect(all.find((u) => u.userId === disabled.id)!.disabledAt).not.toBeNull();
    expect(all.find((u) => u.userId === deleted.id)!.deletedAt).not.toBeNull();
    expect(await listUsers(company.id, member.token, '?include_all=false')).toHaveLength(2);
  });

  it('searches name and username case-insensitively, literally', async () => {
    const company = await buildCompany(t);
    const a = await buildUser(t, {
      companyId: company.id,
      username: `Grace${Date.now()}`,
      name: 'Grace Hopper',
    });
    const b = await buildUser(t, { companyId: company.id, name: 'Alan 100% Turing' });
    expect((await listUsers(company.id, a.token, '?q=HOPPER')).map((u) => u.userId)).toEqual([a.id]);
    expect(
      (await listUsers(company.id, a.token, `?q=${a.username.toLowerCase().slice(0, 7)}`)).map(
        (u) => u.userId,
      ),
    ).toEqual([a.id]);
    expect((await listUsers(company.id, a.token, '?q=100%25')).map((u) => u.userId)).toEqual([b.id]);
    expect(await listUsers(company.id, a.token, '?q=_')).toEqual([]);
  });

  it('orders users by username', async () => {
    const company = await buildCompany(t);
    const suffix = Date.now().toString(36);
    const b = await buildUser(t, { companyId: company.id, username: `b${suffix}` });
    const a = await buildUser(t, { companyId: company.id, username: `A${suffix}` });
    expect((await listUsers(company.id, b.token)).map((u) => u.userId)).toEqual([a.id, b.id]);
  });

  it('is for company users and read_all_companies admins', async () => {
    const { company } = await buildCompanyWorld(t);
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    expect((await api(t, 'GET', `/api/v0/companies/${company.id}/users`, reader.token)).statusCode).toBe(200);
    const stranger = await buildUser(t);
    expect((await api(t, 'GET', `/api/v0/companies/${company.id}/users`, stranger.token)).statusCode).toBe(
      404,
    );
  });

  it('answers 400 naming the parameter for invalid values', async () => {
    const { company, member } = await buildCompanyWorld(t);
    for (const [query, name] of [
      ['?include_all=maybe', 'include_all'],
      ['?q=' + 'x'.repeat(201), 'q'],
      ['?bogus=1', 'bogus'],
    ] as const) {
      const res = await api(t, 'GET', `/api/v0/companies/${company.id}/users${query}`, member.token);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().msg).toContain(name);
    }
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const user = await buildUser(app, { companyId });
      return { url: `/api/v0/companies/${companyId}/users`, token: user.token };
    },
  });
});

describe('POST /api/v0/companies/{company_id}/users without e-mail configured', () => {
  it('refuses an invitation by e-mail address alone (422): its secret could reach nobody', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const res = await api(t, 'POST', `/api/v0/companies/${company.id}/users`, manager.token, {
      email: 'someone@example.com',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().msg).toContain('invite by username');
    const invitations = await apiOk<{ invitations: unknown[] }>(
      t,
      'GET',
      `/api/v0/companies/${company.id}/invitations`,
      manager.token,
    );
    expect(invitations.invitations).toEqual([]);
  });
});

describe('joining a company', () => {
  it('auto-joins a user whose email domain has an SSO rule of the company', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const domain = `corp${Date.now()}.example`;
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/sso-enforcement-rules`, manager.token, {
      domain,
    });
    const user = await buildUser(t, { email: `alice@${domain.toUpperCase()}` });
    const res = await api(t, 'POST', `/api/v0/companies/${company.id}/users/${user.id}/join`, user.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ companyRole: 'member', isActivated: true });
    const [entry] = await auditOf(company.id);
    expect(entry).toMatchObject({
      action: 'user_auto_joined',
      target: { userId: user.id },
      details: { via: 'sso_domain', domain },
    });
    expect((await listUsers(company.id, user.token)).some((u) => u.userId === user.id)).toBe(true);
  });

  it('answers 404 without a matching domain; for another user’s join 404 to outsiders, 403 to company users; 403 for a disabled membership', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const stranger = await buildUser(t, { email: 'x@nowhere.example' });
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${stranger.id}/join`, stranger.token))
        .statusCode,
    ).toBe(404);
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/join`, stranger.token))
        .statusCode,
    ).toBe(404);
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/join`, manager.token))
        .statusCode,
    ).toBe(403);
    // Joining again, already a user: nothing changes.
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/join`, member.token))
        .statusCode,
    ).toBe(200);
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/disable`, manager.token);
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/join`, member.token))
        .statusCode,
    ).toBe(403);
  });
});

describe('disabling, re-enabling and role changes', () => {
  it('disables and re-enables a user, each audited once, and the disabled user loses access', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const disable = () =>
      api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/disable`, manager.token);
    const reenable = () =>
      api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/reenable`, manager.token);
    const first = await disable();
    expect(first.statusCode).toBe(200);
    expect(first.json().disabledAt).not.toBeNull();
    expect((await disable()).statusCode).toBe(200);
    expect((await api(t, 'GET', `/api/v0/companies/${company.id}/users`, member.token)).statusCode).toBe(404);
    const back = await reenable();
    expect(back.json().disabledAt).toBeNull();
    expect((await reenable()).statusCode).toBe(200);
    expect((await api(t, 'GET', `/api/v0/companies/${company.id}/users`, member.token)).statusCode).toBe(200);
    const actions = (await auditOf(company.id))
      .filter((e) => e.target?.userId === member.id)
      .map((e) => e.action);
    expect(actions).toEqual(['user_reenabled', 'user_disabled', 'user_invited']);
    const disabled = (await auditOf(company.id)).find((e) => e.action === 'user_disabled')!;
    expect(disabled.createdBy!.userId).toBe(manager.id);
  });

  it('changes a company role, audited with from and to; the same role writes nothing', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const url = `/api/v0/companies/${company.id}/users/${member.id}`;
    const res = await api(t, 'PATCH', url, manager.token, { role: 'manager' });
    expect(res.statusCode).toBe(200);
    expect(res.json().companyRole).toBe('manager');
    await apiOk(t, 'PATCH', url, manager.token, { role: 'manager' });
    const changes = (await auditOf(company.id)).filter((e) => e.action === 'company_role_changed');
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      target: { userId: member.id },
      createdBy: { userId: manager.id },
      details: { from: 'member', to: 'manager' },
    });
    // The new manager may now manage.
    expect(
      (
        await api(t, 'POST', `/api/v0/companies/${company.id}/users`, member.token, {
          username: `y${Date.now()}`,
        })
      ).statusCode,
    ).toBe(202);
  });

  it('keeps at least one active manager (409)', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const demote = await api(
      t,
      'PATCH',
      `/api/v0/companies/${company.id}/users/${manager.id}`,
      t.adminToken,
      { role: 'member' },
    );
    expect(demote.statusCode).toBe(409);
    const disable = await api(
      t,
      'POST',
      `/api/v0/companies/${company.id}/users/${manager.id}/disable`,
      t.adminToken,
    );
    expect(disable.statusCode).toBe(409);
  });

  it('answers 404 for a user who is not in the company, 403 for members, 400 for an unknown role', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const stranger = await buildUser(t);
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${stranger.id}/disable`, t.adminToken))
        .statusCode,
    ).toBe(404);
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/disable`, member.token))
        .statusCode,
    ).toBe(403);
    const bad = await api(t, 'PATCH', `/api/v0/companies/${company.id}/users/${member.id}`, t.adminToken, {
      role: 'owner',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toContain('role');
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      const target = await buildUser(app, { companyId });
      return { url: `/api/v0/companies/${companyId}/users/${target.id}/disable`, token: manager.token };
    },
  });
});

describe('auditor profiles', () => {
  it('lets users change their own profile and platform admins everything, guilds created on demand', async () => {
    const user = await buildUser(t);
    const own = await api(t, 'PATCH', `/api/v0/users/${user.id}/profile`, user.token, {
      tagline: 'Breaks things',
      skills: ['solidity', 'rust'],
      website: 'https://me.example',
    });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({
      tagline: 'Breaks things',
      skills: ['solidity', 'rust'],
      reputation: 0,
      guildAffiliation: null,
    });
    expect(
      (await api(t, 'PATCH', `/api/v0/users/${user.id}/profile`, user.token, { reputation: 999 })).statusCode,
    ).toBe(403);
    const other = await buildUser(t);
    expect(
      (await api(t, 'PATCH', `/api/v0/users/${user.id}/profile`, other.token, { bio: 'x' })).statusCode,
    ).toBe(403);

    const guildName = `Guild ${Date.now()}`;
    const byAdmin = await apiOk<Record<string, unknown>>(
      t,
      'PATCH',
      `/api/v0/users/${user.id}/profile`,
      t.adminToken,
      {
        reputation: 42,
        verifiedProfile: true,
        isNdaSigned: true,
        guild: guildName,
      },
    );
    expect(byAdmin).toMatchObject({ reputation: 42, verifiedProfile: true, isNdaSigned: true });
    const guilds = (
      await apiOk<{ guilds: Array<{ id: string; name: string }> }>(t, 'GET', '/api/v0/guilds', null)
    ).guilds;
    expect(guilds.find((g) => g.name === guildName)!.id).toBe(byAdmin.guildAffiliation);

    const badge = await api(t, 'POST', `/api/v0/users/${user.id}/badges`, t.adminToken, {
      name: 'Top 10',
      image: 'https://img.example/top10.png',
      issuedAt: '2026-03-01T00:00:00.000Z',
    });
    expect(badge.statusCode).toBe(201);
    expect(badge.json().badges).toEqual([
      {
        id: expect.any(String),
        name: 'Top 10',
        image: 'https://img.example/top10.png',
        description: '',
        issuedAt: '2026-03-01T00:00:00.000Z',
      },
    ]);
    expect(
      (await api(t, 'POST', `/api/v0/users/${user.id}/badges`, user.token, { name: 'self' })).statusCode,
    ).toBe(403);
    const profile = await apiOk<Record<string, unknown>>(
      t,
      'GET',
      `/api/v0/users/${user.id}/profile`,
      other.token,
    );
    expect(profile).toMatchObject({ id: user.id, reputation: 42, tagline: 'Breaks things' });
  });
});

describe('auth cases of the membership and profile routes', () => {
  const managerAndUser = async (app: TestApp, companyId: string) => {
    const manager = await buildUser(app, { companyId, companyRole: 'manager' });
    const user = await buildUser(app, { companyId, companyRole: 'member' });
    return { manager, user };
  };

  describe('POST /api/v0/companies/{company_id}/users/{user_id}/join', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      request: async (app, companyId) => {
        const { user } = await managerAndUser(app, companyId);
        return { url: `/api/v0/companies/${companyId}/users/${user.id}/join`, token: user.token };
      },
    });
  });

  describe('POST /api/v0/companies/{company_id}/users/{user_id}/reenable', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      request: async (app, companyId) => {
        const { manager, user } = await managerAndUser(app, companyId);
        return { url: `/api/v0/companies/${companyId}/users/${user.id}/reenable`, token: manager.token };
      },
    });
  });

  describe('PATCH /api/v0/companies/{company_id}/users/{user_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'PATCH',
      request: async (app, companyId) => {
        const { manager, user } = await managerAndUser(app, companyId);
        return {
          url: `/api/v0/companies/${companyId}/users/${user.id}`,
          payload: { role: 'manager' },
          token: manager.token,
        };
      },
    });
  });

  describe('GET /api/v0/users/{user_id}/profile', () => {
    itEnforcesUserAuth(() => t, {
      method: 'GET',
      crossTenant: false,
      request: async (app) => {
        const user = await buildUser(app);
        return { url: `/api/v0/users/${user.id}/profile`, token: user.token };
      },
    });
  });

  describe('PATCH /api/v0/users/{user_id}/profile', () => {
    itEnforcesUserAuth(() => t, {
      method: 'PATCH',
      crossTenant: false,
      request: async (app) => {
        const user = await buildUser(app);
        return { url: `/api/v0/users/${user.id}/profile`, payload: { bio: 'hello' }, token: user.token };
      },
    });
  });

  describe('POST /api/v0/users/{user_id}/badges', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      crossTenant: false,
      request: async (app) => {
        const user = await buildUser(app);
        return { url: `/api/v0/users/${user.id}/badges`, payload: { name: 'Badge' }, token: app.adminToken };
      },
    });
  });
});
