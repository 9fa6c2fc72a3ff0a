import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildLabel, buildRepositoryTeam, fileFinding } from '../../../test/helpers/factories.ts';
import { auditLog, comments } from '../../db/schema/index.ts';
import type { Finding, FindingPeople } from './findings.schemas.ts';

const t = sharedTestApp();

const findingUrl = (repoId: string, ref: string | number) => `/api/v0/repositories/${repoId}/findings/${ref}`;

describe('a status change that needs a reason', () => {
  it('is refused without one, and its reason is posted on the finding', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const url = `${findingUrl(team.repository.id, f.id)}/status`;
    const bare = await sendJson<{ msg: string }>(t, team.judge.token, 'PUT', url, { status: 'rejected' });
    expect(bare.status).toBe(400);
    expect(bare.body.msg).toMatch(/reason/);
    const blank = await sendJson(t, team.judge.token, 'PUT', url, { status: 'rejected', reason: '   ' });
    expect(blank.status).toBe(400);
    const done = await sendJson<Finding>(t, team.judge.token, 'PUT', url, {
      status: 'rejected',
      reason: 'Out of scope: the vault is not deployed.',
    });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('rejected');
    const posted = await t.container.database.db.select().from(comments).where(eq(comments.findingId, f.id));
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ visibility: 'public', authorId: team.judge.id });
    expect(posted[0]!.content).toBe('Status new → rejected: Out of scope: the vault is not deployed.');
    // Moving on to in_review needs no reason.
    expect((await sendJson(t, team.judge.token, 'PUT', url, { status: 'in_review' })).status).toBe(200);
    // Reopening a fixed finding needs one.
    await sendJson(t, team.judge.token, 'PUT', url, { status: 'confirmed' });
    await sendJson(t, team.client.token, 'PUT', url, { status: 'fixed' });
    expect((await sendJson(t, team.judge.token, 'PUT', url, { status: 'confirmed' })).status).toBe(400);
    expect(
      (await sendJson(t, team.judge.token, 'PUT', url, { status: 'confirmed', reason: 'Fix reverted.' }))
        .status,
    ).toBe(200);
  });
});

describe('the people of a finding', () => {
  it('lists exactly who sees it; assignment to anyone else is refused', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const people = await getJson<FindingPeople>(
      t,
      team.judge.token,
      `${findingUrl(team.repository.id, f.number)}/people`,
    );
    expect(people.status).toBe(200);
    const names = people.body.people.map((p) => p.username).sort();
    // The other reviewer sees only their own findings: not offered.
    expect(names).toEqual(
      [
        team.reviewer.username,
        team.judge.username,
        team.triager.username,
        team.admin.username,
        team.client.username,
        team.companyUser.username,
      ].sort(),
    );
    const author = people.body.people.find((p) => p.userId === team.reviewer.id);
    expect(author).toMatchObject({
      isFindingAuthor: true,
      assignable: true,
      mentionable: true,
      role: 'reviewer',
    });
    // The judge writes the comment: never pinged by their own mention; company users are not `@username` pingable.
    expect(people.body.people.find((p) => p.userId === team.judge.id)?.mentionable).toBe(false);
    expect(people.body.people.find((p) => p.userId === team.companyUser.id)).toMatchObject({
      role: 'client',
      assignable: true,
      mentionable: false,
    });
    const assign = `${findingUrl(team.repository.id, f.id)}/assignee`;
    const refused = await sendJson<{ msg: string }>(t, team.judge.token, 'PUT', assign, {
      assignee: team.otherReviewer.username,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toMatch(/cannot see this finding/);
    expect(
      (await sendJson<Finding>(t, team.judge.token, 'PUT', assign, { assignee: team.reviewer.username })).body
        .assignedTo?.userId,
    ).toBe(team.reviewer.id);

    // A reviewer (who may not assign) is given only whom `@username` reaches.
    const asReviewer = await getJson<FindingPeople>(
      t,
      team.reviewer.token,
      `${findingUrl(team.repository.id, f.id)}/people`,
    );
    expect(asReviewer.body.people.map((p) => p.username).sort()).toEqual(
      [team.judge.username, team.triager.username].sort(),
    );
    // Who does not see the finding learns nothing of it.
    expect(
      (await getJson(t, team.otherReviewer.token, `${findingUrl(team.repository.id, f.id)}/people`)).status,
    ).toBe(404);
  });
});

describe('POST /api/v0/repositories/findings/bulk-triage', () => {
  it('changes many findings at once, all or nothing, with one audit entry', async () => {
    const team = await buildRepositoryTeam(t);
    const label = await buildLabel(t, { repositoryId: team.repository.id, name: 'bulk' });
    const a = await fileFinding(t, team.reviewer.token, team.repository.id, { severity: 'low' });
    const b = await fileFinding(t, team.reviewer.token, team.repository.id, { severity: 'low' });
    const url = '/api/v0/repositories/findings/bulk-triage';
    const items = [a, b].map((f) => ({ repositoryId: team.repository.id, finding: String(f.number) }));
    const ok = await sendJson<{ findings: Finding[] }>(t, team.judge.token, 'POST', url, {
      findings: items,
      status: 'confirmed',
      severity: 'high',
      assignee: team.triager.username,
      addLabels: [label.id],
    });
    expect(ok.status).toBe(200);
    for (const f of ok.body.findings) {
      expect(f).toMatchObject({ status: 'confirmed', severity: 'high' });
      expect(f.assignedTo?.userId).toBe(team.triager.id);
      expect(f.labels.map((l) => l.id)).toEqual([label.id]);
    }
    const entries = await t.container.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.companyId, team.company.id));
    const bulk = entries.filter((e) => e.action === 'findings_bulk_triaged');
    expect(bulk).toHaveLength(1);
    expect(bulk[0]!.performedBy).toBe(team.judge.id);
    expect((bulk[0]!.details as { findingIds: string[] }).findingIds.sort()).toEqual([a.id, b.id].sort());

    // One refusal (a reason is needed) and nothing is written.
    const refused = await sendJson<{ msg: string }>(t, team.judge.token, 'POST', url, {
      findings: items,
      status: 'rejected',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.msg).toMatch(/^Finding 1 of 2: .*reason/);
    // A finding the caller cannot see fails the whole request.
    const other = await buildRepositoryTeam(t);
    const hidden = await fileFinding(t, other.reviewer.token, other.repository.id);
    const mixed = await sendJson(t, team.judge.token, 'POST', url, {
      findings: [...items, { repositoryId: other.repository.id, finding: hidden.id }],
      severity: 'low',
    });
    expect(mixed.status).toBe(404);
    const after = await getJson<Finding>(t, team.judge.token, findingUrl(team.repository.id, a.id));
    expect(after.body.severity).toBe('high');
    // Reviewers may not change severity in bulk either.
    expect(
      (await sendJson(t, team.reviewer.token, 'POST', url, { findings: items, severity: 'low' })).status,
    ).toBe(403);
    expect((await sendJson(t, team.judge.token, 'POST', url, { findings: items })).status).toBe(400);
  });
});

describe('DELETE /api/v0/repositories/{repo_id}/finding-views/{view_id}', () => {
  it('deletes one’s own personal view, a shared one for those who may share; others’ are not found', async () => {
    const team = await buildRepositoryTeam(t);
    const views = `/api/v0/repositories/${team.repository.id}/finding-views`;
    const mine = await sendJson<{ id: string }>(t, team.judge.token, 'POST', views, {
      name: 'Mine',
      filter: 'status:new',
      personal: true,
    });
    const shared = await sendJson<{ id: string }>(t, team.client.token, 'POST', views, {
      name: 'Shared',
      filter: '',
      personal: false,
    });
    expect((await sendJson(t, team.triager.token, 'DELETE', `${views}/${mine.body.id}`)).status).toBe(404);
    expect((await sendJson(t, team.judge.token, 'DELETE', `${views}/${shared.body.id}`)).status).toBe(403);
    expect((await sendJson(t, team.judge.token, 'DELETE', `${views}/${mine.body.id}`)).status).toBe(204);
    expect((await sendJson(t, team.admin.token, 'DELETE', `${views}/${shared.body.id}`)).status).toBe(204);
    expect((await sendJson(t, team.admin.token, 'DELETE', `${views}/${shared.body.id}`)).status).toBe(404);
    const left = await getJson<{ views: unknown[] }>(t, team.client.token, views);
    expect(left.body.views).toEqual([]);
  });
});
