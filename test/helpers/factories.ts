import { randomBytes } from 'node:crypto';
import type { Scope } from '../../src/auth/credentials.ts';
import type { TestApp } from './app.ts';

const unique = () => randomBytes(4).toString('hex');

async function post<T>(t: TestApp, token: string, url: string, payload: unknown): Promise<T> {
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${token}` },
    payload: payload as object,
  });
  if (res.statusCode >= 300) throw new Error(`POST ${url} → ${res.statusCode}: ${res.body}`);
  return res.json() as T;
}

export interface TestCompany {
  id: string;
  handle: string;
  name: string;
}

/** Creates a company through the admin API. */
export async function buildCompany(
  t: TestApp,
  overrides: Partial<{ name: string; handle: string }> = {},
): Promise<TestCompany> {
  const handle = overrides.handle ?? `co-${unique()}`;
  return post<TestCompany>(t, t.adminToken, '/api/v0/admin/companies', {
    name: overrides.name ?? `Company ${handle}`,
    handle,
  });
}

export interface TestUser {
  id: string;
  username: string;
  token: string;
  companyId: string | null;
}

/** Creates a user (in a company when given, creating nothing else) and a token for it. */
export async function buildUser(
  t: TestApp,
  overrides: Partial<{
    username: string;
    name: string;
    email: string;
    companyId: string;
    companyRole: 'manager' | 'member';
    permissions: string[];
  }> = {},
): Promise<TestUser> {
  const username = overrides.username ?? `user${unique()}`;
  const user = await post<{ id: string; username: string; companyId: string | null }>(
    t,
    t.adminToken,
    '/api/v0/admin/users',
    {
      name: overrides.name ?? username,
      ...overrides,
      username,
    },
  );
  const { token } = await post<{ token: string }>(
    t,
    t.adminToken,
    `/api/v0/admin/users/${user.id}/tokens`,
    {},
  );
  return { id: user.id, username: user.username, token, companyId: user.companyId };
}

/** A company with a manager. */
export async function buildCompanyWithManager(t: TestApp) {
  const company = await buildCompany(t);
  const manager = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
  return { company, manager };
}

/** Creates a service key of the company (default scopes unless given). */
export async function buildServiceKey(
  t: TestApp,
  companyId: string,
  scopes?: Scope[],
  extra: { expiresAt?: string } = {},
): Promise<{ id: string; key: string; scopes: Scope[] }> {
  return post(t, t.adminToken, `/api/v0/companies/${companyId}/service-keys`, {
    name: `key-${unique()}`,
    ...(scopes ? { scopes } : {}),
    ...extra,
  });
}

/** Grants credits to a company. */
export async function grantCredits(t: TestApp, companyId: string, amount: number): Promise<void> {
  await post(t, t.adminToken, `/api/v0/admin/companies/${companyId}/credits`, { amount });
}
