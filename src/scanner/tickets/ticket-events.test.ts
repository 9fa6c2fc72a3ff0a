import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerB, startFakeTrackerB } from '../../../test/fakes/tracker-b-server.ts';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  buildRepositoryTeam,
  buildServiceKey,
  buildUser,
  connectTrackerB,
  fileFinding,
} from '../../../test/helpers/factories.ts';
import { findingEvents } from '../../db/schema/index.ts';

let fakeB: FakeTrackerB;
const t = sharedTestApp({
  env: { VIGIL_PUBLIC_URL: 'https://vigil.example.test', VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' },
});
beforeAll(async () => {
  fakeB = await startFakeTrackerB({ projects: ['ENG'] });
});
afterAll(async () => {
  await fakeB.close();
});

async function signIn(token: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v0/session', payload: { token } });
  expect(res.statusCode).toBe(200);
  const line = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('vigil_session='));
  return { cookie: line!.split(';')[0]!, csrf: (res.json() as { csrfToken: string }).csrfToken };
}

describe("a linked ticket on a finding's timeline", () => {
  it('names the console user who linked it, and no one for a service key', async () => {
    const team = await buildRepositoryTeam(t);
    await connectTrackerB(t, team.company.id, fakeB);
    const manager = await buildUser(t, { companyId: team.company.id, companyRole: 'manager' });
    const byUser = await fileFinding(t, team.reviewer.token, team.repository.id);
    const byKey = await fileFinding(t, team.reviewer.token, team.repository.id);

    const session = await signIn(manager.token);
    const first = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Known bug', status: 'To Do' });
    const linked = await t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/findings/${byUser.id}/tickets`,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'x-vigil-company': team.company.id },
      payload: { provider: 'tracker_b', issueRef: first.key },
    });
    expect(linked.statusCode).toBe(200);

    const key = (
      await buildServiceKey(t, { companyId: team.company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    const second = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Other bug', status: 'To Do' });
    const byKeyRes = await t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/findings/${byKey.id}/tickets`,
      headers: { 'x-api-key': key },
      payload: { provider: 'tracker_b', issueRef: second.key },
    });
    expect(byKeyRes.statusCode).toBe(200);

    const eventsOf = (findingId: string) =>
      t.container.database.db.select().from(findingEvents).where(eq(findingEvents.findingId, findingId));
    expect(await eventsOf(byUser.id)).toMatchObject([
      {
        kind: 'ticket_linked',
        actorId: manager.id,
        data: { provider: 'tracker_b', key: first.key, source: 'linked' },
      },
    ]);
    expect(await eventsOf(byKey.id)).toMatchObject([
      { kind: 'ticket_linked', actorId: null, data: { provider: 'tracker_b', key: second.key } },
    ]);
  });
});
