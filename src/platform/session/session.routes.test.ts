import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createTestApp, sharedTestApp } from '../../../test/helpers/app.ts';
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
