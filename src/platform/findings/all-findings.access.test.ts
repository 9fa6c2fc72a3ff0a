import { describe, expect, it } from 'vitest';
import { getJson, sharedTestApp } from '../../../test/helpers/app.ts';
import {
  addMember,
  buildFinding,
  buildLabel,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { findingLabels } from '../../db/schema/index.ts';
import type { Finding } from './findings.schemas.ts';

const t = sharedTestApp();

interface Listing {
  findings: Finding[];
  filteredTotal: number;
}

const list = (token: string, query: string) =>
  getJson<Listing>(t, token, `/api/v0/repositories/all-findings?${query}`);
const titles = (res: { body: Listing }) => res.body.findings.map((f) => f.title).sort();

/** A repository with a label reviewers may not read, and findings of two reviewers. */
async function scenario() {
  const team = await buildRepositoryTeam(t);
  const { repository } = team;
  const secret = await buildLabel(t, {
    repositoryId: repository.id,
    name: 'triage-only',
    reviewerRead: false,
  });
  const open = await buildLabel(t, { repositoryId: repository.id, name: 'open-label', reviewerRead: true });
  const hiddenOnly = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Hidden-labelled',
    createdBy: team.reviewer.id,
  });
  const both = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Both labels',
    createdBy: team.reviewer.id,
  });
  await buildFinding(t, { repositoryId: repository.id, title: 'Plain', createdBy: team.reviewer.id });
  // A root of the reviewer's whose only duplicate belongs to another reviewer.
  const root = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Root',
    createdBy: team.reviewer.id,
  });
  await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Other reviewer duplicate',
    createdBy: team.otherReviewer.id,
    duplicateOf: root.id,
  });
  await t.container.database.db.insert(findingLabels).values([
    { findingId: hiddenOnly.id, labelId: secret.id },
    { findingId: both.id, labelId: secret.id },
    { findingId: both.id, labelId: open.id },
  ]);
  return { team, repository };
}

describe('GET /api/v0/repositories/all-findings computes filters over what the caller may see', () => {
  it('a label a reviewer may not read neither matches nor counts, and unlabeled agrees with the payloads', async () => {
    const { team, repository } = await scenario();
    const scoped = `repositories=${repository.id}`;
    const reviewerByLabel = await list(team.reviewer.token, `${scoped}&label=triage-only`);
    expect(reviewerByLabel.status).toBe(200);
    expect(reviewerByLabel.body).toMatchObject({ findings: [], filteredTotal: 0 });
    const viaSearch = await list(
      team.reviewer.token,
      `${scoped}&s=${encodeURIComponent('label:triage-only')}`,
    );
    expect(viaSearch.body).toMatchObject({ findings: [], filteredTotal: 0 });
    const judgeByLabel = await list(team.judge.token, `${scoped}&label=triage-only`);
    expect(titles(judgeByLabel)).toEqual(['Both labels', 'Hidden-labelled']);
    expect(judgeByLabel.body.filteredTotal).toBe(2);

    const unlabeled = await list(team.reviewer.token, `${scoped}&unlabeled=true`);
    expect(titles(unlabeled)).toEqual(['Hidden-labelled', 'Plain', 'Root']);
    expect(unlabeled.body.filteredTotal).toBe(3);
    // Every finding returned as unlabeled shows no label to the reviewer, and no other does.
    const all = await list(team.reviewer.token, scoped);
    const shownUnlabeled = all.body.findings
      .filter((f) => f.labels.length === 0)
      .map((f) => f.title)
      .sort();
    expect(shownUnlabeled).toEqual(titles(unlabeled));
    const judgeUnlabeled = await list(team.judge.token, `${scoped}&unlabeled=true`);
    expect(titles(judgeUnlabeled)).toEqual(['Other reviewer duplicate', 'Plain', 'Root']);
  });

  it('a duplicate the reviewer cannot see does not make with_duplicates', async () => {
    const { team, repository } = await scenario();
    const scoped = `repositories=${repository.id}&filter_for=with_duplicates`;
    const reviewer = await list(team.reviewer.token, scoped);
    expect(reviewer.body).toMatchObject({ findings: [], filteredTotal: 0 });
    const judge = await list(team.judge.token, scoped);
    expect(titles(judge)).toEqual(['Root']);
    expect(judge.body.filteredTotal).toBe(1);
  });

  it('role follows the effective role: company users act as the client unless a repository role grants more', async () => {
    const { team, repository } = await scenario();
    const manager = await buildUser(t, { companyId: team.company.id, companyRole: 'manager' });
    const asClient = await list(manager.token, `role=client&repositories=${repository.id}`);
    expect(asClient.body.filteredTotal).toBe(5);
    expect(asClient.body.findings).toHaveLength(5);
    expect((await list(team.companyUser.token, 'role=client')).body.filteredTotal).toBe(5);
    expect((await list(manager.token, 'role=judge')).body.filteredTotal).toBe(0);
    // The same manager as judge of a second repository of the company: judge there, client here.
    const second = await buildRepository(t, { companyId: team.company.id });
    await buildFinding(t, { repositoryId: second.id, title: 'Second repo finding' });
    await addMember(t, second.id, manager.id, 'judge');
    expect(titles(await list(manager.token, 'role=judge'))).toEqual(['Second repo finding']);
    expect((await list(manager.token, 'role=client')).body.filteredTotal).toBe(5);
    expect((await list(team.reviewer.token, 'role=reviewer')).body.filteredTotal).toBe(4);
    expect((await list(team.reviewer.token, 'role=client')).body.filteredTotal).toBe(0);
  });

  it('the change log answers company members, who act as the client', async () => {
    const { team, repository } = await scenario();
    const log = await getJson(t, team.companyUser.token, `/api/v0/repositories/${repository.id}/log`);
    expect(log.status).toBe(200);
    const reviewer = await getJson(t, team.reviewer.token, `/api/v0/repositories/${repository.id}/log`);
    expect(reviewer.status).toBe(403);
  });

  it('an unknown query parameter is a 400 on every operation, lists without parameters included', async () => {
    const { team } = await scenario();
    const res = await getJson<{ msg: string }>(
      t,
      team.companyUser.token,
      `/api/v0/companies/${team.company.id}/repositories?foo=1`,
    );
    expect(res.status).toBe(400);
    expect(res.body.msg).toContain('foo');
    const ok = await getJson(t, team.companyUser.token, `/api/v0/companies/${team.company.id}/repositories`);
    expect(ok.status).toBe(200);
  });
});
