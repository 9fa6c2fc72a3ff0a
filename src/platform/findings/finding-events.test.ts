import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildLabel,
  buildMember,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
  fileFinding,
} from '../../../test/helpers/factories.ts';
import { findingEvents, findings, findingTickets } from '../../db/schema/index.ts';
import { findingEventsRepo } from './finding-events.repo.ts';
import type { FindingEvent, FindingEventList } from './finding-events.schemas.ts';
import type { Finding } from './findings.schemas.ts';

const t = sharedTestApp();

const findingUrl = (repoId: string, ref: string | number) => `/api/v0/repositories/${repoId}/findings/${ref}`;
const eventsOf = async (token: string, repoId: string, ref: string | number) => {
  const res = await getJson<FindingEventList>(t, token, `${findingUrl(repoId, ref)}/events`);
  expect(res.status).toBe(200);
  return res.body.events;
};
const summary = (events: FindingEvent[]) =>
  events.map((e) => ({ kind: e.kind, data: e.data, actor: e.actor?.username ?? null }));

describe('GET /api/v0/repositories/{repo_id}/findings/{finding_ref}/events', () => {
  it('records status, severity, assignee, labels and duplicates with who did them, in order', async () => {
    const team = await buildRepositoryTeam(t);
    const repoId = team.repository.id;
    const label = await buildLabel(t, { repositoryId: repoId, reviewerUse: true });
    const root = await fileFinding(t, team.otherReviewer.token, repoId, { title: 'Root' });
    const f = await fileFinding(t, team.reviewer.token, repoId, { severity: 'medium' });
    const url = findingUrl(repoId, f.id);
    const ok = async (method: 'PUT' | 'PATCH', path: string, body: unknown, token = team.judge.token) =>
      expect((await sendJson(t, token, method, `${url}/${path}`, body)).status).toBe(200);

    await ok('PUT', 'status', { status: 'confirmed' });
    await ok('PUT', 'severity', { severity: 'high' });
    await ok('PUT', 'severity', { severity: 'high' }); // no change: no event
    await ok('PUT', 'assignee', { assignee: team.triager.username });
    await ok('PATCH', 'labels', { add: [label.id] }, team.reviewer.token);
    await ok('PATCH', 'labels', { remove: [label.id] });
    await ok('PUT', 'assignee', { assignee: null });
    await ok('PUT', 'duplicate-of', { duplicateOf: String(root.number) });

    const events = await eventsOf(team.judge.token, repoId, f.number);
    expect(events[0]).toMatchObject({
      id: '0',
      kind: 'created',
      actor: { userId: team.reviewer.id, username: team.reviewer.username },
    });
    expect(summary(events.slice(1))).toEqual([
      { kind: 'status', data: { from: 'new', to: 'confirmed' }, actor: team.judge.username },
      { kind: 'severity', data: { from: 'medium', to: 'high' }, actor: team.judge.username },
      {
        kind: 'assignee',
        data: {
          from: null,
          to: { userId: team.triager.id, username: team.triager.username, name: team.triager.username },
        },
        actor: team.judge.username,
      },
      {
        kind: 'label_added',
        data: { label: { id: label.id, name: label.name } },
        actor: team.reviewer.username,
      },
      {
        kind: 'label_removed',
        data: { label: { id: label.id, name: label.name } },
        actor: team.judge.username,
      },
      {
        kind: 'assignee',
        data: {
          from: { userId: team.triager.id, username: team.triager.username, name: team.triager.username },
          to: null,
        },
        actor: team.judge.username,
      },
      {
        kind: 'duplicate',
        data: { from: null, to: { id: root.id, number: root.number, title: 'Root' } },
        actor: team.judge.username,
      },
      { kind: 'status', data: { from: 'confirmed', to: 'duplicate' }, actor: team.judge.username },
    ]);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('hides from reviewers the duplicate targets, labels and tickets they may not see', async () => {
    const team = await buildRepositoryTeam(t);
    const repoId = team.repository.id;
    const secret = await buildLabel(t, { repositoryId: repoId, reviewerRead: false });
    const other = await fileFinding(t, team.otherReviewer.token, repoId, { title: 'Not yours' });
    const f = await fileFinding(t, team.reviewer.token, repoId);
    const url = findingUrl(repoId, f.id);
    expect((await sendJson(t, team.judge.token, 'PATCH', `${url}/labels`, { add: [secret.id] })).status).toBe(
      200,
    );
    expect(
      (await sendJson(t, team.judge.token, 'PUT', `${url}/duplicate-of`, { duplicateOf: other.id })).status,
    ).toBe(200);
    await t.container.database.db.insert(findingTickets).values({
      companyId: team.company.id,
      findingId: f.id,
      provider: 'tracker_a',
      key: 'ENG-7',
      externalId: 'x-7',
      url: 'https://tracker.example/ENG-7',
      title: 'Ticket',
      source: 'linked',
    });

    const asJudge = summary(await eventsOf(team.judge.token, repoId, f.id)).map((e) => e.kind);
    expect(asJudge).toEqual(['created', 'label_added', 'duplicate', 'status']);
    const asCompanyUser = await eventsOf(team.companyUser.token, repoId, f.id);
    expect(asCompanyUser.map((e) => e.kind)).toEqual([
      'created',
      'label_added',
      'duplicate',
      'status',
      'ticket_linked',
    ]);
    expect(asCompanyUser[4]).toMatchObject({
      actor: null,
      data: { provider: 'tracker_a', key: 'ENG-7', url: 'https://tracker.example/ENG-7', source: 'linked' },
    });

    const asReviewer = await eventsOf(team.reviewer.token, repoId, f.id);
    expect(asReviewer.map((e) => e.kind)).toEqual(['created', 'duplicate', 'status']);
    expect(asReviewer[1]?.data).toEqual({ from: null, to: { hidden: true } });
  });

  it('shows kinds written by other writers (the scanner) as written', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    await findingEventsRepo(t.container.database.db).record({
      findingId: f.id,
      kind: 'scan_not_reproduced',
      data: { scanId: '7b0c4d8e-0000-4000-8000-000000000001', commit: 'abc1234' },
    });
    const events = await eventsOf(team.reviewer.token, team.repository.id, f.id);
    expect(events.at(-1)).toMatchObject({
      kind: 'scan_not_reproduced',
      actor: null,
      data: { scanId: '7b0c4d8e-0000-4000-8000-000000000001', commit: 'abc1234' },
    });
  });

  it('leaves no event for a refused change, labels given at filing, or writes to drafts', async () => {
    const team = await buildRepositoryTeam(t);
    const label = await buildLabel(t, { repositoryId: team.repository.id, reviewerUse: true });
    const f = await fileFinding(t, team.reviewer.token, team.repository.id, { labels: [label.id] });
    // A reviewer may not confirm: refused, and the transaction (and its events) rolled back.
    const refused = await sendJson(
      t,
      team.reviewer.token,
      'PUT',
      `${findingUrl(team.repository.id, f.id)}/status`,
      {
        status: 'confirmed',
      },
    );
    expect(refused.status).toBe(409);
    const [draft] = await t.container.database.db
      .insert(findings)
      .values({ companyId: team.company.id, published: false, title: 'Draft', severity: 'low' })
      .returning();
    await t.container.database.db
      .update(findings)
      .set({ status: 'confirmed' })
      .where(eq(findings.id, draft!.id));
    const stored = await t.container.database.db
      .select()
      .from(findingEvents)
      .where(eq(findingEvents.findingId, f.id));
    expect(stored).toEqual([]);
    const draftEvents = await t.container.database.db
      .select()
      .from(findingEvents)
      .where(eq(findingEvents.findingId, draft!.id));
    expect(draftEvents).toEqual([]);
  });

  it('answers 404 for a finding the caller may not see and for another company', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/events`;
    // Another reviewer of the same repository does not see this reviewer's finding.
    expect((await getJson(t, team.otherReviewer.token, url)).status).toBe(404);
    const outsider = await buildUser(t);
    expect((await getJson(t, outsider.token, url)).status).toBe(404);
    expect((await getJson(t, team.judge.token, `${findingUrl(team.repository.id, 999)}/events`)).status).toBe(
      404,
    );
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const reviewer = await buildMember(app, { repositoryId: repository.id, role: 'reviewer' });
      const finding = await fileFinding(app, reviewer.token, repository.id);
      return { url: `${findingUrl(repository.id, finding.id)}/events`, token: reviewer.token };
    },
  });
});

describe('related files: the commit extension', () => {
  it('keeps the commit a related file was read at, lower-cased; refuses what is not a commit', async () => {
    const team = await buildRepositoryTeam(t);
    const filed = await sendJson<Finding>(
      t,
      team.reviewer.token,
      'POST',
      `/api/v0/repositories/${team.repository.id}/findings`,
      {
        title: 'With commit',
        description: '',
        severity: 'low',
        relatedFiles: [
          { path: 'src/Vault.sol', lines: { start: 3, end: 4 }, commit: 'ABCDEF1234567' },
          { path: 'src/Other.sol' },
        ],
      },
    );
    expect(filed.status).toBe(201);
    const f = (await getJson<Finding>(t, team.judge.token, findingUrl(team.repository.id, filed.body.id)))
      .body;
    expect(f.relatedFiles.map((r) => [r.path, r.commit])).toEqual([
      ['src/Other.sol', null],
      ['src/Vault.sol', 'abcdef1234567'],
    ]);
    const bad = await sendJson(
      t,
      team.reviewer.token,
      'POST',
      `/api/v0/repositories/${team.repository.id}/findings`,
      {
        title: 'x',
        description: '',
        severity: 'low',
        relatedFiles: [{ path: 'a.sol', commit: 'main; rm -rf' }],
      },
    );
    expect(bad.status).toBe(400);
  });
});
