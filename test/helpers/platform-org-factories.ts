import { randomBytes } from 'node:crypto';
import { findingRelatedFiles, findings, type severities } from '../../src/db/schema/index.ts';
import type { TestApp } from './app.ts';
import { buildCompany, buildUser, type TestCompany, type TestUser } from './factories.ts';

const unique = () => randomBytes(4).toString('hex');

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request through the app; `token` null sends none. */
export async function api(t: TestApp, method: Method, url: string, token: string | null, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    payload: payload as object | undefined,
  });
}

/** The same, failing the test unless the status is 2xx; returns the parsed body. */
export async function apiOk<T = Record<string, unknown>>(
  t: TestApp,
  method: Method,
  url: string,
  token: string | null,
  payload?: unknown,
): Promise<T> {
  const res = await api(t, method, url, token, payload);
  if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode}: ${res.body}`);
  return (res.body ? res.json() : null) as T;
}

export interface TestRepo {
  id: string;
  name: string;
  companyId: string;
}

/** Creates a repository of the company through the API (as the platform admin unless a token is given). */
export async function buildRepo(
  t: TestApp,
  companyId: string,
  body: Record<string, unknown> = {},
  token: string = t.adminToken,
): Promise<TestRepo & Record<string, unknown>> {
  const repo = await apiOk<TestRepo & Record<string, unknown>>(
    t,
    'POST',
    `/api/v0/companies/${companyId}/repositories`,
    token,
    {
      name: `repo-${unique()}`,
      ...body,
    },
  );
  return { ...repo, companyId };
}

/** Gives a user a repository role through the API. */
export async function putMember(
  t: TestApp,
  repositoryId: string,
  userId: string,
  role: 'client' | 'reviewer' | 'judge' | 'triager' | 'admin',
  extra: { teamId?: string | null; pingsLeft?: number } = {},
): Promise<void> {
  await apiOk(t, 'PUT', `/api/v0/repositories/${repositoryId}/members/${userId}`, t.adminToken, {
    role,
    ...extra,
  });
}

/** A new user (no company) with a repository role. */
export async function buildRepoMember(
  t: TestApp,
  repositoryId: string,
  role: 'client' | 'reviewer' | 'judge' | 'triager' | 'admin',
  overrides: Parameters<typeof buildUser>[1] = {},
): Promise<TestUser> {
  const user = await buildUser(t, overrides);
  await putMember(t, repositoryId, user.id, role);
  return user;
}

/** A company with a manager and a member. */
export async function buildOrg(
  t: TestApp,
): Promise<{ company: TestCompany; manager: TestUser; member: TestUser }> {
  const company = await buildCompany(t);
  const manager = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
  const member = await buildUser(t, { companyId: company.id, companyRole: 'member' });
  return { company, manager, member };
}

let findingNumber = 0;

/**
 * Inserts a finding row directly (the findings API belongs to another module): published and
 * confirmed unless told otherwise, with optional related files.
 */
export async function insertFinding(
  t: TestApp,
  values: {
    companyId: string;
    repositoryId: string;
    createdBy?: string | null;
    status?: (typeof findings.$inferInsert)['status'];
    severity?: (typeof severities)[number];
    published?: boolean;
    reward?: string | null;
    title?: string;
    fixedBy?: string[];
    files?: Array<{
      path: string;
      startLine?: number;
      endLine?: number;
      language?: string;
      relevantContent?: string;
    }>;
  },
) {
  findingNumber += 1;
  const [row] = await t.container.database.db
    .insert(findings)
    .values({
      companyId: values.companyId,
      repositoryId: values.repositoryId,
      number: findingNumber,
      createdBy: values.createdBy ?? null,
      status: values.status ?? 'confirmed',
      severity: values.severity ?? 'high',
      published: values.published ?? true,
      reward: values.reward ?? null,
      title: values.title ?? `Finding ${findingNumber}`,
      description: `Description of finding ${findingNumber}`,
      fixedBy: values.fixedBy ?? [],
    })
    .returning();
  for (const file of values.files ?? []) {
    await t.container.database.db.insert(findingRelatedFiles).values({ findingId: row!.id, ...file });
  }
  return row!;
}
