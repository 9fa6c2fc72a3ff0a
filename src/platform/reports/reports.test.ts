import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
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
  buildRepositoryTeam,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { reports } from '../../db/schema/index.ts';

const t = sharedTestApp();

interface ReportBody {
  id: string;
  isPrivate: boolean;
  projectTitle: string;
  clientName: string;
  companyId: string;
  publishedAt: string | null;
  guildId: string | null;
  teamMembers: Array<{ reportId: string; auditorPublicProfile: Record<string, unknown> & { id: string } }>;
  findingStats: Array<{ severity: string; totalCount: number; fixedCount: number }>;
  findings: Array<Record<string, unknown> & { id: string; relatedFiles: unknown[] }>;
  [key: string]: unknown;
}
interface Page {
  reports: ReportBody[];
  nextValue: string | null;
}

const tag = () => `t${randomBytes(4).toString('hex')}`;

async function list(query: string, token: string | null = null): Promise<Page> {
  return apiOk<Page>(t, 'GET', `/api/v0/reports${query}`, token);
}

/** Every report, page by page. */
async function listAll(
  query: string,
  token: string | null,
  between?: (i: number) => Promise<void>,
): Promise<ReportBody[]> {
  const out: ReportBody[] = [];
  let next: string | null = null;
  for (let i = 0; i < 200; i++) {
    const p = await list(`?${query}${next ? `&next=${encodeURIComponent(next)}` : ''}`, token);
    out.push(...p.reports);
    if (!p.nextValue) return out;
    next = p.nextValue;
    await between?.(i);
  }
  throw new Error('pagination did not end');
}

/** A finished repository of a new company, and a report of it made by the manager. */
async function buildReport(body: Record<string, unknown> = {}) {
  const org = await buildCompanyWorld(t);
  const repo = await buildRepository(t, {
    companyId: org.company.id,
    timeframeStart: new Date('2026-01-01T00:00:00.000Z'),
    timeframeEnd: new Date('2026-01-15T00:00:00.000Z'),
  });
  await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, org.manager.token);
  const report = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', org.manager.token, {
    repositoryId: repo.id,
    ...body,
  });
  return { ...org, repo, report };
}

/** Report rows inserted directly, for ordering and pagination tests. */
async function insertReports(
  companyId: string,
  rows: Array<{ title: string; publishedAt: Date | null; isPrivate?: boolean }>,
) {
  const inserted = await t.container.database.db
    .insert(reports)
    .values(
      rows.map((r) => ({
        companyId,
        projectTitle: r.title,
        clientName: 'Client',
        publishedAt: r.publishedAt,
        isPrivate: r.isPrivate ?? false,
      })),
    )
    .returning({ id: reports.id });
  return inserted.map((r) => r.id);
}

describe('POST /api/v0/reports', () => {
  it('snapshots the team, the published valid findings with their files, and statistics per severity', async () => {
    const org = await buildCompanyWorld(t);
    const repo = await buildRepository(t, {
      companyId: org.company.id,
      name: 'Vault audit',
      allowedSeverities: ['critical', 'high', 'low'],
      timeframeStart: new Date('2026-01-01T00:00:00.000Z'),
      timeframeEnd: new Date('2026-01-15T00:00:00.000Z'),
    });
    const reviewer = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    const judge = await buildMember(t, { repositoryId: repo.id, role: 'judge' });
    await buildMember(t, { repositoryId: repo.id, role: 'client' });
    const gone = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    await apiOk(t, 'DELETE', `/api/v0/repositories/${repo.id}/members/${gone.id}`, t.adminToken);
    await apiOk(t, 'POST', `/api/v0/users/${reviewer.id}/badges`, t.adminToken, { name: 'Hunter' });
    const base = { companyId: org.company.id, repositoryId: repo.id, createdBy: reviewer.id };
    const fixed = await buildFinding(t, {
      ...base,
      severity: 'critical',
      status: 'fixed',
      fixedBy: ['abc123'],
      files: [
        {
          path: 'src/Vault.sol',
          startLine: 10,
          endLine: 20,
          language: 'solidity',
          relevantContent: 'call()',
        },
      ],
    });
    await buildFinding(t, { ...base, severity: 'critical', status: 'confirmed' });
    await buildFinding(t, { ...base, severity: 'high', status: 'acknowledged' });
    await buildFinding(t, { ...base, severity: 'high', status: 'rejected' });
    await buildFinding(t, { ...base, severity: 'low', status: 'fixed', published: false });

    const early = await api(t, 'POST', '/api/v0/reports', org.manager.token, { repositoryId: repo.id });
    expect(early.statusCode).toBe(409);
    await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, org.manager.token);
    const res = await api(t, 'POST', '/api/v0/reports', org.manager.token, {
      repositoryId: repo.id,
      description: 'Two weeks',
      typeOfProject: ['DeFi'],
      commitHashes: ['abc123'],
      repositoryLinks: ['https://example.com/acme/vault'],
    });
    expect(res.statusCode).toBe(201);
    const report = res.json() as ReportBody;
    expect(report).toMatchObject({
      isPrivate: true,
      publishedAt: null,
      projectTitle: 'Vault audit',
      companyHandle: org.company.handle,
      clientName: org.company.name,
      clientLogo: '',
      clientWebsite: '',
      seoTitle: '',
      seoDescription: '',
      description: 'Two weeks',
      reportPdfLink: '',
      companyId: org.company.id,
      engagementId: null,
      repositoryId: repo.id,
      guildId: null,
      createdBy: org.manager.id,
      engagementStartDate: '2026-01-01T00:00:00.000Z',
      engagementEndDate: '2026-01-15T00:00:00.000Z',
      repositoryLinks: ['https://example.com/acme/vault'],
      commitHashes: ['abc123'],
      typeOfProject: ['DeFi'],
    });
    expect(report.teamMembers.map((m) => m.auditorPublicProfile.id).sort()).toEqual(
      [reviewer.id, judge.id].sort(),
    );
    expect(report.teamMembers.every((m) => m.reportId === report.id)).toBe(true);
    const profile = report.teamMembers.find(
      (m) => m.auditorPublicProfile.id === reviewer.id,
    )!.auditorPublicProfile;
    expect(profile).toMatchObject({
      username: reviewer.username,
      isBot: false,
      reputation: 0,
      badges: [{ name: 'Hunter' }],
    });
    for (const key of [
      'verifiedProfile',
      'isNdaSigned',
      'skills',
      'createdAt',
      'sourcehost',
      'microblog',
      'tagline',
      'bio',
      'website',
      'guildAffiliation',
    ]) {
      expect(profile).toHaveProperty(key);
    }
    expect(report.findingStats).toEqual([
      { severity: 'critical', totalCount: 2, fixedCount: 1 },
      { severity: 'high', totalCount: 1, fixedCount: 0 },
      { severity: 'low', totalCount: 0, fixedCount: 0 },
    ]);
    expect(report.findings).toHaveLength(3);
    expect(report.findings[0]).toEqual({
      id: fixed.id,
      number: fixed.number,
      attributedTo: null,
      title: fixed.title,
      description: fixed.description,
      createdBy: {
        userId: reviewer.id,
        name: reviewer.username,
        username: reviewer.username,
        avatar: null,
        disabledAt: null,
      },
      createdAt: fixed.createdAt.toISOString(),
      fixedBy: ['abc123'],
      relatedFiles: [
        {
          id: expect.any(String),
          path: 'src/Vault.sol',
          lines: { start: 10, end: 20 },
          language: 'solidity',
          relevantContent: 'call()',
        },
      ],
      companyName: org.company.name,
      companyLogo: null,
      severity: 'critical',
      status: 'fixed',
    });

    // A snapshot: later changes to the team do not change the report.
    await apiOk(t, 'DELETE', `/api/v0/repositories/${repo.id}/members/${judge.id}`, t.adminToken);
    const again = await apiOk<ReportBody>(t, 'GET', `/api/v0/reports/${report.id}`, org.member.token);
    expect(again.teamMembers).toHaveLength(2);
  });

  it('is for the repository company’s managers and platform admins', async () => {
    const org = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: org.company.id });
    await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, t.adminToken);
    expect(
      (await api(t, 'POST', '/api/v0/reports', org.member.token, { repositoryId: repo.id })).statusCode,
    ).toBe(403);
    expect(
      (await api(t, 'POST', '/api/v0/reports', other.manager.token, { repositoryId: repo.id })).statusCode,
    ).toBe(404);
    expect(
      (await api(t, 'POST', '/api/v0/reports', t.adminToken, { repositoryId: repo.id })).statusCode,
    ).toBe(201);
    const unknown = await api(t, 'POST', '/api/v0/reports', t.adminToken, {
      repositoryId: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const repo = await buildRepository(app, { companyId });
      await apiOk(app, 'POST', `/api/v0/repositories/${repo.id}/finish`, app.adminToken);
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: '/api/v0/reports', payload: { repositoryId: repo.id }, token: manager.token };
    },
  });
});

describe('reports made by repository admins (ADR 0009)', () => {
  /**
   * A finished repository A with a team (its admin is no company user), a second finished
   * repository B of the same company where A's admin holds no role, a third C where A's admin is
   * a reviewer, the company's manager, another company's manager, and findings of A and B.
   */
  async function world() {
    const q = tag();
    const team = await buildRepositoryTeam(t, { name: `${q} A` });
    const companyId = team.company.id;
    const manager = await buildUser(t, { companyId, companyRole: 'manager' });
    const repoB = await buildRepository(t, { companyId, name: `${q} B` });
    const repoC = await buildRepository(t, { companyId, name: `${q} C` });
    await addMember(t, repoC.id, team.admin.id, 'reviewer');
    for (const repo of [team.repository, repoB, repoC])
      await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, t.adminToken);
    const otherManager = (await buildCompanyWorld(t)).manager;
    const base = { companyId, repositoryId: team.repository.id, createdBy: team.reviewer.id };
    const confirmed = await buildFinding(t, { ...base, severity: 'high', status: 'confirmed' });
    const fixed = await buildFinding(t, { ...base, severity: 'low', status: 'fixed' });
    const unpublished = await buildFinding(t, { ...base, status: 'confirmed', published: false });
    const ofB = await buildFinding(t, { companyId, repositoryId: repoB.id, status: 'confirmed' });
    return { q, team, manager, repoB, repoC, otherManager, confirmed, fixed, unpublished, ofB };
  }

  it('lets the admin of a repository make, change, preview and publish its report', async () => {
    const w = await world();
    const admin = w.team.admin.token;
    const draft = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', admin, {
      repositoryId: w.team.repository.id,
      projectTitle: `${w.q} by the admin`,
      findingIds: [w.confirmed.id],
    });
    expect(draft.publishedAt).toBeNull();
    expect(draft.isPrivate).toBe(true);
    expect(draft.findings.map((f) => f.id)).toEqual([w.confirmed.id]);
    expect(draft.createdBy).toBe(w.team.admin.id);

    // The admin previews the draft they made: a single read and the list.
    expect((await apiOk<ReportBody>(t, 'GET', `/api/v0/reports/${draft.id}`, admin)).id).toBe(draft.id);
    expect((await list(`?q=${w.q}`, admin)).reports.map((r) => r.id)).toEqual([draft.id]);

    const changed = await apiOk<ReportBody>(t, 'PATCH', `/api/v0/reports/${draft.id}`, admin, {
      description: 'Two findings.',
      findingIds: [w.confirmed.id, w.fixed.id],
    });
    expect(changed.description).toBe('Two findings.');
    expect(changed.findings.map((f) => f.id)).toEqual([w.confirmed.id, w.fixed.id]);

    const privately = await apiOk<ReportBody>(t, 'POST', `/api/v0/reports/${draft.id}/publish`, admin, {});
    expect(privately.publishedAt).not.toBeNull();
    expect(privately.isPrivate).toBe(true);
    expect((await api(t, 'GET', `/api/v0/reports/${draft.id}`, null)).statusCode).toBe(404);
    expect((await api(t, 'GET', `/api/v0/reports/${draft.id}`, admin)).statusCode).toBe(200);
    expect((await api(t, 'GET', `/api/v0/reports/${draft.id}`, w.manager.token)).statusCode).toBe(200);

    const publicly = await apiOk<ReportBody>(t, 'POST', `/api/v0/reports/${draft.id}/publish`, admin, {
      isPrivate: false,
    });
    expect(publicly.isPrivate).toBe(false);
    expect(publicly.publishedAt).toBe(privately.publishedAt);
    expect((await api(t, 'GET', `/api/v0/reports/${draft.id}`, null)).statusCode).toBe(200);
  });

  it('lets the admin choose only published findings of their repository', async () => {
    const w = await world();
    for (const findingId of [w.ofB.id, w.unpublished.id]) {
      const refused = await api(t, 'POST', '/api/v0/reports', w.team.admin.token, {
        repositoryId: w.team.repository.id,
        findingIds: [findingId],
      });
      expect(refused.statusCode).toBe(400);
      expect((refused.json() as { msg: string }).msg).toContain('findings of its repository only');
    }
  });

  it('refuses other repositories (403 when seen, 404 when not) and the other repository roles', async () => {
    const w = await world();
    const create = (token: string, repositoryId: string) =>
      api(t, 'POST', '/api/v0/reports', token, { repositoryId }).then((r) => r.statusCode);
    expect(await create(w.team.admin.token, w.repoB.id)).toBe(404);
    expect(await create(w.team.admin.token, w.repoC.id)).toBe(403);
    for (const role of [w.team.reviewer, w.team.judge, w.team.triager, w.team.client, w.team.companyUser])
      expect(await create(role.token, w.team.repository.id)).toBe(403);
    expect(await create(w.otherManager.token, w.team.repository.id)).toBe(404);

    // A draft of repository B (by the manager): A's admin does not read it, so does not change it.
    const ofB = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.manager.token, {
      repositoryId: w.repoB.id,
    });
    const change = (token: string, id: string) =>
      api(t, 'PATCH', `/api/v0/reports/${id}`, token, { seoTitle: 'x' }).then((r) => r.statusCode);
    const publish = (token: string, id: string) =>
      api(t, 'POST', `/api/v0/reports/${id}/publish`, token, {}).then((r) => r.statusCode);
    expect(await change(w.team.admin.token, ofB.id)).toBe(404);
    expect(await publish(w.team.admin.token, ofB.id)).toBe(404);
    // Once public, they read it but still may not change it.
    await apiOk(t, 'POST', `/api/v0/reports/${ofB.id}/publish`, w.manager.token, { isPrivate: false });
    expect(await change(w.team.admin.token, ofB.id)).toBe(403);
    expect(await publish(w.team.admin.token, ofB.id)).toBe(403);

    // A draft of repository A: the reviewer does not read it (404); public, they read it (403).
    const ofA = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.team.admin.token, {
      repositoryId: w.team.repository.id,
    });
    expect(await change(w.team.reviewer.token, ofA.id)).toBe(404);
    expect(await publish(w.team.reviewer.token, ofA.id)).toBe(404);
    expect(await change(w.otherManager.token, ofA.id)).toBe(404);
    expect(await change(w.team.companyUser.token, ofA.id)).toBe(403);
    await apiOk(t, 'POST', `/api/v0/reports/${ofA.id}/publish`, w.team.admin.token, { isPrivate: false });
    for (const token of [w.team.reviewer.token, w.team.judge.token, w.team.client.token]) {
      expect(await change(token, ofA.id)).toBe(403);
      expect(await publish(token, ofA.id)).toBe(403);
    }
    // The company's manager changes the report the repository admin made.
    expect(await change(w.manager.token, ofA.id)).toBe(200);
  });

  it('lists exactly the reports each caller reads one by one; a removed admin reads no drafts', async () => {
    const w = await world();
    const made = async (token: string, repositoryId: string, title: string, publish?: boolean) => {
      const r = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', token, {
        repositoryId,
        projectTitle: `${w.q} ${title}`,
      });
      if (publish !== undefined)
        await apiOk(t, 'POST', `/api/v0/reports/${r.id}/publish`, token, { isPrivate: !publish });
      return r.id;
    };
    const ids = [
      await made(w.team.admin.token, w.team.repository.id, 'A draft'),
      await made(w.manager.token, w.team.repository.id, 'A private', false),
      await made(w.manager.token, w.team.repository.id, 'A public', true),
      await made(w.manager.token, w.repoB.id, 'B draft'),
      await made(w.manager.token, w.repoB.id, 'B private', false),
    ];
    const readers: Record<string, string | null> = {
      anonymous: null,
      admin: w.team.admin.token,
      reviewer: w.team.reviewer.token,
      judge: w.team.judge.token,
      client: w.team.client.token,
      companyUser: w.team.companyUser.token,
      manager: w.manager.token,
      otherManager: w.otherManager.token,
    };
    const listed = async (token: string | null) =>
      (await listAll(`q=${w.q}`, token)).map((r) => r.projectTitle).sort();
    const readOneByOne = async (token: string | null) => {
      const out: string[] = [];
      for (const id of ids) {
        const res = await api(t, 'GET', `/api/v0/reports/${id}`, token);
        if (res.statusCode === 200) out.push((res.json() as ReportBody).projectTitle);
        else expect(res.statusCode).toBe(404);
      }
      return out.sort();
    };
    const seen: Record<string, string[]> = {};
    for (const [name, token] of Object.entries(readers)) {
      seen[name] = await listed(token);
      expect(seen[name], name).toEqual(await readOneByOne(token));
    }
    const titles = (...names: string[]) => names.map((n) => `${w.q} ${n}`).sort();
    expect(seen.anonymous).toEqual(titles('A public'));
    expect(seen.admin).toEqual(titles('A draft', 'A private', 'A public'));
    for (const name of ['reviewer', 'judge', 'client', 'otherManager'])
      expect(seen[name], name).toEqual(titles('A public'));
    expect(seen.companyUser).toEqual(titles('A draft', 'A private', 'A public', 'B draft', 'B private'));
    expect(seen.manager).toEqual(seen.companyUser);

    await apiOk(
      t,
      'DELETE',
      `/api/v0/repositories/${w.team.repository.id}/members/${w.team.admin.id}`,
      t.adminToken,
    );
    expect(await listed(w.team.admin.token)).toEqual(titles('A public'));
    expect((await api(t, 'GET', `/api/v0/reports/${ids[0]}`, w.team.admin.token)).statusCode).toBe(404);
  });
});

describe('publishing and guilds', () => {
  it('publishes once (publishedAt kept), and isPrivate false makes the report public', async () => {
    const { report, manager, member } = await buildReport({ projectTitle: `pub ${tag()}` });
    expect((await api(t, 'POST', `/api/v0/reports/${report.id}/publish`, member.token, {})).statusCode).toBe(
      403,
    );
    const published = await apiOk<ReportBody>(
      t,
      'POST',
      `/api/v0/reports/${report.id}/publish`,
      manager.token,
      {},
    );
    expect(published.publishedAt).not.toBeNull();
    expect(published.isPrivate).toBe(true);
    expect((await api(t, 'GET', `/api/v0/reports/${report.id}`, null)).statusCode).toBe(404);
    const open = await apiOk<ReportBody>(t, 'POST', `/api/v0/reports/${report.id}/publish`, manager.token, {
      isPrivate: false,
    });
    expect(open.publishedAt).toBe(published.publishedAt);
    expect(open.isPrivate).toBe(false);
    expect((await api(t, 'GET', `/api/v0/reports/${report.id}`, null)).statusCode).toBe(200);
  });

  it('assigns a guild by name: existing ones by managers, new ones only by platform admins', async () => {
    const { report, manager } = await buildReport();
    const name = `Guild ${tag()}`;
    const missing = await api(t, 'PATCH', `/api/v0/reports/${report.id}`, manager.token, { guild: name });
    expect(missing.statusCode).toBe(404);
    const byAdmin = await apiOk<ReportBody>(t, 'PATCH', `/api/v0/reports/${report.id}`, t.adminToken, {
      guild: name,
    });
    expect(byAdmin.guildId).toEqual(expect.any(String));
    const byManager = await apiOk<ReportBody>(t, 'PATCH', `/api/v0/reports/${report.id}`, manager.token, {
      guild: name.toUpperCase(),
      seoTitle: 'SEO',
    });
    expect(byManager).toMatchObject({ guildId: byAdmin.guildId, seoTitle: 'SEO' });
    const cleared = await apiOk<ReportBody>(t, 'PATCH', `/api/v0/reports/${report.id}`, manager.token, {
      guild: null,
    });
    expect(cleared.guildId).toBeNull();
  });
});

describe('GET /api/v0/reports', () => {
  it('shows anonymous callers public reports only; company users also their private reports and drafts', async () => {
    const q = tag();
    const a = await buildReport({ projectTitle: `${q} private draft` });
    const pub = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', a.manager.token, {
      repositoryId: a.repo.id,
      projectTitle: `${q} public`,
    });
    await apiOk(t, 'POST', `/api/v0/reports/${pub.id}/publish`, a.manager.token, { isPrivate: false });
    const priv = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', a.manager.token, {
      repositoryId: a.repo.id,
      projectTitle: `${q} private`,
    });
    await apiOk(t, 'POST', `/api/v0/reports/${priv.id}/publish`, a.manager.token, {});
    const b = await buildReport({ projectTitle: `${q} other company private` });
    await apiOk(t, 'POST', `/api/v0/reports/${b.report.id}/publish`, b.manager.token, {});
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });

    const titles = async (token: string | null) =>
      (await list(`?q=${q}`, token)).reports.map((r) => r.projectTitle).sort();
    expect(await titles(null)).toEqual([`${q} public`]);
    expect(await titles(b.member.token)).toEqual([`${q} other company private`, `${q} public`]);
    expect(await titles(a.member.token)).toEqual([`${q} private`, `${q} private draft`, `${q} public`]);
    expect(await titles(reader.token)).toHaveLength(4);
    const stranger = await buildUser(t);
    expect(await titles(stranger.token)).toEqual([`${q} public`]);
    expect((await api(t, 'GET', `/api/v0/reports/${priv.id}`, b.member.token)).statusCode).toBe(404);

    // A user of both companies reads the private reports and drafts of each.
    const invitation = await apiOk<{ id: string }>(
      t,
      'POST',
      `/api/v0/companies/${a.company.id}/users`,
      a.manager.token,
      { username: b.member.username },
    );
    await apiOk(t, 'POST', `/api/v0/invitations/${invitation.id}/accept`, b.member.token);
    expect(await titles(b.member.token)).toEqual([
      `${q} other company private`,
      `${q} private`,
      `${q} private draft`,
      `${q} public`,
    ]);
  });

  it('searches the title and the client name case-insensitively, and filters by guild name', async () => {
    const q = tag();
    const company = await buildCompany(t);
    await insertReports(company.id, [
      { title: `${q} Lending Protocol`, publishedAt: new Date() },
      { title: `${q} Bridge`, publishedAt: new Date() },
    ]);
    const [clientHit] = await insertReports(company.id, [{ title: 'Unrelated', publishedAt: new Date() }]);
    await t.container.database.db
      .update(reports)
      .set({ clientName: `${q.toUpperCase()} Labs 50%` })
      .where(eqId(clientHit!));
    expect((await list(`?q=${q.toUpperCase()}%20lending`)).reports.map((r) => r.projectTitle)).toEqual([
      `${q} Lending Protocol`,
    ]);
    expect((await list(`?q=${q}`)).reports).toHaveLength(3);
    expect((await list(`?q=${q}%20labs`)).reports.map((r) => r.id)).toEqual([clientHit]);
    expect((await list(`?q=${q}%20labs%2050%25`)).reports).toHaveLength(1);
    expect((await list(`?q=${q}%25`)).reports).toHaveLength(0);

    const guild = `Guild ${q}`;
    await apiOk(t, 'POST', '/api/v0/guilds', t.adminToken, { name: guild });
    const guildId = (
      await apiOk<{ guilds: Array<{ id: string; name: string }> }>(t, 'GET', '/api/v0/guilds', null)
    ).guilds.find((g) => g.name === guild)!.id;
    await t.container.database.db.update(reports).set({ guildId }).where(eqId(clientHit!));
    expect(
      (await list(`?guild=${encodeURIComponent(guild.toLowerCase())}`)).reports.map((r) => r.id),
    ).toEqual([clientHit]);
    expect((await list(`?guild=${encodeURIComponent(guild)}&q=bridge`)).reports).toEqual([]);
    expect((await list('?guild=No%20such%20guild')).reports).toEqual([]);
  });

  it('orders drafts first, then by publishedAt descending, ties by id; pages never skip or repeat', async () => {
    const q = tag();
    const { company, member } = await buildCompanyWorld(t);
    const tie = new Date('2026-04-01T00:00:00.000Z');
    await insertReports(company.id, [
      { title: `${q} draft 1`, publishedAt: null, isPrivate: true },
      { title: `${q} draft 2`, publishedAt: null, isPrivate: true },
      { title: `${q} old`, publishedAt: new Date('2026-01-01T00:00:00.000Z') },
      ...Array.from({ length: 4 }, (_, i) => ({ title: `${q} tie ${i}`, publishedAt: tie })),
      { title: `${q} new`, publishedAt: new Date('2026-06-01T00:00:00.000Z') },
    ]);
    const full = (await list(`?q=${q}`, member.token)).reports;
    expect(full).toHaveLength(8);
    expect(full.slice(0, 2).every((r) => r.publishedAt === null)).toBe(true);
    expect(full[2]!.projectTitle).toBe(`${q} new`);
    expect(full[7]!.projectTitle).toBe(`${q} old`);
    const idsDesc = (rows: ReportBody[]) => rows.map((r) => r.id);
    expect(idsDesc(full.slice(0, 2))).toEqual(idsDesc(full.slice(0, 2)).sort().reverse());
    expect(idsDesc(full.slice(3, 7))).toEqual(idsDesc(full.slice(3, 7)).sort().reverse());
    for (const limit of [1, 2, 3, 5]) {
      expect(idsDesc(await listAll(`q=${q}&limit=${limit}`, member.token))).toEqual(idsDesc(full));
    }
    // Anonymous: no drafts.
    expect((await listAll(`q=${q}&limit=2`, null)).map((r) => r.id)).toEqual(idsDesc(full.slice(2)));

    // Inserting between pages — newer reports, drafts and more ties — repeats and skips nothing.
    const seen = await listAll(`q=${q}&limit=2`, member.token, async (i) => {
      await insertReports(company.id, [
        { title: `${q} later ${i}`, publishedAt: new Date() },
        { title: `${q} later draft ${i}`, publishedAt: null, isPrivate: true },
        { title: `${q} later tie ${i}`, publishedAt: tie },
      ]);
    });
    const ids = seen.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of full) expect(ids).toContain(r.id);
  });

  it('applies the limits: default 100, 0 gives no reports and a cursor from the same place, 1000 at most', async () => {
    const q = tag();
    const company = await buildCompany(t);
    await insertReports(
      company.id,
      Array.from({ length: 103 }, (_, i) => ({
        title: `${q} ${i}`,
        publishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
      })),
    );
    const first = await list(`?q=${q}`);
    expect(first.reports).toHaveLength(100);
    expect(first.nextValue).not.toBeNull();
    const rest = await list(`?q=${q}&next=${encodeURIComponent(first.nextValue!)}`);
    expect(rest.reports).toHaveLength(3);
    expect(rest.nextValue).toBeNull();

    const zero = await list(`?q=${q}&limit=0`);
    expect(zero.reports).toEqual([]);
    expect(zero.nextValue).not.toBeNull();
    const afterZero = await list(`?q=${q}&limit=2&next=${encodeURIComponent(zero.nextValue!)}`);
    expect(afterZero.reports.map((r) => r.id)).toEqual(first.reports.slice(0, 2).map((r) => r.id));
    expect(await list(`?q=${tag()}&limit=0`)).toEqual({ reports: [], nextValue: null });
    expect((await list(`?q=${q}&limit=1000`)).reports).toHaveLength(103);
  });

  it('answers 400 naming the parameter for invalid values and cursors', async () => {
    for (const [query, name] of [
      ['?limit=1001', 'limit'],
      ['?limit=-1', 'limit'],
      ['?limit=ten', 'limit'],
      ['?q=' + 'x'.repeat(201), 'q'],
      ['?sort=new', 'sort'],
      ['?next=%%%', 'next'],
    ] as const) {
      const res = await api(t, 'GET', `/api/v0/reports${query}`, null);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().msg, query).toContain(name);
    }
    const q = tag();
    const company = await buildCompany(t);
    await insertReports(company.id, [
      { title: `${q} a`, publishedAt: new Date() },
      { title: `${q} b`, publishedAt: new Date() },
    ]);
    const first = await list(`?q=${q}&limit=1`);
    const next = encodeURIComponent(first.nextValue!);
    for (const query of [
      `?q=${q}x&limit=1&next=${next}`,
      `?limit=1&next=${next}`,
      `?q=${q}&guild=g&limit=1&next=${next}`,
    ]) {
      const res = await api(t, 'GET', `/api/v0/reports${query}`, null);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toEqual({ msg: expect.stringContaining('next') });
    }
    expect((await list(`?q=${q.toUpperCase()}&limit=1&next=${next}`)).reports).toHaveLength(1);
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    anonymousAllowed: true,
    crossTenant: false,
    request: async (app, companyId) => {
      const user = await buildUser(app, { companyId });
      return { url: '/api/v0/reports', token: user.token };
    },
  });
});

function eqId(id: string) {
  return eq(reports.id, id);
}

describe('auth cases of the report routes', () => {
  const draft = async (app: TestApp, companyId: string) => {
    const repo = await buildRepository(app, { companyId });
    await apiOk(app, 'POST', `/api/v0/repositories/${repo.id}/finish`, app.adminToken);
    const manager = await buildUser(app, { companyId, companyRole: 'manager' });
    const report = await apiOk<ReportBody>(app, 'POST', '/api/v0/reports', manager.token, {
      repositoryId: repo.id,
    });
    return { report, manager };
  };

  describe('GET /api/v0/reports/{report_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'GET',
      anonymousAllowed: true,
      request: async (app, companyId) => {
        const { report, manager } = await draft(app, companyId);
        return { url: `/api/v0/reports/${report.id}`, token: manager.token };
      },
    });
  });

  describe('PATCH /api/v0/reports/{report_id}', () => {
    itEnforcesUserAuth(() => t, {
      method: 'PATCH',
      request: async (app, companyId) => {
        const { report, manager } = await draft(app, companyId);
        return { url: `/api/v0/reports/${report.id}`, payload: { seoTitle: 'x' }, token: manager.token };
      },
    });
  });

  describe('POST /api/v0/reports/{report_id}/publish', () => {
    itEnforcesUserAuth(() => t, {
      method: 'POST',
      request: async (app, companyId) => {
        const { report, manager } = await draft(app, companyId);
        return { url: `/api/v0/reports/${report.id}/publish`, payload: {}, token: manager.token };
      },
    });
  });
});
