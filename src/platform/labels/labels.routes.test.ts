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
import type { Finding } from '../findings/findings.schemas.ts';
import type { Label } from './labels.schemas.ts';

const t = sharedTestApp();

const labelsUrl = (repoId: string) => `/api/v0/repositories/${repoId}/labels`;

describe('repository labels', () => {
  it('lets repository admins create, update, archive and delete labels', async () => {
    const team = await buildRepositoryTeam(t);
    const url = labelsUrl(team.repository.id);
    const created = await sendJson<Label>(t, team.admin.token, 'POST', url, {
      name: 'needs-info',
      reviewerUse: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'needs-info',
      isSystem: false,
      reviewerRead: true,
      reviewerUse: true,
      description: '',
      archivedAt: null,
    });
    expect((await sendJson(t, team.admin.token, 'POST', url, { name: 'needs-info' })).status).toBe(409);
    const updated = await sendJson<Label>(t, team.admin.token, 'PATCH', `${url}/${created.body.id}`, {
      description: 'Ask the reviewer',
      archived: true,
    });
    expect(updated.body.description).toBe('Ask the reviewer');
    expect(updated.body.archivedAt).not.toBeNull();
    // An archived label cannot be added to a finding.
    const f = await fileFinding(t, team.reviewer.token, team.repository.id);
    const add = await sendJson(
      t,
      team.judge.token,
      'PATCH',
      `/api/v0/repositories/${team.repository.id}/findings/${f.id}/labels`,
      {
        add: [created.body.id],
      },
    );
    expect(add.status).toBe(400);
    expect((await sendJson(t, team.admin.token, 'DELETE', `${url}/${created.body.id}`)).status).toBe(204);
    expect((await sendJson(t, team.admin.token, 'DELETE', `${url}/${created.body.id}`)).status).toBe(404);
    expect((await sendJson(t, t.adminToken, 'POST', url, { name: 'by-platform-admin' })).status).toBe(201);
  });

  it('refuses other roles, protects system labels, validates bodies', async () => {
    const team = await buildRepositoryTeam(t);
    const url = labelsUrl(team.repository.id);
    for (const user of [team.reviewer, team.judge, team.triager, team.client, team.companyUser]) {
      expect((await sendJson(t, user.token, 'POST', url, { name: 'x' })).status).toBe(403);
    }
    const system = await buildLabel(t, { repositoryId: team.repository.id, isSystem: true, name: 'valid' });
    expect(
      (await sendJson(t, team.admin.token, 'PATCH', `${url}/${system.id}`, { name: 'renamed' })).status,
    ).toBe(409);
    expect((await sendJson(t, team.admin.token, 'DELETE', `${url}/${system.id}`)).status).toBe(409);
    expect((await sendJson(t, team.admin.token, 'PATCH', `${url}/${system.id}`, {})).status).toBe(400);
    expect((await sendJson(t, team.admin.token, 'POST', url, { name: '' })).status).toBe(400);
    expect((await sendJson(t, team.admin.token, 'POST', url, { name: 'x', colour: 'red' })).status).toBe(400);
  });

  it('lists labels by name; reviewers see only reviewerRead labels', async () => {
    const team = await buildRepositoryTeam(t);
    await buildLabel(t, { repositoryId: team.repository.id, name: 'b-visible' });
    await buildLabel(t, { repositoryId: team.repository.id, name: 'a-hidden', reviewerRead: false });
    const names = async (token: string) =>
      (await getJson<{ labels: Label[] }>(t, token, labelsUrl(team.repository.id))).body.labels.map(
        (l) => l.name,
      );
    expect(await names(team.judge.token)).toEqual(['a-hidden', 'b-visible']);
    expect(await names(team.reviewer.token)).toEqual(['b-visible']);
    const stranger = await buildUser(t);
    expect((await getJson(t, stranger.token, labelsUrl(team.repository.id))).status).toBe(404);
    const f: Finding = await fileFinding(t, team.reviewer.token, team.repository.id);
    expect(f.labels).toEqual([]);
  });

  itEnforcesUserAuth(() => t, {
    method: 'POST',
    request: async (app, companyId) => {
      const repository = await buildRepository(app, { companyId });
      const admin = await buildMember(app, { repositoryId: repository.id, role: 'admin' });
      return { url: labelsUrl(repository.id), payload: { name: 'x' }, token: admin.token };
    },
  });
});
