import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  addMember,
  buildCompany,
  buildFinding,
  buildRepository,
  buildUser,
  type TestRepository,
} from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

async function board(token: string, repositoryId: string, query = '') {
  return t.app.inject({
    method: 'GET',
    url: `/api/v0/repositories/${repositoryId}/leaderboard${query}`,
    headers: { authorization: `Bearer ${token}` },
  });
}

interface Entry {
  rank: number;
  user: { userId: string } | null;
  teamId: string | null;
  members: Array<{ userId: string }>;
  score: number;
  rewards: string;
  confirmedFindings: number;
}

async function setup() {
  const company = await buildCompany(t);
  const repository: TestRepository = await buildRepository(t, { companyId: company.id });
  const client = await buildUser(t, { companyId: company.id, companyRole: 'member' });
  const teamA = randomUUID();
  const teamB = randomUUID();
  const alice = await buildUser(t);
  const bob = await buildUser(t);
  const carol = await buildUser(t);
  const dave = await buildUser(t);
  await addMember(t, repository.id, alice.id, 'reviewer', { teamId: teamA });
  await addMember(t, repository.id, bob.id, 'reviewer', { teamId: teamA });
  await addMember(t, repository.id, carol.id, 'reviewer', { teamId: teamB });
  await addMember(t, repository.id, dave.id, 'reviewer');
  const judge = await buildUser(t);
  await addMember(t, repository.id, judge.id, 'judge');
  const file = (createdBy: string, severity: string, status: string, reward?: string) =>
    buildFinding(t, {
      repositoryId: repository.id,
      createdBy,
      severity: severity as 'high',
      status: status as 'confirmed',
      ...(reward ? { reward } : {}),
    });
  // alice: high + medium confirmed = 7; a rejected critical does not count.
  await file(alice.id, 'high', 'confirmed', '100');
  await file(alice.id, 'medium', 'fixed');
  await file(alice.id, 'critical', 'rejected');
  // bob: high acknowledged = 5, reward 500.
  await file(bob.id, 'high', 'acknowledged', '500');
  // carol: high = 5, reward 500 (ties bob on score and rewards), + low informational.
  await file(carol.id, 'high', 'confirmed', '500');
  await file(carol.id, 'informational', 'confirmed');
  // dave: only new findings: not on the board.
  await file(dave.id, 'critical', 'new');
  return { company, repository, client, judge, alice, bob, carol, dave, teamA, teamB };
}

describe('GET /api/v0/repositories/{repo_id}/leaderboard', () => {
  it('ranks reviewers by severity-weighted confirmed findings, then rewards, ties sharing a rank in a stable order', async () => {
    const s = await setup();
    const res = await board(s.judge.token, s.repository.id);
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as Entry[];
    expect(items.map((e) => [e.user?.userId, e.rank, e.score, e.rewards, e.confirmedFindings])).toEqual([
      [s.alice.id, 1, 7, '100', 2],
      ...[
        [s.bob.id, 2, 5, '500', 1],
        [s.carol.id, 2, 5, '500', 2],
      ].sort((a, b) => (b[4] as number) - (a[4] as number) || String(a[0]).localeCompare(String(b[0]))),
    ]);
    // The same order on every read, and page by page.
    const again = await board(s.judge.token, s.repository.id);
    expect(again.json().items).toEqual(items);
    const seen: Entry[] = [];
    let next: string | null = null;
    do {
      const page = await board(s.client.token, s.repository.id, `?limit=1${next ? `&next=${next}` : ''}`);
      expect(page.statusCode, page.body).toBe(200);
      seen.push(...(page.json().items as Entry[]));
      next = page.json().nextValue;
    } while (next);
    expect(seen.map((e) => e.user?.userId)).toEqual(items.map((e) => e.user?.userId));
  });

  it('ranks teams and filters by team', async () => {
    const s = await setup();
    const teams = await board(s.judge.token, s.repository.id, '?by=teams');
    expect(teams.statusCode, teams.body).toBe(200);
    const items = teams.json().items as Entry[];
    expect(items.map((e) => [e.teamId, e.rank, e.score, e.rewards])).toEqual([
      [s.teamA, 1, 12, '600'],
      [s.teamB, 2, 5, '500'],
    ]);
    expect(items[0]!.members.map((m) => m.userId).sort()).toEqual([s.alice.id, s.bob.id].sort());
    const one = await board(s.judge.token, s.repository.id, `?team=${s.teamB}`);
    expect((one.json().items as Entry[]).map((e) => e.user?.userId)).toEqual([s.carol.id]);
    expect((await board(s.judge.token, s.repository.id, `?team=${randomUUID()}`)).statusCode).toBe(404);
  });

  it('counts only what the caller may see, and hides the repository from outsiders', async () => {
    const s = await setup();
    // A reviewer without showAllFindings sees only their own findings: a board of one.
    const own = await board(s.bob.token, s.repository.id);
    expect((own.json().items as Entry[]).map((e) => e.user?.userId)).toEqual([s.bob.id]);
    const outsider = await buildUser(t);
    const hidden = await board(outsider.token, s.repository.id);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toEqual({ msg: expect.any(String) });
    expect((await board(s.judge.token, s.repository.id, '?next=forged')).statusCode).toBe(400);
    expect((await board(s.judge.token, s.repository.id, '?foo=1')).statusCode).toBe(400);
  });
});
