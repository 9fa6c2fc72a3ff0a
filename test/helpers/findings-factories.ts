import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { RepositoryRole } from '../../src/access/rules.ts';
import { comments, findings, labels, repositories, repositoryMembers } from '../../src/db/schema/index.ts';
import { commentsRepo } from '../../src/platform/comments/comments.repo.ts';
import type { Finding } from '../../src/platform/findings/findings.schemas.ts';
import type { TestApp } from './app.ts';
import { buildCompany, buildUser, type TestCompany, type TestUser } from './factories.ts';

const unique = () => randomBytes(4).toString('hex');

export type TestRepository = typeof repositories.$inferSelect;

/** Creates a repository of a company directly in the database (creating the company when not given). */
export async function buildRepository(
  t: TestApp,
  overrides: Partial<typeof repositories.$inferInsert> = {},
): Promise<TestRepository> {
  const companyId = overrides.companyId ?? (await buildCompany(t)).id;
  const [row] = await t.container.database.db
    .insert(repositories)
    .values({ name: `repo-${unique()}`, ...overrides, companyId })
    .returning();
  return row as TestRepository;
}

/** Adds (or re-adds) a user to a repository with a role. */
export async function addMember(
  t: TestApp,
  repositoryId: string,
  userId: string,
  role: RepositoryRole,
  extra: Partial<typeof repositoryMembers.$inferInsert> = {},
): Promise<void> {
  await t.container.database.db
    .insert(repositoryMembers)
    .values({ repositoryId, userId, role, ...extra })
    .onConflictDoUpdate({
      target: [repositoryMembers.repositoryId, repositoryMembers.userId],
      set: { role, ...extra },
    });
}

/** A new user with a role in the repository. */
export async function buildMember(
  t: TestApp,
  repository: TestRepository,
  role: RepositoryRole,
  overrides: Parameters<typeof buildUser>[1] = {},
): Promise<TestUser> {
  const user = await buildUser(t, overrides);
  await addMember(t, repository.id, user.id, role);
  return user;
}

/** A company with one repository and a user in every repository role, plus a company member. */
export async function buildRepositoryTeam(
  t: TestApp,
  overrides: Partial<typeof repositories.$inferInsert> = {},
) {
  const company: TestCompany = await buildCompany(t);
  const repository = await buildRepository(t, { ...overrides, companyId: company.id });
  const [reviewer, otherReviewer, judge, triager, admin, client] = await Promise.all([
    buildMember(t, repository, 'reviewer'),
    buildMember(t, repository, 'reviewer'),
    buildMember(t, repository, 'judge'),
    buildMember(t, repository, 'triager'),
    buildMember(t, repository, 'admin'),
    buildMember(t, repository, 'client'),
  ]);
  const companyUser = await buildUser(t, { companyId: company.id, companyRole: 'member' });
  return {
    company,
    repository,
    reviewer: reviewer as TestUser,
    otherReviewer: otherReviewer as TestUser,
    judge: judge as TestUser,
    triager: triager as TestUser,
    admin: admin as TestUser,
    client: client as TestUser,
    companyUser,
  };
}

export interface FindingBody {
  title?: string;
  description?: string;
  severity?: string;
  relatedFiles?: Array<{
    path: string;
    lines?: { start: number; end: number };
    language?: string;
    relevantContent?: string;
  }>;
  assetGroupId?: string;
  labels?: string[];
}

/** Files a finding through the API as the given user. */
export async function fileFinding(
  t: TestApp,
  token: string,
  repositoryId: string,
  body: FindingBody = {},
): Promise<Finding> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v0/repositories/${repositoryId}/findings`,
    headers: { authorization: `Bearer ${token}` },
    payload: { title: `Finding ${unique()}`, description: 'Details.', severity: 'medium', ...body },
  });
  if (res.statusCode !== 201) throw new Error(`file finding → ${res.statusCode}: ${res.body}`);
  return res.json() as Finding;
}

/** Sets columns of a finding directly (reward, dates … that no endpoint of this module writes). */
export async function setFinding(
  t: TestApp,
  id: string,
  values: Partial<typeof findings.$inferInsert>,
): Promise<void> {
  await t.container.database.db.update(findings).set(values).where(eq(findings.id, id));
}

/** Creates a label of a repository directly. */
export async function buildLabel(
  t: TestApp,
  repository: TestRepository,
  overrides: Partial<typeof labels.$inferInsert> = {},
): Promise<typeof labels.$inferSelect> {
  const [row] = await t.container.database.db
    .insert(labels)
    .values({
      name: `label-${unique()}`,
      ...overrides,
      repositoryId: repository.id,
      companyId: repository.companyId,
    })
    .returning();
  return row as typeof labels.$inferSelect;
}

/**
 * Writes a comment directly, with a chosen time (the endpoint stamps the clock), and recomputes
 * the finding's comment columns as the comments module does.
 */
export async function addComment(
  t: TestApp,
  findingId: string,
  authorId: string,
  visibility: 'public' | 'private' | 'internal' | 'hidden' = 'public',
  createdAt?: Date,
): Promise<void> {
  await t.container.database.db
    .insert(comments)
    .values({ findingId, authorId, content: 'A comment.', visibility, ...(createdAt ? { createdAt } : {}) });
  await commentsRepo(t.container.database.db).refreshCommentState([findingId]);
}

/** GET with a token; returns status and parsed body. */
export async function getJson<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  url: string,
): Promise<{ status: number; body: T }> {
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: res.json() as T };
}

/** Sends a request with a token and a JSON body; returns status and parsed body. */
export async function sendJson<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  return { status: res.statusCode, body: (res.body ? res.json() : null) as T };
}

/**
 * Inserts a published finding directly with the given columns (dates, reward, status …), taking
 * the repository's next number the way filing does.
 */
export async function insertFinding(
  t: TestApp,
  repository: TestRepository,
  values: Partial<typeof findings.$inferInsert> = {},
): Promise<typeof findings.$inferSelect> {
  return t.container.database.transaction(async (tx) => {
    const [seq] = await tx.db
      .update(repositories)
      .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
      .where(eq(repositories.id, repository.id))
      .returning({ n: repositories.findingSeq });
    const [row] = await tx.db
      .insert(findings)
      .values({
        title: `Finding ${unique()}`,
        severity: 'medium',
        ...values,
        companyId: repository.companyId,
        repositoryId: repository.id,
        number: seq?.n,
        published: values.published ?? true,
      })
      .returning();
    return row as typeof findings.$inferSelect;
  });
}
