import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildMember,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { findingViews } from '../../db/schema/index.ts';

const t = sharedTestApp();

const viewsUrl = (repoId: string) => `/api/v0/repositories/${repoId}/finding-views`;

describe('POST /api/v0/repositories/{repo_id}/finding-views', () => {
  it('saves a personal view for anyone who sees the repository and returns its id', async () => {
    const team = await buildRepositoryTeam(t);
    const res = await sendJson<{ id: string }>(t, team.reviewer.token, 'POST', viewsUrl(team.repository.id), {
      personal: true,
      name: 'My open highs',
      filter: 'status:new,in_review severity:high label:"needs info" reentrancy',
      description: null,
      columns: ['number', 'title', 'severity', 'commented_at', 'likelihood'],
    });
    expect(res.status).toBe(201);
    const [row] = await t.container.database.db
      .select()
      .from(findingViews)
      .where(eq(findingViews.id, res.body.id));
    expect(row).toMatchObject({
      personal: true,
      name: 'My open highs',
      userId: team.reviewer.id,
      repositoryId: team.repository.id,
      columns: ['number', 'title', 'severity', 'commented_at', 'likelihood'],
      description: null,
    });
    const minimal = await sendJson(t, team.client.token, 'POST', viewsUrl(team.repository.id), {
      personal: true,
      name: 'All',
      filter: '',
    });
    expect(minimal.status).toBe(201);
  });

  it('lets only repository admins and the client side save shared views', async () => {
    const team = await buildRepositoryTeam(t);
    const body = { personal: false, name: 'Team view', filter: 'is:unread' };
    for (const user of [team.reviewer, team.judge, team.triager]) {
      expect((await sendJson(t, user.token, 'POST', viewsUrl(team.repository.id), body)).status).toBe(403);
    }
    for (const user of [team.admin, team.client, team.companyUser]) {
      expect((await sendJson(t, user.token, 'POST', viewsUrl(team.repository.id), body)).status).toBe(201);
    }
    const stranger = await buildUser(t);
    expect(
      (await sendJson(t, stranger.token, 'POST', viewsUrl(team.repository.id), { ...body, personal: true }))
        .status,
    ).toBe(404);
  });

  it('validates the body, the filter syntax and the columns', async () => {
    const team = await buildRepositoryTeam(t);
    const send = (body: object) =>
      sendJson<{ msg: string }>(t, team.admin.token, 'POST', viewsUrl(team.repository.id), {
        personal: true,
        name: 'v',
        filter: '',
        ...body,
      });
    const missing = await sendJson<{ msg: string }>(
      t,
      team.admin.token,
      'POST',
      viewsUrl(team.repository.id),
      { name: 'v', filter: '' },
    );
    expect(missing.status).toBe(400);
    expect(missing.body.msg).toMatch(/personal/);
    expect((await send({ name: '' })).status).toBe(400);
    expect((await send({ name: '   ' })).status).toBe(400);
    const badFilter = await send({ filter: 'status:nope' });
    expect(badFilter.status).toBe(400);
    expect(badFilter.body.msg).toMatch(/'filter'/);
    expect((await send({ columns: ['number', 'colour'] })).status).toBe(400);
    // A column named twice is a mistake of the client, not something to drop silently.
    expect((await send({ columns: ['number', 'number'] })).status).toBe(400);
    expect((await send({ description: { text: 'd' } })).status).toBe(400);
    expect((await send({ columns: null, description: 'd' })).status).toBe(201);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const reviewer = await buildMember(app, { repositoryId: repository.id, role: 'reviewer' });
      return {
        url: viewsUrl(repository.id),
        payload: { personal: true, name: 'v', filter: '' },
        token: reviewer.token,
      };
    },
  });
});

describe('GET /api/v0/repositories/{repo_id}/finding-views', () => {
  it("lists the shared views and the caller's own personal views, never another user's", async () => {
    const team = await buildRepositoryTeam(t);
    const url = viewsUrl(team.repository.id);
    await sendJson(t, team.admin.token, 'POST', url, {
      personal: false,
      name: 'B shared',
      filter: 'severity:high',
      columns: ['number', 'title'],
    });
    await sendJson(t, team.reviewer.token, 'POST', url, {
      personal: true,
      name: 'A mine',
      filter: 'is:unread',
    });
    await sendJson(t, team.judge.token, 'POST', url, { personal: true, name: 'C judge only', filter: '' });
    const res = await getJson<{
      views: Array<{ name: string; personal: boolean; filter: string; columns: string[] | null }>;
    }>(t, team.reviewer.token, url);
    expect(res.status).toBe(200);
    expect(res.body.views.map((v) => [v.name, v.personal, v.filter, v.columns])).toEqual([
      ['A mine', true, 'is:unread', null],
      ['B shared', false, 'severity:high', ['number', 'title']],
    ]);
  });

  it('answers 404 for a repository the caller cannot see', async () => {
    const team = await buildRepositoryTeam(t);
    const outsider = await buildUser(t);
    expect((await getJson(t, outsider.token, viewsUrl(team.repository.id))).status).toBe(404);
  });
});
