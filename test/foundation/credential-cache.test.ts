import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceActor, UserActor } from '../../src/auth/actor.ts';
import { createAuthService } from '../../src/auth/auth.service.ts';
import { createCredentialCache } from '../../src/auth/credential-cache.ts';
import { hashSecret } from '../../src/auth/credentials.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  buildCompany,
  buildFinding,
  buildRepository,
  buildServiceKey,
  buildUser,
} from '../helpers/factories.ts';
import { getAs, settleAll, silently } from '../helpers/replicas.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Two replicas on one database, each with its own credential cache: a change made through one is
 * in effect on the other as soon as the database notification arrives.
 */
let b: TestApp;

const a = sharedTestApp();
beforeAll(async () => {
  b = await createTestApp({ shareDatabaseWith: a });
  await waitFor(() => a.container.credentialCache.enabled && b.container.credentialCache.enabled, {
    what: 'listeners',
    timeoutMs: 10_000,
  });
});
afterAll(async () => {
  await b?.close();
});

const silentlyOnA = (sql: string, values: unknown[]) => silently(a, sql, values);

const settle = () => settleAll(a, b);

async function newToken(userId: string): Promise<{ id: string; token: string }> {
  const res = await a.app.inject({
    method: 'POST',
    url: `/api/v0/admin/users/${userId}/tokens`,
    headers: { authorization: `Bearer ${a.adminToken}` },
    payload: {},
  });
  expect(res.statusCode).toBe(201);
  return res.json();
}

describe('credential cache across two replicas', () => {
  it('serves a known token from memory: a change that sends no notification is not seen', async () => {
    const company = await buildCompany(a);
    const user = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    await settle();
    expect((await getAs(b, '/api/v0/notifications', user.token)).statusCode).toBe(200);
    expect(b.container.credentialCache.size).toBeGreaterThan(0);
    await silentlyOnA('update user_tokens set revoked_at = now() where hash = $1', [hashSecret(user.token)]);
    // The row says revoked, but nothing told replica b: it still answers from its cache.
    expect((await getAs(b, '/api/v0/notifications', user.token)).statusCode).toBe(200);
    await silentlyOnA('update user_tokens set revoked_at = null where hash = $1', [hashSecret(user.token)]);
  });

  it('refuses a token on replica b once replica a has revoked it, and on replica a at once', async () => {
    const company = await buildCompany(a);
    const user = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    const { id, token } = await newToken(user.id);
    expect((await getAs(a, '/api/v0/notifications', token)).statusCode).toBe(200);
    expect((await getAs(b, '/api/v0/notifications', token)).statusCode).toBe(200);
    const revoke = await a.app.inject({
      method: 'DELETE',
      url: `/api/v0/admin/users/${user.id}/tokens/${id}`,
      headers: { authorization: `Bearer ${a.adminToken}` },
    });
    expect(revoke.statusCode).toBe(204);
    const onA = await getAs(a, '/api/v0/notifications', token);
    expect(onA.statusCode).toBe(401);
    expect(onA.json().msg).toMatch(/revoked/);
    await waitFor(async () => (await getAs(b, '/api/v0/notifications', token)).statusCode === 401, {
      what: 'b to refuse',
      timeoutMs: 10_000,
    });
    expect((await getAs(b, '/api/v0/notifications', token)).json().msg).toMatch(/revoked/);
  });

  it('sees a disabled membership and a revoked service key on the other replica', async () => {
    const company = await buildCompany(a);
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const member = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    const actorOnB = () => b.container.services.auth.authenticateUserToken(member.token);
    expect((await actorOnB()).companies.get(company.id)).toBe('member');
    const disable = await a.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/users/${member.id}/disable`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(disable.statusCode).toBe(200);
    await waitFor(async () => !(await actorOnB()).companies.has(company.id), {
      what: 'b to drop the membership',
      timeoutMs: 10_000,
    });

    const key = await buildServiceKey(a, { companyId: company.id });
    const credits = () =>
      b.app.inject({ method: 'GET', url: '/api/scanner/v1/credits', headers: { 'x-api-key': key.key } });
    expect((await credits()).statusCode).toBe(200);
    const revoke = await a.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/service-keys/${key.id}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(revoke.statusCode).toBeLessThan(300);
    await waitFor(async () => (await credits()).statusCode === 401, {
      what: 'b to refuse the key',
      timeoutMs: 10_000,
    });
  });

  it('keeps repository memberships with the credential: all-findings on replica b follows their changes', async () => {
    const company = await buildCompany(a);
    const repository = await buildRepository(a, { companyId: company.id });
    await buildFinding(a, { repositoryId: repository.id });
    const user = await buildUser(a);
    await addMember(a, repository.id, user.id, 'judge');
    await settle();
    const total = async () => {
      const res = await getAs(b, '/api/v0/repositories/all-findings', user.token);
      expect(res.statusCode).toBe(200);
      return res.json().filteredTotal as number;
    };
    expect(await total()).toBe(1);
    // Without a notification replica b keeps the memberships it read with the credential.
    await silentlyOnA('delete from repository_members where user_id = $1', [user.id]);
    expect(await total()).toBe(1);
    await silentlyOnA('insert into repository_members (repository_id, user_id, role) values ($1, $2, $3)', [
      repository.id,
      user.id,
      'judge',
    ]);
    const run = (text: string) => a.container.database.executeSql(text, [repository.id, user.id]);
    // A reviewer sees only their own findings, until the repository shows all findings to reviewers.
    await run(`update repository_members set role = 'reviewer' where repository_id = $1 and user_id = $2`);
    await waitFor(async () => (await total()) === 0, {
      what: 'b to see the reviewer role',
      timeoutMs: 10_000,
    });
    await a.container.database.executeSql('update repositories set show_all_findings = true where id = $1', [
      repository.id,
    ]);
    await waitFor(async () => (await total()) === 1, { what: 'b to see showAllFindings', timeoutMs: 10_000 });
    await run(`delete from repository_members where repository_id = $1 and user_id = $2`);
    await waitFor(async () => (await total()) === 0, { what: 'b to drop the membership', timeoutMs: 10_000 });
  });

  it('reads the database on every request while its listening connection is down, and caches again after', async () => {
    const company = await buildCompany(a);
    const user = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    const hash = hashSecret(user.token);
    // The listener re-attaches within a fraction of a second: an attempt counts only when b's
    // listener stayed away from before the first request to after the second.
    let checked = false;
    for (let attempt = 0; attempt < 10 && !checked; attempt += 1) {
      await waitFor(() => b.container.credentialCache.enabled, { what: 'b to listen', timeoutMs: 10_000 });
      await a.container.database.executeSql(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and query like 'listen vigil_%' and pid <> pg_backend_pid()`,
      );
      await waitFor(() => !b.container.credentialCache.enabled, { what: 'b to notice', timeoutMs: 10_000 });
      const generation = b.container.credentialCache.begin();
      const first = await getAs(b, '/api/v0/notifications', user.token);
      await silentlyOnA('update user_tokens set revoked_at = now() where hash = $1', [hash]);
      const second = await getAs(b, '/api/v0/notifications', user.token);
      const awayThroughout =
        !b.container.credentialCache.enabled && b.container.credentialCache.begin() === generation;
      await silentlyOnA('update user_tokens set revoked_at = null where hash = $1', [hash]);
      if (!awayThroughout) continue;
      expect(first.statusCode).toBe(200);
      expect(second.statusCode).toBe(401);
      checked = true;
    }
    expect(checked).toBe(true);
    await waitFor(() => b.container.credentialCache.enabled, {
      what: 'b to listen again',
      timeoutMs: 10_000,
    });
    await waitFor(() => a.container.credentialCache.enabled, {
      what: 'a to listen again',
      timeoutMs: 10_000,
    });
  });

  it('refuses a cached token at its expiry, with no notification needed', async () => {
    const company = await buildCompany(a);
    const user = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    await settle();
    let clock = new Date();
    const cache = createCredentialCache<ServiceActor | UserActor>({ maxEntries: 10 });
    cache.setEnabled(true);
    const auth = createAuthService({ db: a.container.database.db, cache, now: () => clock });
    const actor = await auth.authenticateUserToken(user.token);
    expect(await auth.authenticateUserToken(user.token)).toBe(actor); // served from the cache
    clock = new Date(Date.now() + 400 * 86_400_000);
    await expect(auth.authenticateUserToken(user.token)).rejects.toThrow(/expired/);
  });
});

describe('company user lists across two replicas', () => {
  const usernames = (res: { json(): unknown }) =>
    (res.json() as { users: Array<{ username: string }> }).users.map((u) => u.username).sort();

  it('are read from the database: a change is seen by both replicas, notified or not', async () => {
    const company = await buildCompany(a);
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const member = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    await settle();
    const url = `/api/v0/companies/${company.id}/users`;
    const before = await getAs(b, url, manager.token);
    expect(usernames(before)).toEqual([manager.username, member.username].sort());
    await silentlyOnA('update users set name = $2 where id = $1', [member.id, 'Renamed quietly']);
    const after = (await getAs(b, url, manager.token)).json() as {
      users: Array<{ userId: string; name: string }>;
    };
    expect(after.users.find((u) => u.userId === member.id)?.name).toBe('Renamed quietly');

    const disable = await a.app.inject({
      method: 'POST',
      url: `${url}/${member.id}/disable`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(disable.statusCode).toBe(200);
    expect(usernames(await getAs(a, url, manager.token))).toEqual([manager.username]);
    expect(usernames(await getAs(b, url, manager.token))).toEqual([manager.username]);
  });

  it('list a joined user at once on the replica that served the join', async () => {
    const company = await buildCompany(a);
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const other = await buildUser(a, {});
    await settle();
    const url = `/api/v0/companies/${company.id}/users`;
    expect(usernames(await getAs(a, url, manager.token))).toEqual([manager.username]);
    const invite = await a.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { username: other.username },
    });
    expect(invite.statusCode).toBe(202);
    const accept = await a.app.inject({
      method: 'POST',
      url: `/api/v0/invitations/${invite.json().id}/accept`,
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(accept.statusCode).toBe(200);
    const listed = await getAs(a, url, manager.token);
    expect(usernames(listed)).toEqual([manager.username, other.username].sort());
  });
});
