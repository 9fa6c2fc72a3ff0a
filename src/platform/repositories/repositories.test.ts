import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  addMember,
  buildCompany,
  buildCompanyWorld,
  buildFinding,
  buildMember,
  buildRepository,
  buildUser,
} from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

interface RepositoryBody {
  id: string;
  name: string;
  totalFindings: number;
  reward: string;
  rank: number;
  rankTotal: number;
  role: string | null;
  isPublic: boolean;
  finishedAt: string | null;
  assetGroups: Array<{
    id: string;
    name: string;
    rewards: Array<{ minReward: string; maxReward: string }>;
    assets: Array<{ id: string; name: string }>;
    subGroups: Array<{ id: string; name: string; assets: Array<{ id: string; name: string }> }>;
  }>;
  safeHarbor: { id: string; returnAddresses: Array<{ id: string; address: string }> } | null;
  [key: string]: unknown;
}

const fullRepository = {
  url: 'https://example.com/acme/vault',
  currencyCode: 'USDC',
  kycRequired: true,
  timeframe: { start: '2026-01-01T00:00:00.000Z', end: '2026-02-01T00:00:00.000Z' },
  totalRewardPot: '100000.50',
  submissionFee: '25',
  instructions: 'Read the docs.',
  requiredCtfAddress: '0xabc',
  allowedSeverities: ['critical', 'high', 'medium'],
  isPublic: false,
  assetGroups: [
    {
      name: 'Contracts',
      description: 'Core contracts',
      rewards: [{ minReward: '1000', maxReward: '50000' }],
      assets: [{ name: 'Vault.sol', description: 'the vault', reference: 'src/Vault.sol' }],
      subGroups: [{ name: 'Periphery', description: 'helpers', assets: [{ name: 'Router.sol' }] }],
    },
    { name: 'Frontend', outOfScope: true },
  ],
  safeHarbor: {
    description: 'Return funds',
    reward: '10',
    cap: '1000000',
    returnAddresses: [{ address: '0xreturn' }],
    assets: [{ name: 'Treasury', description: 'the treasury' }],
  },
};

/** Creates a repository through the endpoint under test, as the platform admin. */
const postRepository = (companyId: string, body: Record<string, unknown>) =>
  apiOk<{ id: string } & Record<string, unknown>>(
    t,
    'POST',
    `/api/v0/companies/${companyId}/repositories`,
    t.adminToken,
    { name: `repo-${randomUUID().slice(0, 8)}`, ...body },
  );

describe('GET /api/v0/companies/{company_id}/repositories', () => {
  it('returns every field of a repository, money as strings and dates as ISO 8601', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const created = await postRepository(company.id, { name: 'Vault', ...fullRepository });
    const res = await api(t, 'GET', `/api/v0/companies/${company.id}/repositories`, member.token);
    expect(res.statusCode).toBe(200);
    const [repo] = res.json().items as RepositoryBody[];
    expect(repo).toMatchObject({
      id: created.id,
      name: 'Vault',
      url: 'https://example.com/acme/vault',
      currencyCode: 'USDC',
      kycRequired: true,
      totalFindings: 0,
      timeframe: { start: '2026-01-01T00:00:00.000Z', end: '2026-02-01T00:00:00.000Z' },
      totalRewardPot: '100000.50',
      submissionFee: '25',
      instructions: 'Read the docs.',
      requiredCtfAddress: '0xabc',
      reward: '0',
      rank: 0,
      rankTotal: 0,
      allowedSeverities: ['critical', 'high', 'medium'],
      company: { id: company.id, name: company.name, handle: company.handle, logo: null, website: null },
      role: null,
    });
    expect(new Date(repo!.createdAt as string).toISOString()).toBe(repo!.createdAt);
    expect(repo!.assetGroups).toHaveLength(2);
    const [contracts, frontend] = repo!.assetGroups;
    expect(contracts).toMatchObject({
      name: 'Contracts',
      description: 'Core contracts',
      outOfScope: false,
      rewards: [{ minReward: '1000', maxReward: '50000' }],
      assets: [{ name: 'Vault.sol', description: 'the vault', reference: 'src/Vault.sol' }],
      subGroups: [
        {
          name: 'Periphery',
          description: 'helpers',
          assets: [{ name: 'Router.sol', description: '', reference: '' }],
        },
      ],
    });
    expect(frontend).toMatchObject({
      name: 'Frontend',
      outOfScope: true,
      assets: [],
      subGroups: [],
      rewards: [],
    });
    expect(repo!.safeHarbor).toMatchObject({
      description: 'Return funds',
      reward: '10',
      cap: '1000000',
      returnAddresses: [{ address: '0xreturn' }],
      assets: [{ name: 'Treasury', description: 'the treasury' }],
    });
    expect(repo!.safeHarbor!.returnAddresses[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('shows company users every repository, other users the joined and the public ones', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const privateJoined = await buildRepository(t, { companyId: company.id, name: 'private-joined' });
    const privateOther = await buildRepository(t, { companyId: company.id, name: 'private-other' });
    const publicRepo = await buildRepository(t, { companyId: company.id, name: 'public', isPublic: true });
    const reviewer = await buildMember(t, { repositoryId: privateJoined.id, role: 'reviewer' });

    const all = (
      await apiOk<{ items: RepositoryBody[] }>(
        t,
        'GET',
        `/api/v0/companies/${company.id}/repositories`,
        member.token,
      )
    ).items;
    expect(all.map((r) => r.name).sort()).toEqual(['private-joined', 'private-other', 'public']);

    const mine = (
      await apiOk<{ items: RepositoryBody[] }>(
        t,
        'GET',
        `/api/v0/companies/${company.id}/repositories`,
        reviewer.token,
      )
    ).items;
    expect(mine.map((r) => r.id).sort()).toEqual([privateJoined.id, publicRepo.id].sort());
    expect(mine.find((r) => r.id === privateJoined.id)!.role).toBe('reviewer');
    expect(mine.find((r) => r.id === publicRepo.id)!.role).toBeNull();
    expect(mine.some((r) => r.id === privateOther.id)).toBe(false);
  });

  it('lists newest first', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const first = await buildRepository(t, { companyId: company.id });
    const second = await buildRepository(t, { companyId: company.id });
    const items = (
      await apiOk<{ items: RepositoryBody[] }>(
        t,
        'GET',
        `/api/v0/companies/${company.id}/repositories`,
        member.token,
      )
    ).items;
    expect(items.map((r) => r.id)).toEqual([second.id, first.id]);
  });

  it('lets read_all_companies admins list any company', async () => {
    const { company } = await buildCompanyWorld(t);
    await buildRepository(t, { companyId: company.id });
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const res = await api(t, 'GET', `/api/v0/companies/${company.id}/repositories`, reader.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().items).toHaveLength(1);
  });

  it('answers 404 to a user with nothing to see in the company, and for an unknown company', async () => {
    const { company } = await buildCompanyWorld(t);
    await buildRepository(t, { companyId: company.id });
    const stranger = await buildUser(t);
    expect(
      (await api(t, 'GET', `/api/v0/companies/${company.id}/repositories`, stranger.token)).statusCode,
    ).toBe(404);
    const res = await api(
      t,
      'GET',
      '/api/v0/companies/00000000-0000-4000-8000-000000000000/repositories',
      t.adminToken,
    );
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ msg: 'Company not found.' });
  });

  it('answers 400 naming the path parameter for a company id that is not a uuid', async () => {
    const res = await api(t, 'GET', '/api/v0/companies/nope/repositories', t.adminToken);
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toContain('company_id');
  });

  it('counts published findings, the caller’s rewards, and ranks reviewers by accepted findings then reputation', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const [alice, bob, carol, dave] = await Promise.all([
      buildMember(t, { repositoryId: repo.id, role: 'reviewer' }),
      buildMember(t, { repositoryId: repo.id, role: 'reviewer' }),
      buildMember(t, { repositoryId: repo.id, role: 'reviewer' }),
      buildMember(t, { repositoryId: repo.id, role: 'reviewer' }),
    ]);
    await apiOk(t, 'PATCH', `/api/v0/users/${carol!.id}/profile`, t.adminToken, { reputation: 50 });
    const f = (createdBy: string, extra: Parameters<typeof buildFinding>[1] = {}) =>
      buildFinding(t, {
        repositoryId: repo.id,
        createdBy,
        status: 'confirmed',
        severity: 'high',
        ...extra,
      });
    // alice: 2 accepted; bob: 1 accepted + 1 rejected + 1 draft; carol: 1 accepted with reputation 50; dave: none.
    await f(alice!.id, { reward: '100.5' });
    await f(alice!.id, { status: 'fixed', reward: '20' });
    await f(bob!.id, { status: 'acknowledged' });
    await f(bob!.id, { status: 'rejected' });
    await f(bob!.id, { status: 'confirmed', published: false, reward: '999' });
    await f(carol!.id, { status: 'confirmed' });
    await f(alice!.id, { status: 'new', reward: '1' });

    const view = async (token: string) =>
      (
        await apiOk<{ items: RepositoryBody[] }>(
          t,
          'GET',
          `/api/v0/companies/${company.id}/repositories`,
          token,
        )
      ).items[0]!;
    expect(await view(alice!.token)).toMatchObject({
      rank: 1,
      rankTotal: 4,
      reward: '121.5',
      totalFindings: 6,
    });
    expect(await view(carol!.token)).toMatchObject({ rank: 2, rankTotal: 4, reward: '0' });
    expect(await view(bob!.token)).toMatchObject({ rank: 3, rankTotal: 4, reward: '0' });
    expect(await view(dave!.token)).toMatchObject({ rank: 4, rankTotal: 4 });
    expect(await view(member.token)).toMatchObject({ rank: 0, rankTotal: 4, totalFindings: 6 });
  });

  it('gives reviewers with equal scores the same rank', async () => {
    const { company } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const a = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    const b = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    const c = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    await buildFinding(t, { repositoryId: repo.id, createdBy: c.id, status: 'confirmed', severity: 'high' });
    const rank = async (token: string) =>
      (
        await apiOk<{ items: RepositoryBody[] }>(
          t,
          'GET',
          `/api/v0/companies/${company.id}/repositories`,
          token,
        )
      ).items[0]!.rank;
    expect(await rank(c.token)).toBe(1);
    expect(await rank(a.token)).toBe(2);
    expect(await rank(b.token)).toBe(2);
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      await buildRepository(app, { companyId });
      const user = await buildUser(app, { companyId, companyRole: 'member' });
      return { url: `/api/v0/companies/${companyId}/repositories`, token: user.token };
    },
  });
});

describe('POST /api/v0/companies/{company_id}/repositories', () => {
  it('lets company managers create, not members (403) nor other companies (404)', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const created = await api(t, 'POST', `/api/v0/companies/${company.id}/repositories`, manager.token, {
      name: 'mine',
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      name: 'mine',
      totalRewardPot: '0',
      submissionFee: '0',
      safeHarbor: null,
      assetGroups: [],
    });
    expect(
      (await api(t, 'POST', `/api/v0/companies/${company.id}/repositories`, member.token, { name: 'x' }))
        .statusCode,
    ).toBe(403);
    expect(
      (
        await api(t, 'POST', `/api/v0/companies/${company.id}/repositories`, other.manager.token, {
          name: 'x',
        })
      ).statusCode,
    ).toBe(404);
  });

  it('answers 400 naming the field for invalid money, severities and timeframes', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const url = `/api/v0/companies/${company.id}/repositories`;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x', totalRewardPot: '12,5' }, 'totalRewardPot'],
      [{ name: 'x', submissionFee: '-1' }, 'submissionFee'],
      [{ name: 'x', allowedSeverities: ['urgent'] }, 'allowedSeverities'],
      [{ name: 'x', timeframe: { start: '2026-02-01T00:00:00Z', end: '2026-01-01T00:00:00Z' } }, 'timeframe'],
      [
        { name: 'x', assetGroups: [{ name: 'g', rewards: [{ minReward: 'a', maxReward: '1' }] }] },
        'assetGroups',
      ],
      [{ name: '' }, 'name'],
      [{ name: 'x', bogus: 1 }, 'bogus'],
    ];
    for (const [body, field] of cases) {
      const res = await api(t, 'POST', url, manager.token, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().msg).toContain(field);
    }
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const user = await buildUser(app, { companyId, companyRole: 'manager' });
      return {
        url: `/api/v0/companies/${companyId}/repositories`,
        payload: { name: 'r' },
        token: user.token,
      };
    },
  });
});

interface EventBody {
  id: string;
  oldValue: Record<string, unknown>;
  newValue: Record<string, unknown>;
  updatedBy: {
    userId: string;
    username: string;
    name: string;
    avatar: string | null;
    disabledAt: string | null;
  } | null;
  updatedAt: string;
}

async function events(repoId: string, token: string = t.adminToken): Promise<EventBody[]> {
  return (await apiOk<{ events: EventBody[] }>(t, 'GET', `/api/v0/repositories/${repoId}/log`, token)).events;
}

describe('PATCH /api/v0/repositories/{repo_id}', () => {
  it('writes one event with the old and new values of the changed fields only', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await postRepository(company.id, {
      name: 'before',
      totalRewardPot: '10',
      instructions: 'same',
    });
    const res = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      name: 'after',
      totalRewardPot: '20',
      instructions: 'same',
      timeframe: { end: '2027-01-01T00:00:00.000Z' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'after', totalRewardPot: '20', instructions: 'same' });
    const log = await events(repo.id);
    expect(log).toHaveLength(1);
    expect(log[0]!.oldValue).toEqual({
      name: 'before',
      totalRewardPot: '10',
      timeframe: { start: null, end: null },
    });
    expect(log[0]!.newValue).toEqual({
      name: 'after',
      totalRewardPot: '20',
      timeframe: { start: null, end: '2027-01-01T00:00:00.000Z' },
    });
    expect(log[0]!.updatedBy).toMatchObject({
      userId: manager.id,
      username: manager.username,
      avatar: null,
      disabledAt: null,
    });
  });

  it('clears nullable fields with null', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await postRepository(company.id, { timeframe: fullRepository.timeframe });
    const res = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      timeframe: { start: null },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().timeframe).toEqual({ start: null, end: fullRepository.timeframe.end });
    const [event] = await events(repo.id);
    expect(event!.oldValue).toEqual({ timeframe: fullRepository.timeframe });
    expect(event!.newValue).toEqual({ timeframe: { start: null, end: fullRepository.timeframe.end } });
  });

  it('writes no event when nothing changed', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id, name: 'same', isPublic: true });
    const res = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      name: 'same',
      isPublic: true,
    });
    expect(res.statusCode).toBe(200);
    expect(await events(repo.id)).toEqual([]);
  });

  it('keeps asset groups, sub-groups and assets named by id, creates new ones and removes the rest', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await postRepository(company.id, fullRepository);
    const [contracts, frontend] = repo.assetGroups as RepositoryBody['assetGroups'];
    const vault = contracts!.assets[0]!;
    const periphery = contracts!.subGroups[0]!;
    const res = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      assetGroups: [
        {
          id: contracts!.id,
          name: 'Contracts v2',
          assets: [{ id: vault.id, name: 'Vault.sol' }, { name: 'Oracle.sol' }],
          subGroups: [{ id: periphery.id, name: 'Periphery', description: 'helpers' }],
        },
      ],
    });
    expect(res.statusCode).toBe(200);
    const [group] = (res.json() as RepositoryBody).assetGroups;
    expect(group!.id).toBe(contracts!.id);
    expect(group!.name).toBe('Contracts v2');
    expect(group!.assets.map((a) => a.name).sort()).toEqual(['Oracle.sol', 'Vault.sol']);
    expect(group!.assets.find((a) => a.name === 'Vault.sol')!.id).toBe(vault.id);
    expect(group!.subGroups).toEqual([
      { id: periphery.id, name: 'Periphery', description: 'helpers', assets: [] },
    ]);
    expect((res.json() as RepositoryBody).assetGroups.some((g) => g.id === frontend!.id)).toBe(false);
    const [event] = await events(repo.id);
    expect(Object.keys(event!.newValue)).toEqual(['assetGroups']);
  });

  it('answers 400 for an asset group id of another repository', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const a = await postRepository(company.id, { assetGroups: [{ name: 'g' }] });
    const b = await buildRepository(t, { companyId: company.id });
    const foreign = (a.assetGroups as RepositoryBody['assetGroups'])[0]!.id;
    const res = await api(t, 'PATCH', `/api/v0/repositories/${b.id}`, manager.token, {
      assetGroups: [{ id: foreign, name: 'g' }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toContain('assetGroups');
  });

  it('removes and replaces the safe harbor, logging both', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await postRepository(company.id, { safeHarbor: { description: 'v1' } });
    const removed = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      safeHarbor: null,
    });
    expect(removed.json().safeHarbor).toBeNull();
    const added = await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {
      safeHarbor: { cap: '5' },
    });
    expect(added.json().safeHarbor).toMatchObject({ cap: '5', reward: '0', description: '' });
    const log = await events(repo.id);
    expect(log).toHaveLength(2);
    expect(log[0]!.oldValue).toEqual({ safeHarbor: null });
    expect(log[1]!.newValue).toEqual({ safeHarbor: null });
  });

  it('lets repository admins update; reviewers and company members get 403, strangers 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const [admin, reviewer, stranger] = await Promise.all([buildUser(t), buildUser(t), buildUser(t)]);
    // Through the membership endpoint, which logs each membership.
    for (const [user, role] of [
      [admin, 'admin'],
      [reviewer, 'reviewer'],
    ] as const)
      await apiOk(t, 'PUT', `/api/v0/repositories/${repo.id}/members/${user.id}`, t.adminToken, { role });
    expect(
      (await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, admin.token, { name: 'by-admin' }))
        .statusCode,
    ).toBe(200);
    expect(
      (await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, reviewer.token, { name: 'x' })).statusCode,
    ).toBe(403);
    expect(
      (await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, member.token, { name: 'x' })).statusCode,
    ).toBe(403);
    expect(
      (await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, stranger.token, { name: 'x' })).statusCode,
    ).toBe(404);
    const log = await events(repo.id);
    // Two memberships, then the admin's rename; the refused updates wrote nothing.
    expect(log).toHaveLength(3);
    expect(log[0]!.newValue).toEqual({ name: 'by-admin' });
    expect(log[0]!.updatedBy!.userId).toBe(admin.id);
  });

  it('answers 400 for an empty body', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    expect((await api(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, {})).statusCode).toBe(
      400,
    );
  });

  itEnforcesUserAuth(() => t, {
    method: 'PATCH',
    request: async (app, companyId) => {
      const repo = await buildRepository(app, { companyId });
      const user = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: `/api/v0/repositories/${repo.id}`, payload: { name: 'renamed' }, token: user.token };
    },
  });
});

describe('repository membership and finishing', () => {
  it('adds, changes and removes members, each change in the log; nothing logged for no change', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const user = await buildUser(t);
    const teamId = '11111111-1111-4111-8111-111111111111';
    const put = (body: unknown) =>
      api(t, 'PUT', `/api/v0/repositories/${repo.id}/members/${user.id}`, manager.token, body);
    const added = await put({ role: 'reviewer', teamId, pingsLeft: 5 });
    expect(added.statusCode).toBe(200);
    expect(added.json()).toMatchObject({
      role: 'reviewer',
      teamId,
      pingsLeft: 5,
      deletedAt: null,
      user: { userId: user.id },
    });
    expect((await put({ role: 'reviewer' })).json()).toMatchObject({ teamId, pingsLeft: 5 });
    await put({ role: 'judge', teamId: null });
    const removed = await api(
      t,
      'DELETE',
      `/api/v0/repositories/${repo.id}/members/${user.id}`,
      manager.token,
    );
    expect(removed.statusCode).toBe(204);
    expect(
      (await api(t, 'DELETE', `/api/v0/repositories/${repo.id}/members/${user.id}`, manager.token))
        .statusCode,
    ).toBe(404);

    const log = (await events(repo.id)).reverse();
    expect(log).toHaveLength(3);
    expect(log[0]!.oldValue).toEqual({ member: null });
    expect(log[0]!.newValue).toEqual({
      member: { userId: user.id, username: user.username, role: 'reviewer', teamId, pingsLeft: 5 },
    });
    expect(log[1]!.newValue).toMatchObject({ member: { role: 'judge', teamId: null } });
    expect(log[2]!.newValue).toEqual({ member: null });

    const members = (
      await apiOk<{ members: Array<{ deletedAt: string | null }> }>(
        t,
        'GET',
        `/api/v0/repositories/${repo.id}/members`,
        manager.token,
      )
    ).members;
    expect(members).toHaveLength(1);
    expect(members[0]!.deletedAt).not.toBeNull();
  });

  it('answers 404 for an unknown user and 400 for an unknown role', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const unknown = await api(
      t,
      'PUT',
      `/api/v0/repositories/${repo.id}/members/00000000-0000-4000-8000-000000000000`,
      manager.token,
      {
        role: 'reviewer',
      },
    );
    expect(unknown.statusCode).toBe(404);
    const user = await buildUser(t);
    const bad = await api(t, 'PUT', `/api/v0/repositories/${repo.id}/members/${user.id}`, manager.token, {
      role: 'owner',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().msg).toContain('role');
  });

  it('lets users join public repositories as reviewers, once, and not private or finished ones', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const open = await buildRepository(t, { companyId: company.id, isPublic: true });
    const closed = await buildRepository(t, { companyId: company.id });
    const user = await buildUser(t);
    const joined = await api(t, 'POST', `/api/v0/repositories/${open.id}/join`, user.token);
    expect(joined.statusCode).toBe(200);
    expect(joined.json()).toMatchObject({ role: 'reviewer', user: { userId: user.id } });
    expect((await api(t, 'POST', `/api/v0/repositories/${open.id}/join`, user.token)).statusCode).toBe(409);
    expect((await api(t, 'POST', `/api/v0/repositories/${closed.id}/join`, user.token)).statusCode).toBe(404);
    const [event] = await events(open.id);
    expect(event!.updatedBy!.userId).toBe(user.id);
    await apiOk(t, 'POST', `/api/v0/repositories/${open.id}/finish`, manager.token);
    const late = await buildUser(t);
    expect((await api(t, 'POST', `/api/v0/repositories/${open.id}/join`, late.token)).statusCode).toBe(409);
  });

  it('marks a repository finished once, logging it', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    expect((await api(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, member.token)).statusCode).toBe(
      403,
    );
    const first = await apiOk<RepositoryBody>(
      t,
      'POST',
      `/api/v0/repositories/${repo.id}/finish`,
      manager.token,
    );
    expect(first.finishedAt).not.toBeNull();
    const again = await apiOk<RepositoryBody>(
      t,
      'POST',
      `/api/v0/repositories/${repo.id}/finish`,
      manager.token,
    );
    expect(again.finishedAt).toBe(first.finishedAt);
    const log = await events(repo.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      oldValue: { finishedAt: null },
      newValue: { finishedAt: first.finishedAt },
    });
  });
});

describe('GET /api/v0/repositories/{repo_id}/log', () => {
  it('lists events newest first with updatedBy and updatedAt', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    for (const name of ['one', 'two', 'three']) {
      await apiOk(t, 'PATCH', `/api/v0/repositories/${repo.id}`, manager.token, { name });
    }
    const log = await events(repo.id, manager.token);
    expect(log.map((e) => e.newValue.name)).toEqual(['three', 'two', 'one']);
    expect(log.map((e) => e.oldValue.name)).toEqual(['two', 'one', repo.name]);
    for (const e of log) {
      expect(e.updatedBy!.userId).toBe(manager.id);
      expect(new Date(e.updatedAt).toISOString()).toBe(e.updatedAt);
    }
    const times = log.map((e) => e.updatedAt);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('is for repository admins and clients, company users (who act as the client) and platform readers', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id, isPublic: true });
    const [admin, client, reviewer, judge, triager] = await Promise.all(
      (['admin', 'client', 'reviewer', 'judge', 'triager'] as const).map((role) =>
        buildMember(t, { repositoryId: repo.id, role: role }),
      ),
    );
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const stranger = await buildUser(t);
    const privateRepo = await buildRepository(t, { companyId: company.id });
    const status = async (token: string, id = repo.id) =>
      (await api(t, 'GET', `/api/v0/repositories/${id}/log`, token)).statusCode;
    for (const token of [
      admin!.token,
      client!.token,
      manager.token,
      member.token,
      reader.token,
      t.adminToken,
    ])
      expect(await status(token)).toBe(200);
    for (const token of [reviewer!.token, judge!.token, triager!.token, stranger.token])
      expect(await status(token)).toBe(403);
    expect(await status(stranger.token, privateRepo.id)).toBe(404);
    expect(await status(t.adminToken, '00000000-0000-4000-8000-000000000000')).toBe(404);
  });

  it('stops a removed admin from reading the log', async () => {
    const { company } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    const admin = await buildMember(t, { repositoryId: repo.id, role: 'admin' });
    expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}/log`, admin.token)).statusCode).toBe(200);
    await apiOk(t, 'DELETE', `/api/v0/repositories/${repo.id}/members/${admin.id}`, t.adminToken);
    expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}/log`, admin.token)).statusCode).toBe(404);
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const repo = await buildRepository(app, { companyId });
      const user = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: `/api/v0/repositories/${repo.id}/log`, token: user.token };
    },
  });
});

describe('GET /api/v0/repositories/{repo_id}', () => {
  it('shows a repository to those who may see it', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: company.id });
    expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}`, member.token)).json().id).toBe(repo.id);
    const other = await buildCompany(t);
    const outsider = await buildUser(t, { companyId: other.id });
    expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}`, outsider.token)).statusCode).toBe(404);
  });
});

it('makes joined repositories of another company visible to their reviewers only through membership', async () => {
  const { company } = await buildCompanyWorld(t);
  const repo = await buildRepository(t, { companyId: company.id });
  const reviewer = await buildUser(t);
  expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}`, reviewer.token)).statusCode).toBe(404);
  await addMember(t, repo.id, reviewer.id, 'reviewer');
  expect((await api(t, 'GET', `/api/v0/repositories/${repo.id}`, reviewer.token)).statusCode).toBe(200);
});

describe('auth cases of the repository management routes', () => {
  const managed = async (app: TestApp, companyId: string) => {
    const repo = await buildRepository(app, { companyId });
    const manager = await buildUser(app, { companyId, companyRole: 'manager' });
    return { repo, manager };
  };

  describe('GET /api/v0/repositories/{repo_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'GET',
      request: async (app, companyId) => {
        const { repo, manager } = await managed(app, companyId);
        return { url: `/api/v0/repositories/${repo.id}`, token: manager.token };
      },
    });
  });

  describe('POST /api/v0/repositories/{repo_id}/finish', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      request: async (app, companyId) => {
        const { repo, manager } = await managed(app, companyId);
        return { url: `/api/v0/repositories/${repo.id}/finish`, token: manager.token };
      },
    });
  });

  describe('GET /api/v0/repositories/{repo_id}/members', () => {
    itEnforcesUserAuth(() => t, {
      method: 'GET',
      request: async (app, companyId) => {
        const { repo, manager } = await managed(app, companyId);
        return { url: `/api/v0/repositories/${repo.id}/members`, token: manager.token };
      },
    });
  });

  describe('PUT /api/v0/repositories/{repo_id}/members/{user_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'PUT',
      request: async (app, companyId) => {
        const { repo, manager } = await managed(app, companyId);
        const user = await buildUser(app);
        return {
          url: `/api/v0/repositories/${repo.id}/members/${user.id}`,
          payload: { role: 'reviewer' },
          token: manager.token,
        };
      },
    });
  });

  describe('DELETE /api/v0/repositories/{repo_id}/members/{user_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'DELETE',
      request: async (app, companyId) => {
        const { repo, manager } = await managed(app, companyId);
        const user = await buildMember(app, { repositoryId: repo.id, role: 'reviewer' });
        return { url: `/api/v0/repositories/${repo.id}/members/${user.id}`, token: manager.token };
      },
    });
  });

  describe('POST /api/v0/repositories/{repo_id}/join', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      crossTenant: false,
      request: async (app, companyId) => {
        const repo = await buildRepository(app, { companyId, isPublic: true });
        const user = await buildUser(app);
        return { url: `/api/v0/repositories/${repo.id}/join`, token: user.token };
      },
    });
  });
});
