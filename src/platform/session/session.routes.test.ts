import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApp, heardAll, sendSettleMarker, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany, buildCompanyWorld, buildUser, grantCredits } from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

/** The `vigil_session` cookie value and attributes from a Set-Cookie header. */
function sessionCookie(setCookie: string | string[] | undefined) {
  const line = [setCookie ?? []].flat().find((c) => c.startsWith('vigil_session='));
  if (!line) return null;
  const [pair, ...attributes] = line.split(';').map((s) => s.trim());
  return { value: pair!.slice('vigil_session='.length), attributes: attributes.map((a) => a.toLowerCase()) };
}

async function signIn(token: string, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v0/session', payload: { token }, headers });
  expect(res.statusCode).toBe(200);
  const cookie = sessionCookie(res.headers['set-cookie']);
  expect(cookie).not.toBeNull();
  return { cookie: `vigil_session=${cookie!.value}`, csrf: res.json().csrfToken as string, body: res.json() };
}

describe('POST /api/v0/session', () => {
  it('sets an HttpOnly SameSite=Strict cookie and describes the user with a CSRF token', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/session',
      payload: { token: manager.token },
    });
    expect(res.statusCode).toBe(200);
    const cookie = sessionCookie(res.headers['set-cookie'])!;
    expect(cookie.attributes).toContain('httponly');
    expect(cookie.attributes).toContain('samesite=strict');
    expect(cookie.attributes).toContain('path=/');
    expect(cookie.attributes.some((a) => a.startsWith('expires='))).toBe(true);
    // Over plain HTTP the cookie cannot be Secure, or the browser would never send it back.
    expect(cookie.attributes).not.toContain('secure');
    const body = res.json();
    expect(body.username).toBe(manager.username);
    expect(body.companies).toEqual([
      { id: company.id, name: company.name, handle: company.handle, role: 'manager' },
    ]);
    expect(typeof body.csrfToken).toBe('string');
    expect(body.csrfToken.length).toBeGreaterThan(20);
  });

  it('marks the cookie Secure when the request came over HTTPS', async () => {
    const https = await createTestApp({ env: { VIGIL_PUBLIC_URL: 'https://vigil.example' } });
    try {
      const user = await buildUser(https);
      const res = await https.app.inject({
        method: 'POST',
        url: '/api/v0/session',
        payload: { token: user.token },
      });
      expect(res.statusCode).toBe(200);
      expect(sessionCookie(res.headers['set-cookie'])!.attributes).toContain('secure');
    } finally {
      await https.close();
    }
  });

  it('refuses a malformed or unknown token with 401 {msg} and sets no cookie', async () => {
    for (const token of ['nope', `vgl_u_${'A'.repeat(40)}`]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v0/session', payload: { token } });
      expect(res.statusCode).toBe(401);
      expect(typeof res.json().msg).toBe('string');
      expect(sessionCookie(res.headers['set-cookie'])).toBeNull();
    }
  });

  it('refuses a service key: sessions are for users', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v0/session',
      payload: { token: 'vgl_sk_' + 'a'.repeat(40) },
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('cookie authentication', () => {
  it('reads v0 with the cookie alone, and GET /api/v0/session returns the same CSRF token', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const { cookie, csrf } = await signIn(manager.token);
    const repos = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/repositories`,
      headers: { cookie },
    });
    expect(repos.statusCode).toBe(200);
    const session = await t.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } });
    expect(session.statusCode).toBe(200);
    expect(session.json().csrfToken).toBe(csrf);
  });

  it("refuses a cookie-authenticated write without the CSRF token, or with another session's", async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const other = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    const { cookie, csrf } = await signIn(manager.token);
    const { csrf: otherCsrf } = await signIn(other.token);
    const url = `/api/v0/companies/${company.id}/sso-enforcement-rules`;
    const payload = { domain: `d${Date.now()}.example` };
    const missing = await t.app.inject({ method: 'POST', url, payload, headers: { cookie } });
    expect(missing.statusCode).toBe(403);
    expect(missing.json().msg).toMatch(/X-CSRF-Token/);
    const wrong = await t.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { cookie, 'x-csrf-token': otherCsrf },
    });
    expect(wrong.statusCode).toBe(403);
    const list = await t.app.inject({ method: 'GET', url, headers: { cookie } });
    expect(list.json()).toEqual([]);
    const ok = await t.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('needs no CSRF token when the request carries a bearer token (not sent by browsers on their own)', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/sso-enforcement-rules`,
      payload: { domain: `b${Date.now()}.example` },
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(res.statusCode).toBe(201);
  });

  it('reads the scanner API for the company named in X-Vigil-Company; another company is 404', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    await grantCredits(t, company.id, 7);
    const stranger = await buildCompany(t);
    const { cookie } = await signIn(manager.token);
    const credits = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { cookie, 'x-vigil-company': company.id },
    });
    expect(credits.statusCode).toBe(200);
    expect(credits.json().remaining).toBe(7);
    const noCompany = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { cookie },
    });
    expect(noCompany.statusCode).toBe(401);
    expect(noCompany.json().code).toBe('UNAUTHENTICATED');
    const foreign = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { cookie, 'x-vigil-company': stranger.id },
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('gives company members the default scopes on the scanner API (no findings:write)', async () => {
    const { company } = await buildCompanyWorld(t);
    const member = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const { cookie, csrf } = await signIn(member.token);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/findings/00000000-0000-4000-8000-000000000000/tickets',
      payload: { provider: 'tracker_a', issueRef: 'ENG-1' },
      headers: { cookie, 'x-csrf-token': csrf, 'x-vigil-company': company.id },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('INSUFFICIENT_SCOPE');
  });

  it('answers 401 to a cookie whose token was revoked', async () => {
    const user = await buildUser(t);
    const { cookie } = await signIn(user.token);
    const session = await t.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } });
    expect(session.statusCode).toBe(200);
    await t.container.database.db.execute(
      sql`update user_tokens set revoked_at = now() where user_id = ${user.id}`,
    );
    await t.settleCredentials();
    const after = await t.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } });
    expect(after.statusCode).toBe(401);
  });
});

describe('DELETE /api/v0/session', () => {
  it('clears the cookie with the CSRF token, and refuses to without it', async () => {
    const user = await buildUser(t);
    const { cookie, csrf } = await signIn(user.token);
    const refused = await t.app.inject({ method: 'DELETE', url: '/api/v0/session', headers: { cookie } });
    expect(refused.statusCode).toBe(403);
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/session',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(res.statusCode).toBe(204);
    const cleared = sessionCookie(res.headers['set-cookie'])!;
    expect(cleared.value).toBe('');
    expect(cleared.attributes.some((a) => a.startsWith('expires=thu, 01 jan 1970'))).toBe(true);
  });

  it('clears a cookie without a valid session (expired or garbage) without asking for a token', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/session',
      headers: { cookie: 'vigil_session=garbage' },
    });
    expect(res.statusCode).toBe(204);
  });
});

/** A new token of the user through the admin API: its id, for revoking it. */
async function createToken(userId: string, body: { expiresAt?: string } = {}) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v0/admin/users/${userId}/tokens`,
    headers: { authorization: `Bearer ${t.adminToken}` },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; token: string; expiresAt: string };
}

async function sessionRow(cookie: string) {
  const value = cookie.slice('vigil_session='.length);
  const { rows } = await t.container.database.executeSql(
    'select id::text, hash, revoked_at, expires_at from console_sessions where hash = $1',
    [createHash('sha256').update(value).digest('hex')],
  );
  return rows[0] as { id: string; hash: string; revoked_at: Date | null; expires_at: Date } | undefined;
}

const readSession = (cookie: string) =>
  t.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } });

describe('console sessions are their own credential', () => {
  it('puts a random session id in the cookie, never the token, and stores only its hash', async () => {
    const user = await buildUser(t);
    const { cookie, body } = await signIn(user.token);
    const value = cookie.slice('vigil_session='.length);
    expect(value).toMatch(/^vgl_cs_[0-9A-Za-z]{40}$/);
    expect(value).not.toContain(user.token);
    const row = await sessionRow(cookie);
    expect(row?.id).toBe(body.sessionId);
    const { rows } = await t.container.database.executeSql(
      'select count(*)::int as n from console_sessions where hash = $1 or user_agent = $1',
      [value],
    );
    expect(rows[0]).toEqual({ n: 0 });
    // Each sign-in opens a session of its own.
    const again = await signIn(user.token);
    expect(again.cookie).not.toBe(cookie);
  });

  it('refuses the API token where the session id goes, and the session id as a bearer token', async () => {
    const user = await buildUser(t);
    const { cookie } = await signIn(user.token);
    const tokenAsCookie = await readSession(`vigil_session=${user.token}`);
    expect(tokenAsCookie.statusCode).toBe(401);
    expect(tokenAsCookie.json().msg).toMatch(/sign in again/);
    const sessionAsBearer = await t.app.inject({
      method: 'GET',
      url: '/api/v0/session',
      headers: { authorization: `Bearer ${cookie.slice('vigil_session='.length)}` },
    });
    expect(sessionAsBearer.statusCode).toBe(401);
  });

  it('ends at its expiry: VIGIL_SESSION_TTL_HOURS, and never after its token', async () => {
    const short = await createTestApp({ env: { VIGIL_SESSION_TTL_HOURS: '1' } });
    try {
      const user = await buildUser(short);
      const before = Date.now();
      const res = await short.app.inject({
        method: 'POST',
        url: '/api/v0/session',
        payload: { token: user.token },
      });
      expect(res.statusCode).toBe(200);
      const expiresAt = Date.parse(res.json().expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
      const cookie = sessionCookie(res.headers['set-cookie'])!;
      const expires = cookie.attributes.find((a) => a.startsWith('expires='))!.slice('expires='.length);
      expect(Math.abs(Date.parse(expires) - expiresAt)).toBeLessThan(1000);
    } finally {
      await short.close();
    }
    const user = await buildUser(t);
    const token = await createToken(user.id, { expiresAt: new Date(Date.now() + 10 * 60_000).toISOString() });
    const { cookie, body } = await signIn(token.token);
    expect(Date.parse(body.expiresAt)).toBe(Date.parse(token.expiresAt));
    expect((await readSession(cookie)).statusCode).toBe(200);
    await t.container.database.executeSql(
      "update console_sessions set expires_at = now() - interval '1 second' where id = $1",
      [body.sessionId],
    );
    await t.settleCredentials();
    const expired = await readSession(cookie);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().msg).toMatch(/expired/);
  });

  it("lists the user's open sessions, newest first, marking the one that asks", async () => {
    const user = await buildUser(t);
    const stranger = await buildUser(t);
    const first = await signIn(user.token, { 'user-agent': 'Browser One' });
    const second = await signIn(user.token, { 'user-agent': 'Browser Two' });
    const theirs = await signIn(stranger.token);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v0/sessions',
      headers: { cookie: first.cookie },
    });
    expect(res.statusCode).toBe(200);
    const list = res.json().sessions as Array<{
      id: string;
      current: boolean;
      userAgent: string;
      tokenPrefix: string;
    }>;
    expect(list.map((s) => [s.id, s.userAgent, s.current])).toEqual([
      [second.body.sessionId, 'Browser Two', false],
      [first.body.sessionId, 'Browser One', true],
    ]);
    expect(user.token.startsWith(list[0]!.tokenPrefix)).toBe(true);
    const byBearer = await t.app.inject({
      method: 'GET',
      url: '/api/v0/sessions',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect((byBearer.json().sessions as typeof list).map((s) => s.current)).toEqual([false, false]);
    expect(JSON.stringify(list)).not.toContain(theirs.body.sessionId);
  });

  it("revokes a session: its cookie stops at once; another user's session is 404; CSRF is required", async () => {
    const user = await buildUser(t);
    const stranger = await buildUser(t);
    const keep = await signIn(user.token);
    const end = await signIn(user.token);
    const url = `/api/v0/sessions/${end.body.sessionId}`;
    const foreign = await t.app.inject({
      method: 'DELETE',
      url,
      headers: { authorization: `Bearer ${stranger.token}` },
    });
    expect(foreign.statusCode).toBe(404);
    const noCsrf = await t.app.inject({ method: 'DELETE', url, headers: { cookie: keep.cookie } });
    expect(noCsrf.statusCode).toBe(403);
    expect((await readSession(end.cookie)).statusCode).toBe(200);
    const revoked = await t.app.inject({
      method: 'DELETE',
      url,
      headers: { cookie: keep.cookie, 'x-csrf-token': keep.csrf },
    });
    expect(revoked.statusCode).toBe(204);
    expect((await readSession(end.cookie)).statusCode).toBe(401);
    expect((await readSession(keep.cookie)).statusCode).toBe(200);
    const again = await t.app.inject({
      method: 'DELETE',
      url,
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(again.statusCode).toBe(204);
    const unknown = await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/sessions/not-a-session',
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(unknown.statusCode).toBe(404);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/v0/sessions',
      headers: { cookie: keep.cookie },
    });
    expect((list.json().sessions as Array<{ id: string }>).map((s) => s.id)).toEqual([keep.body.sessionId]);
  });

  it('signing out ends the session on the server, not only in the browser', async () => {
    const user = await buildUser(t);
    const { cookie, csrf } = await signIn(user.token);
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/session',
      headers: { cookie, 'x-csrf-token': csrf },
    });
    expect(res.statusCode).toBe(204);
    expect((await sessionRow(cookie))?.revoked_at).not.toBeNull();
    // A copy of the cookie kept elsewhere no longer works.
    expect((await readSession(cookie)).statusCode).toBe(401);
  });

  it('revoking the token ends the sessions opened with it, on every replica, and only those', async () => {
    const replica = await createTestApp({ shareDatabaseWith: t });
    try {
      const user = await buildUser(t);
      const token = await createToken(user.id);
      const { cookie } = await signIn(token.token);
      const other = await signIn(user.token);
      expect(
        (await replica.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } })).statusCode,
      ).toBe(200);
      const revoke = await t.app.inject({
        method: 'DELETE',
        url: `/api/v0/admin/users/${user.id}/tokens/${token.id}`,
        headers: { authorization: `Bearer ${t.adminToken}` },
      });
      expect(revoke.statusCode).toBe(204);
      await replica.settleCredentials();
      expect(
        (await replica.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } })).statusCode,
      ).toBe(401);
      expect((await readSession(cookie)).statusCode).toBe(401);
      expect((await sessionRow(cookie))?.revoked_at).not.toBeNull();
      expect((await readSession(other.cookie)).statusCode).toBe(200);
    } finally {
      await replica.close();
    }
  });

  it('disabling the user ends their sessions for good (re-enabling does not bring them back)', async () => {
    const user = await buildUser(t);
    const { cookie } = await signIn(user.token);
    expect((await readSession(cookie)).statusCode).toBe(200);
    await t.container.database.executeSql('update users set disabled_at = now() where id = $1', [user.id]);
    await t.settleCredentials();
    expect((await readSession(cookie)).statusCode).toBe(401);
    expect((await sessionRow(cookie))?.revoked_at).not.toBeNull();
    await t.container.database.executeSql('update users set disabled_at = null where id = $1', [user.id]);
    await t.settleCredentials();
    expect((await readSession(cookie)).statusCode).toBe(401);
    // The token itself works again; a new sign-in opens a new session.
    expect((await signIn(user.token)).cookie).not.toBe(cookie);
  });
});

describe('ended sessions', () => {
  it('are deleted a week after they end (session.cleanup); open and recently ended ones stay', async () => {
    const user = await buildUser(t);
    const open = await signIn(user.token);
    const recent = await signIn(user.token);
    const oldExpired = await signIn(user.token);
    const oldRevoked = await signIn(user.token);
    const db = t.container.database;
    await db.executeSql('update console_sessions set revoked_at = now() where id = $1', [
      recent.body.sessionId,
    ]);
    await db.executeSql("update console_sessions set expires_at = now() - interval '8 days' where id = $1", [
      oldExpired.body.sessionId,
    ]);
    await db.executeSql("update console_sessions set revoked_at = now() - interval '8 days' where id = $1", [
      oldRevoked.body.sessionId,
    ]);
    expect(await t.container.services.session.purgeEndedSessions()).toBeGreaterThanOrEqual(2);
    const { rows } = await db.executeSql(
      'select id::text from console_sessions where user_id = $1 order by id',
      [user.id],
    );
    expect(rows.map((r) => r.id).sort()).toEqual([open.body.sessionId, recent.body.sessionId].sort());
    expect((await readSession(open.cookie)).statusCode).toBe(200);
  });

  it('notify the credential caches only when a statement changed a session', async () => {
    const user = await buildUser(t);
    const { body } = await signIn(user.token);
    const reasonsBetween = async (change: () => Promise<unknown>) => {
      const from = await sendSettleMarker(t.container);
      await change();
      const to = await sendSettleMarker(t.container);
      await heardAll(t.container, [from, to]);
      const reasons = t.container.credentialCache.recentReasons;
      return reasons.slice(reasons.indexOf(from) + 1, reasons.indexOf(to));
    };
    const db = t.container.database;
    const nothing = await reasonsBetween(() =>
      db.executeSql('update console_sessions set revoked_at = now() where id = $1 and false', [
        body.sessionId,
      ]),
    );
    expect(nothing).not.toContain('console_sessions');
    const revoked = await reasonsBetween(() =>
      db.executeSql('update console_sessions set revoked_at = now() where id = $1', [body.sessionId]),
    );
    expect(revoked).toContain('console_sessions');
  });
});

describe('the credential cache', () => {
  it('forgets only resolved sessions when a session ends: cached tokens stay', async () => {
    const user = await buildUser(t);
    const cache = t.container.credentialCache;
    const ended = await signIn(user.token);
    const kept = await signIn(user.token);
    for (const headers of [
      { cookie: ended.cookie },
      { cookie: kept.cookie },
      { authorization: `Bearer ${user.token}` },
    ])
      expect((await t.app.inject({ method: 'GET', url: '/api/v0/session', headers })).statusCode).toBe(200);
    const hashOf = (cookieOrToken: string) =>
      createHash('sha256')
        .update(cookieOrToken.replace(/^vigil_session=/, ''))
        .digest('hex');
    expect(cache.get(hashOf(user.token), new Date())).toBeDefined();
    expect(cache.get(hashOf(kept.cookie), new Date())).toBeDefined();
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/api/v0/session',
      headers: { cookie: ended.cookie, 'x-csrf-token': ended.csrf },
    });
    expect(res.statusCode).toBe(204);
    // This process forgot what its own commit changed before answering (no settle marker here:
    // a marker empties the whole cache).
    expect(cache.recentReasons.at(-1)).toBe('console_sessions');
    expect(cache.get(hashOf(user.token), new Date())).toBeDefined();
    expect(cache.get(hashOf(kept.cookie), new Date())).toBeUndefined();
    expect((await readSession(ended.cookie)).statusCode).toBe(401);
    expect((await readSession(kept.cookie)).statusCode).toBe(200);
  });
});
