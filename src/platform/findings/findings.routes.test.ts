import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  addMember,
  buildComment,
  buildLabel,
  buildMember,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
  fileFinding,
} from '../../../test/helpers/factories.ts';
import { assetGroups, commentReads, findings } from '../../db/schema/index.ts';
import type { Finding } from './findings.schemas.ts';

const t = sharedTestApp();

const findingUrl = (repoId: string, ref: string | number) => `/api/v0/repositories/${repoId}/findings/${ref}`;

describe('POST /api/v0/repositories/{repo_id}/findings', () => {
  it('files a finding with related files, labels and asset group, numbered from 1', async () => {
    const team = await buildRepositoryTeam(t);
    const label = await buildLabel(t, { repositoryId: team.repository.id, reviewerUse: true });
    const [group] = await t.container.database.db
      .insert(assetGroups)
      .values({
        repositoryId: team.repository.id,
        name: 'Core',
        rewards: [{ minReward: '10', maxReward: '100' }],
      })
      .returning();
    const first = await fileFinding(t, team.reviewer.token, team.repository.id, {
      title: 'Reentrancy in withdraw',
      severity: 'high',
      relatedFiles: [
        {
          path: 'src/Vault.sol',
          lines: { start: 10, end: 20 },
          language: 'solidity',
          relevantContent: 'call{value:',
        },
      ],
      labels: [label.id],
      assetGroupId: group?.id,
    });
    expect(first).toMatchObject({
      number: 1,
      title: 'Reentrancy in withdraw',
      severity: 'high',
      status: 'new',
      locked: false,
      hasUnreadComments: false,
      unreadCommentsNumber: 0,
      repository: { id: team.repository.id, name: team.repository.name },
      company: { id: team.company.id, handle: team.company.handle },
      createdBy: {
        userId: team.reviewer.id,
        name: team.reviewer.username,
        username: team.reviewer.username,
        avatar: null,
        isBot: false,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        teamId: null,
        pingsLeft: 3,
        reputation: 0,
        disabledAt: null,
        deletedFromRepoAt: null,
      },
      assignedTo: null,
      relatedFiles: [
        {
          path: 'src/Vault.sol',
          lines: { start: 10, end: 20 },
          language: 'solidity',
          relevantContent: 'call{value:',
        },
      ],
      labels: [{ id: label.id, name: label.name }],
      assetGroup: {
        id: group?.id,
        name: 'Core',
        rewards: [{ minReward: '10', maxReward: '100' }],
        assets: [],
        subGroups: [],
      },
      duplicateOf: null,
      duplicates: [],
      duplicateGroup: null,
    });
    const second = await fileFinding(t, team.judge.token, team.repository.id);
    expect(second.number).toBe(2);
  });

  it('allocates numbers 1..50 exactly under 50 concurrent creations', async () => {
    const team = await buildRepositoryTeam(t);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sendJson<Finding>(
          t,
          i % 2 ? team.reviewer.token : team.otherReviewer.token,
          'POST',
          `/api/v0/repositories/${team.repository.id}/findings`,
          {
            title: `Concurrent ${i}`,
            description: '',
            severity: 'low',
          },
        ),
      ),
    );
    expect(results.every((r) => r.status === 201)).toBe(true);
    const numbers = results.map((r) => r.body.number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('refuses clients, company users and users without a role; hides other companies', async () => {
    const team = await buildRepositoryTeam(t);
    const body = { title: 'x', description: '', severity: 'low' };
    const url = `/api/v0/repositories/${team.repository.id}/findings`;
    expect((await sendJson(t, team.client.token, 'POST', url, body)).status).toBe(403);
    expect((await sendJson(t, team.companyUser.token, 'POST', url, body)).status).toBe(403);
    const stranger = await buildUser(t);
    expect((await sendJson(t, stranger.token, 'POST', url, body)).status).toBe(404);
    expect((await sendJson(t, t.adminToken, 'POST', url, body)).status).toBe(201);
  });

  it('validates severity, labels, asset group and lines', async () => {
    const team = await buildRepositoryTeam(t, { allowedSeverities: ['high', 'medium'] });
    const url = `/api/v0/repositories/${team.repository.id}/findings`;
    const send = (body: object) =>
      sendJson<{ msg: string }>(t, team.reviewer.token, 'POST', url, {
        title: 'x',
        description: '',
        severity: 'high',
        ...body,
      });
    const low = await send({ severity: 'low' });
    expect(low.status).toBe(400);
    expect(low.body.msg).toMatch(/not allowed/);
    expect((await send({ severity: 'urgent' })).status).toBe(400);
    expect((await send({ title: '' })).status).toBe(400);
    expect((await send({ labels: ['00000000-0000-4000-8000-000000000000'] })).status).toBe(400);
    const judgeOnly = await buildLabel(t, { repositoryId: team.repository.id, reviewerUse: false });
    expect((await send({ labels: [judgeOnly.id] })).status).toBe(403);
    const archived = await buildLabel(t, {
      repositoryId: team.repository.id,
      reviewerUse: true,
      archivedAt: new Date(),
    });
    expect((await send({ labels: [archived.id] })).status).toBe(400);
    const other = await buildRepository(t, { companyId: team.company.id });
    const [foreignGroup] = await t.container.database.db
      .insert(assetGroups)
      .values({ repositoryId: other.id, name: 'X' })
      .returning();
    expect((await send({ assetGroupId: foreignGroup?.id })).status).toBe(400);
    expect((await send({ relatedFiles: [{ path: 'a', lines: { start: 5, end: 1 } }] })).status).toBe(400);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const reviewer = await buildMember(app, { repositoryId: repository.id, role: 'reviewer' });
      return {
        url: `/api/v0/repositories/${repository.id}/findings`,
        payload: { title: 't', description: '', severity: 'low' },
        token: reviewer.token,
      };
    },
  });
});

describe('GET /api/v0/repositories/{repo_id}/findings/{finding_ref}', () => {
  it('reads by id and by number; 404 for unknown refs; 400 for malformed refs', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    expect((await getJson<Finding>(t, team.judge.token, findingUrl(team.repository.id, f.id))).body.id).toBe(
      f.id,
    );
    expect((await getJson<Finding>(t, team.judge.token, findingUrl(team.repository.id, 1))).body.id).toBe(
      f.id,
    );
    expect((await getJson(t, team.judge.token, findingUrl(team.repository.id, 2))).status).toBe(404);
    expect((await getJson(t, team.judge.token, findingUrl(team.repository.id, 'abc'))).status).toBe(400);
  });

  it("hides another reviewer's finding unless the repository shows all findings", async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    expect((await getJson(t, team.otherReviewer.token, findingUrl(team.repository.id, f.id))).status).toBe(
      404,
    );
    for (const user of [team.client, team.judge, team.triager, team.admin, team.companyUser]) {
      expect((await getJson(t, user.token, findingUrl(team.repository.id, f.id))).status).toBe(200);
    }
    const open = await buildRepositoryTeam(t, { showAllFindings: true });
    const g = await fileFinding(t, open.reviewer.token, open.repository.id);
    expect((await getJson(t, open.otherReviewer.token, findingUrl(open.repository.id, g.id))).status).toBe(
      200,
    );
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const reviewer = await buildMember(app, { repositoryId: repository.id, role: 'reviewer' });
      const f = await fileFinding(app, reviewer.token, repository.id);
      return { url: findingUrl(repository.id, f.id), token: reviewer.token };
    },
  });
});

describe('PUT …/findings/{finding_ref}/status', () => {
  it('follows the transition table by role and updates lastUpdatedAt', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/status`;
    const put = (token: string, status: string, reason?: string) =>
      sendJson<Finding & { msg: string }>(t, token, 'PUT', url, { status, reason });
    expect((await put(team.reviewer.token, 'confirmed')).status).toBe(409);
    expect((await put(team.client.token, 'confirmed')).status).toBe(409);
    const confirmed = await put(team.judge.token, 'confirmed');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.status).toBe('confirmed');
    expect(confirmed.body.lastUpdatedAt >= f.lastUpdatedAt).toBe(true);
    expect((await put(team.client.token, 'acknowledged')).body.status).toBe('acknowledged');
    expect((await put(team.companyUser.token, 'fixed')).body.status).toBe('fixed');
    expect((await put(team.triager.token, 'confirmed', 'The fix was reverted.')).body.status).toBe(
      'confirmed',
    );
    expect((await put(team.admin.token, 'duplicate')).status).toBe(409);
    expect((await put(team.reviewer.token, 'withdrawn')).status).toBe(409);
    const same = await put(team.triager.token, 'confirmed');
    expect(same.status).toBe(200);
    expect((await put(team.judge.token, 'bogus')).status).toBe(400);
  });

  it('lets a reviewer withdraw only their own finding while under review', async () => {
    const team = await buildRepositoryTeam(t, { showAllFindings: true });
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/status`;
    expect((await sendJson(t, team.otherReviewer.token, 'PUT', url, { status: 'withdrawn' })).status).toBe(
      409,
    );
    const withdrawn = await sendJson<Finding>(t, team.reviewer.token, 'PUT', url, {
      status: 'withdrawn',
      reason: 'Filed twice by mistake.',
    });
    expect(withdrawn.body.status).toBe('withdrawn');
  });

  itEnforcesUserAuth(() => t, {
    method: 'PUT',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const judge = await buildMember(app, { repositoryId: repository.id, role: 'judge' });
      const f = await fileFinding(app, judge.token, repository.id);
      return {
        url: `${findingUrl(repository.id, f.id)}/status`,
        payload: { status: 'confirmed' },
        token: judge.token,
      };
    },
  });
});

describe('PUT …/findings/{finding_ref}/severity', () => {
  it('lets judges, triagers and admins change the severity within the allowed ones', async () => {
    const team = await buildRepositoryTeam(t, { allowedSeverities: ['critical', 'high', 'low'] });
    const f = await fileFinding(t, team.reviewer.token, team.repository.id, { severity: 'low' });
    const url = `${findingUrl(team.repository.id, f.id)}/severity`;
    for (const user of [team.reviewer, team.client, team.companyUser]) {
      expect((await sendJson(t, user.token, 'PUT', url, { severity: 'high' })).status).toBe(403);
    }
    expect(
      (await sendJson<Finding>(t, team.judge.token, 'PUT', url, { severity: 'high' })).body.severity,
    ).toBe('high');
    expect(
      (await sendJson<Finding>(t, team.triager.token, 'PUT', url, { severity: 'critical' })).body.severity,
    ).toBe('critical');
    expect((await sendJson(t, team.admin.token, 'PUT', url, { severity: 'medium' })).status).toBe(400);
  });
});

describe('PUT …/findings/{finding_ref}/assignee', () => {
  it('assigns to a repository or company member by username and unassigns', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/assignee`;
    expect(
      (await sendJson(t, team.reviewer.token, 'PUT', url, { assignee: team.judge.username })).status,
    ).toBe(403);
    const assigned = await sendJson<Finding>(t, team.triager.token, 'PUT', url, {
      assignee: team.judge.username.toUpperCase(),
    });
    expect(assigned.body.assignedTo).toMatchObject({ userId: team.judge.id, username: team.judge.username });
    const stranger = await buildUser(t);
    expect((await sendJson(t, team.triager.token, 'PUT', url, { assignee: stranger.username })).status).toBe(
      400,
    );
    expect(
      (await sendJson<Finding>(t, team.client.token, 'PUT', url, { assignee: team.companyUser.username }))
        .body.assignedTo?.userId,
    ).toBe(team.companyUser.id);
    expect(
      (await sendJson<Finding>(t, team.admin.token, 'PUT', url, { assignee: null })).body.assignedTo,
    ).toBeNull();
  });
});

describe('PATCH …/findings/{finding_ref}/labels', () => {
  it('adds and removes labels; reviewers only those with reviewerUse', async () => {
    const team = await buildRepositoryTeam(t);
    const open = await buildLabel(t, {
      repositoryId: team.repository.id,
      name: 'needs-info',
      reviewerUse: true,
    });
    const closed = await buildLabel(t, {
      repositoryId: team.repository.id,
      name: 'payout',
      reviewerUse: false,
    });
    const hidden = await buildLabel(t, {
      repositoryId: team.repository.id,
      name: 'internal-note',
      reviewerRead: false,
    });
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/labels`;
    expect(
      (await sendJson<Finding>(t, team.reviewer.token, 'PATCH', url, { add: [open.id] })).body.labels.map(
        (l) => l.name,
      ),
    ).toEqual(['needs-info']);
    expect((await sendJson(t, team.reviewer.token, 'PATCH', url, { add: [closed.id] })).status).toBe(403);
    const judged = await sendJson<Finding>(t, team.judge.token, 'PATCH', url, {
      add: [closed.id, hidden.id],
      remove: [open.id],
    });
    expect(judged.body.labels.map((l) => l.name)).toEqual(['internal-note', 'payout']);
    // A reviewer does not see labels without reviewerRead.
    const seen = await getJson<Finding>(t, team.reviewer.token, findingUrl(team.repository.id, f.id));
    expect(seen.body.labels.map((l) => l.name)).toEqual(['payout']);
    expect((await sendJson(t, team.reviewer.token, 'PATCH', url, { remove: [closed.id] })).status).toBe(403);
    expect(
      (await sendJson(t, team.judge.token, 'PATCH', url, { add: [open.id], remove: [open.id] })).status,
    ).toBe(400);
    expect((await sendJson(t, team.judge.token, 'PATCH', url, {})).status).toBe(400);
  });
});

describe('PUT …/findings/{finding_ref}/duplicate-of', () => {
  it('marks duplicates into one flat group and unmarks them', async () => {
    const team = await buildRepositoryTeam(t);
    const a = await fileFinding(t, team.reviewer.token, team.repository.id, { title: 'A' });
    const b = await fileFinding(t, team.reviewer.token, team.repository.id, { title: 'B' });
    const c = await fileFinding(t, team.reviewer.token, team.repository.id, { title: 'C' });
    const dup = (ref: string, body: object, token = team.judge.token) =>
      sendJson<Finding & { msg: string }>(
        t,
        token,
        'PUT',
        `${findingUrl(team.repository.id, ref)}/duplicate-of`,
        body,
      );
    expect((await dup(b.id, { duplicateOf: a.id }, team.reviewer.token)).status).toBe(403);
    const bDup = await dup(b.id, { duplicateOf: String(a.number), description: 'Same reentrancy' });
    expect(bDup.status).toBe(200);
    expect(bDup.body).toMatchObject({
      status: 'duplicate',
      duplicateOf: { id: a.id, number: 1, title: 'A' },
    });
    // C marked a duplicate of B joins A's group.
    const cDup = await dup(c.id, { duplicateOf: b.id });
    expect(cDup.body.duplicateOf?.id).toBe(a.id);
    const root = await getJson<Finding>(t, team.judge.token, findingUrl(team.repository.id, a.id));
    expect(root.body.duplicates.map((d) => d.title)).toEqual(['B', 'C']);
    expect(root.body.duplicateGroup).toEqual({
      description: 'Same reentrancy',
      findings: [
        { id: a.id, number: 1, title: 'A' },
        { id: b.id, number: 2, title: 'B' },
        { id: c.id, number: 3, title: 'C' },
      ],
    });
    expect((await dup(a.id, { duplicateOf: c.id })).status).toBe(409);
    expect((await dup(a.id, { duplicateOf: a.id })).status).toBe(409);
    expect((await dup(a.id, { duplicateOf: '999' })).status).toBe(400);
    const unmarked = await dup(c.id, { duplicateOf: null });
    expect(unmarked.body).toMatchObject({ status: 'new', duplicateOf: null });
  });

  it("moves a finding's own duplicates along when it becomes a duplicate", async () => {
    const team = await buildRepositoryTeam(t);
    const [a, b, c] = [
      await fileFinding(t, team.reviewer.token, team.repository.id),
      await fileFinding(t, team.reviewer.token, team.repository.id),
      await fileFinding(t, team.reviewer.token, team.repository.id),
    ];
    const dup = (ref: string, target: string) =>
      sendJson<Finding>(t, team.triager.token, 'PUT', `${findingUrl(team.repository.id, ref)}/duplicate-of`, {
        duplicateOf: target,
      });
    await dup(c?.id as string, b?.id as string);
    await dup(b?.id as string, a?.id as string);
    const [row] = await t.container.database.db
      .select()
      .from(findings)
      .where(eq(findings.id, c?.id as string));
    expect(row?.duplicateOf).toBe(a?.id);
  });
});

describe('PUT …/findings/{finding_ref}/read', () => {
  it('makes hasUnreadComments and unreadCommentsNumber follow the comments others wrote, by visibility', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const past = new Date(Date.now() - 60_000);
    for (const [author, visibility] of [
      [team.judge, 'public'],
      [team.judge, 'private'],
      [team.companyUser, 'internal'],
      [team.admin, 'hidden'],
      [team.reviewer, 'public'],
    ] as const)
      await buildComment(t, { findingId: f.id, authorId: author.id, visibility, createdAt: past });
    const unread = async (token: string) =>
      (await getJson<Finding>(t, token, findingUrl(team.repository.id, f.id))).body;
    // The author reads public and private comments of others.
    expect((await unread(team.reviewer.token)).unreadCommentsNumber).toBe(2);
    // Judges do not read internal or hidden comments; their own do not count.
    expect((await unread(team.judge.token)).unreadCommentsNumber).toBe(1);
    expect((await unread(team.companyUser.token)).unreadCommentsNumber).toBe(3);
    expect((await unread(team.admin.token)).unreadCommentsNumber).toBe(4);
    expect((await unread(team.client.token)).unreadCommentsNumber).toBe(2);
    expect((await unread(t.adminToken)).unreadCommentsNumber).toBe(5);
    const read = await sendJson(
      t,
      team.reviewer.token,
      'PUT',
      `${findingUrl(team.repository.id, f.id)}/read`,
    );
    expect(read.status).toBe(204);
    const after = await unread(team.reviewer.token);
    expect(after).toMatchObject({ hasUnreadComments: false, unreadCommentsNumber: 0 });
    await buildComment(t, {
      findingId: f.id,
      authorId: team.judge.id,
      visibility: 'public',
      createdAt: new Date(Date.now() + 60_000),
    });
    expect(await unread(team.reviewer.token)).toMatchObject({
      hasUnreadComments: true,
      unreadCommentsNumber: 1,
    });
    const reads = await t.container.database.db
      .select()
      .from(commentReads)
      .where(and(eq(commentReads.userId, team.reviewer.id), eq(commentReads.findingId, f.id)));
    expect(reads).toHaveLength(1);
  });

  it('answers 404 to a user who cannot see the finding', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    expect(
      (await sendJson(t, team.otherReviewer.token, 'PUT', `${findingUrl(team.repository.id, f.id)}/read`))
        .status,
    ).toBe(404);
    const removed = await buildMember(t, { repositoryId: team.repository.id, role: 'judge' });
    await addMember(t, team.repository.id, removed.id, 'judge', { deletedAt: new Date() });
    expect(
      (await sendJson(t, removed.token, 'PUT', `${findingUrl(team.repository.id, f.id)}/read`)).status,
    ).toBe(404);
  });
});
