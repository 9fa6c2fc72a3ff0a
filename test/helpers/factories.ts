/**
 * The test factories: `buildX(t, overrides)` creates one X with sensible defaults, taking any
 * column or field from `overrides` and creating the parents it is not given (a finding its
 * repository, a repository its company …). Companies, users and service keys go through the admin
 * API (they carry credentials and hashes); the rest is written to the database directly, so that a
 * test can set what no endpoint writes (dates, numbers, states).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { eq, sql } from 'drizzle-orm';
import type { RepositoryRole } from '../../src/access/rules.ts';
import type { Scope } from '../../src/auth/credentials.ts';
import {
  archives,
  comments,
  findingRelatedFiles,
  findings,
  labels,
  repositories,
  repositoryMembers,
  workspaces,
} from '../../src/db/schema/index.ts';
import { commentsRepo } from '../../src/platform/comments/comments.repo.ts';
import type { Finding } from '../../src/platform/findings/findings.schemas.ts';
import type { FakeTrackerA } from '../fakes/tracker-a-server.ts';
import type { FakeTrackerB } from '../fakes/tracker-b-server.ts';
import { buildTarGz } from '../fixtures/archives.ts';
import { apiOk, type TestApp } from './app.ts';

const unique = () => randomBytes(4).toString('hex');

// ── Companies, users, keys ──────────────────────────────────────────────────────────────────────

export interface TestCompany {
  id: string;
  handle: string;
  name: string;
}

/** A company, created through the admin API. */
export async function buildCompany(
  t: TestApp,
  overrides: Partial<{ name: string; handle: string }> = {},
): Promise<TestCompany> {
  const handle = overrides.handle ?? `co-${unique()}`;
  return apiOk<TestCompany>(t, 'POST', '/api/v0/admin/companies', t.adminToken, {
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

export interface UserOverrides {
  username?: string;
  name?: string;
  email?: string;
  /** The company the user joins (none by default: the user creates no company). */
  companyId?: string;
  companyRole?: 'manager' | 'member';
  permissions?: string[];
}

/** A user with a token of its own, created through the admin API. */
export async function buildUser(t: TestApp, overrides: UserOverrides = {}): Promise<TestUser> {
  const username = overrides.username ?? `user${unique()}`;
  const user = await apiOk<{ id: string; username: string; companyId: string | null }>(
    t,
    'POST',
    '/api/v0/admin/users',
    t.adminToken,
    { name: overrides.name ?? username, ...overrides, username },
  );
  const { token } = await apiOk<{ token: string }>(
    t,
    'POST',
    `/api/v0/admin/users/${user.id}/tokens`,
    t.adminToken,
    {},
  );
  return { id: user.id, username: user.username, token, companyId: user.companyId };
}

/** A company with a manager and a member. */
export async function buildCompanyWorld(
  t: TestApp,
  overrides: Parameters<typeof buildCompany>[1] = {},
): Promise<{ company: TestCompany; manager: TestUser; member: TestUser }> {
  const company = await buildCompany(t, overrides);
  const [manager, member] = await Promise.all([
    buildUser(t, { companyId: company.id, companyRole: 'manager' }),
    buildUser(t, { companyId: company.id, companyRole: 'member' }),
  ]);
  return { company, manager, member };
}

export interface TestServiceKey {
  id: string;
  key: string;
  scopes: Scope[];
  companyId: string;
}

/** A service key of the company (a new company unless given; the default scopes unless given). */
export async function buildServiceKey(
  t: TestApp,
  overrides: { companyId?: string; scopes?: Scope[]; name?: string; expiresAt?: string } = {},
): Promise<TestServiceKey> {
  const { companyId = (await buildCompany(t)).id, ...body } = overrides;
  const key = await apiOk<Omit<TestServiceKey, 'companyId'>>(
    t,
    'POST',
    `/api/v0/companies/${companyId}/service-keys`,
    t.adminToken,
    { name: `key-${unique()}`, ...body },
  );
  return { ...key, companyId };
}

/** Grants credits to a company. */
export async function grantCredits(t: TestApp, companyId: string, amount: number): Promise<void> {
  await apiOk(t, 'POST', `/api/v0/admin/companies/${companyId}/credits`, t.adminToken, { amount });
}

// ── Repositories and their members ──────────────────────────────────────────────────────────────

export type TestRepository = typeof repositories.$inferSelect;

/** A repository (of a new company unless `companyId` is given). */
export async function buildRepository(
  t: TestApp,
  overrides: Partial<typeof repositories.$inferInsert> = {},
): Promise<TestRepository> {
  const companyId = overrides.companyId ?? (await buildCompany(t)).id;
  const [row] = await t.container.database.db
    .insert(repositories)
    .values({ name: `repo-${unique()}`, ...overrides, companyId })
    .returning();
  return row!;
}

/**
 * Gives a user a role in a repository (or changes it), and waits for the notification of the
 * change: the app keeps a user's memberships with their resolved credential until it arrives.
 */
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
  await t.settleCredentials();
}

/** A new user with a role (reviewer by default) in a repository (a new one unless given). */
export async function buildMember(
  t: TestApp,
  overrides: UserOverrides & { repositoryId?: string; role?: RepositoryRole } = {},
): Promise<TestUser> {
  const { repositoryId = (await buildRepository(t)).id, role = 'reviewer', ...userOverrides } = overrides;
  const user = await buildUser(t, userOverrides);
  await addMember(t, repositoryId, user.id, role);
  return user;
}

/** A company with one repository, a user in every repository role and a company member. */
export async function buildRepositoryTeam(
  t: TestApp,
  overrides: Partial<typeof repositories.$inferInsert> = {},
) {
  const company = await buildCompany(t);
  const repository = await buildRepository(t, { ...overrides, companyId: company.id });
  const member = (role: RepositoryRole) => buildMember(t, { repositoryId: repository.id, role });
  const [reviewer, otherReviewer, judge, triager, admin, client] = await Promise.all([
    member('reviewer'),
    member('reviewer'),
    member('judge'),
    member('triager'),
    member('admin'),
    member('client'),
  ]);
  const companyUser = await buildUser(t, { companyId: company.id, companyRole: 'member' });
  return { company, repository, reviewer, otherReviewer, judge, triager, admin, client, companyUser };
}

/** A label of a repository (a new one unless `repositoryId` is given). */
export async function buildLabel(
  t: TestApp,
  overrides: Partial<typeof labels.$inferInsert> = {},
): Promise<typeof labels.$inferSelect> {
  const repository = await repositoryOf(t, overrides.repositoryId ?? undefined);
  const [row] = await t.container.database.db
    .insert(labels)
    .values({
      name: `label-${unique()}`,
      ...overrides,
      repositoryId: repository.id,
      companyId: repository.companyId,
    })
    .returning();
  return row!;
}

async function repositoryOf(t: TestApp, repositoryId: string | undefined): Promise<TestRepository> {
  if (!repositoryId) return buildRepository(t);
  const [row] = await t.container.database.db
    .select()
    .from(repositories)
    .where(eq(repositories.id, repositoryId));
  if (!row) throw new Error(`no repository ${repositoryId}`);
  return row;
}

// ── Findings and comments ───────────────────────────────────────────────────────────────────────

export type TestFinding = typeof findings.$inferSelect;

export type FindingOverrides = Partial<typeof findings.$inferInsert> & {
  /** Related files, written with the finding. */
  files?: Array<Omit<typeof findingRelatedFiles.$inferInsert, 'findingId'>>;
};

/**
 * A published finding of a repository (a new one unless `repositoryId` is given), numbered the way
 * filing numbers it. `repositoryId: null` makes a scanner finding of the company instead (a new
 * company unless `companyId` is given), with no number.
 */
export async function buildFinding(t: TestApp, overrides: FindingOverrides = {}): Promise<TestFinding> {
  const { files = [], ...values } = overrides;
  const repository =
    values.repositoryId === null ? null : await repositoryOf(t, values.repositoryId ?? undefined);
  const companyId = repository?.companyId ?? values.companyId ?? (await buildCompany(t)).id;
  return t.container.database.transaction(async (tx) => {
    let number: number | undefined;
    if (repository) {
      const [seq] = await tx.db
        .update(repositories)
        .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
        .where(eq(repositories.id, repository.id))
        .returning({ n: repositories.findingSeq });
      number = seq?.n;
    }
    const [row] = await tx.db
      .insert(findings)
      .values({
        title: `Finding ${unique()}`,
        severity: 'medium',
        ...values,
        companyId,
        repositoryId: repository?.id ?? null,
        number: values.number ?? number ?? null,
        published: values.published ?? true,
      })
      .returning();
    for (const file of files) await tx.db.insert(findingRelatedFiles).values({ findingId: row!.id, ...file });
    return row!;
  });
}

/**
 * A finding as the scanner leaves it (a draft of the company with a location and a CWE, in no
 * repository or workspace): what tickets are made from.
 */
export async function buildScannerFinding(
  t: TestApp,
  overrides: FindingOverrides = {},
): Promise<TestFinding> {
  return buildFinding(t, {
    repositoryId: null,
    workspaceId: null,
    published: false,
    title: `Reentrancy in Vault.withdraw ${randomBytes(3).toString('hex')}`,
    description: 'The `withdraw` function sends ether **before** updating the balance.',
    severity: 'high',
    location: { file: 'contracts/Vault.sol', startLine: 42, endLine: 57 },
    identifiers: [{ type: 'cwe', name: 'CWE-841', value: '841' }],
    ...overrides,
  });
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

/** Files a finding through the API as the given user (what the reviewer does). */
export async function fileFinding(
  t: TestApp,
  token: string,
  repositoryId: string,
  body: FindingBody = {},
): Promise<Finding> {
  return apiOk<Finding>(t, 'POST', `/api/v0/repositories/${repositoryId}/findings`, token, {
    title: `Finding ${unique()}`,
    description: 'Details.',
    severity: 'medium',
    ...body,
  });
}

/**
 * A comment with a chosen visibility and time (the endpoint stamps the clock), on a finding and by
 * an author (new ones unless given); the finding's comment columns are recomputed as the comments
 * module does.
 */
export async function buildComment(
  t: TestApp,
  overrides: Partial<typeof comments.$inferInsert> = {},
): Promise<typeof comments.$inferSelect> {
  const findingId = overrides.findingId ?? (await buildFinding(t)).id;
  const authorId = overrides.authorId ?? (await buildUser(t)).id;
  const [row] = await t.container.database.db
    .insert(comments)
    .values({ content: 'A comment.', visibility: 'public', ...overrides, findingId, authorId })
    .returning();
  await commentsRepo(t.container.database.db).refreshCommentState([findingId]);
  return row!;
}

// ── Sources ─────────────────────────────────────────────────────────────────────────────────────

export interface TestArchive {
  archiveId: string;
  sha256: string;
  workspaceId: string;
  objectKey: string;
}

/**
 * A completed source archive (a tar.gz of `files` stored as object + archive row, the way
 * completeSourceUpload leaves it) of a company (a new one unless given), in a workspace (a new
 * one unless given).
 */
export async function buildArchive(
  t: TestApp,
  overrides: { companyId?: string; files?: Record<string, string>; workspaceId?: string } = {},
): Promise<TestArchive> {
  const companyId = overrides.companyId ?? (await buildCompany(t)).id;
  const files = overrides.files ?? { 'contracts/A.sol': 'pragma solidity ^0.8.0;\ncontract A {}\n' };
  const body = buildTarGz(Object.entries(files).map(([name, content]) => ({ name, content })));
  const sha256 = createHash('sha256').update(body).digest('hex');
  const db = t.container.database.db;
  let workspaceId = overrides.workspaceId;
  if (!workspaceId) {
    const [ws] = await db
      .insert(workspaces)
      .values({ companyId, name: `uploads-${randomBytes(3).toString('hex')}`, prefix: '', repository: null })
      .returning();
    workspaceId = ws!.id;
  }
  const uploadId = randomUUID();
  const objectKey = `test/${companyId}/${uploadId}.tar.gz`;
  await t.container.objectStore.putStream(objectKey, Readable.from([body]), { maxBytes: body.length + 1 });
  const [row] = await db
    .insert(archives)
    .values({
      companyId,
      workspaceId,
      uploadId,
      objectKey,
      sha256,
      sizeBytes: body.length,
      fileCount: Object.keys(files).length,
      expandedBytes: Object.values(files).reduce((n, c) => n + Buffer.byteLength(c), 0),
    })
    .returning();
  return { archiveId: row!.id, sha256, workspaceId, objectKey };
}

// ── Integrations ────────────────────────────────────────────────────────────────────────────────

async function putIntegration(
  t: TestApp,
  companyId: string,
  provider: 'tracker_a' | 'tracker_b' | 'sourcehost',
  payload: { site?: string; credentials: Record<string, string>; settings: Record<string, unknown> },
): Promise<{ id: string }> {
  return apiOk<{ id: string }>(
    t,
    'PUT',
    `/api/v0/companies/${companyId}/integrations/${provider}`,
    t.adminToken,
    payload,
  );
}

/**
 * Connects a sourcehost integration for the company. The default base URL answers nothing, so
 * fetching a commit fails.
 */
export async function connectSourcehost(
  t: TestApp,
  companyId: string,
  options: { baseUrl?: string; token?: string } = {},
): Promise<void> {
  await putIntegration(t, companyId, 'sourcehost', {
    credentials: { token: options.token ?? 'sourcehost-token' },
    settings: { baseUrl: options.baseUrl ?? 'http://127.0.0.1:1' },
  });
}

/** Connects the fake tracker_a workspace (raw API key by default) with a destination team. */
export async function connectTrackerA(
  t: TestApp,
  companyId: string,
  fake: FakeTrackerA,
  options: {
    auth?: 'api_key' | 'oauth';
    destination?: Record<string, unknown> | null;
    urlKey?: boolean;
  } = {},
): Promise<void> {
  const destination = options.destination === undefined ? { teamId: fake.teams[0]!.id } : options.destination;
  await putIntegration(t, companyId, 'tracker_a', {
    credentials: options.auth === 'oauth' ? { accessToken: fake.oauthToken } : { apiKey: fake.apiKey },
    settings: {
      baseUrl: fake.url,
      appUrl: fake.appUrl,
      ...(options.urlKey === false ? {} : { workspaceUrlKey: fake.urlKey }),
      ...(destination ? { destination } : {}),
    },
  });
}

/** Connects a fake tracker_b site (Basic by default; Bearer through the gateway) with a destination. */
export async function connectTrackerB(
  t: TestApp,
  companyId: string,
  fake: FakeTrackerB,
  options: {
    auth?: 'basic' | 'bearer';
    destination?: Record<string, unknown> | null;
    isDefault?: boolean;
  } = {},
): Promise<void> {
  const destination =
    options.destination === undefined ? { projectKey: 'ENG', issueType: 'Bug' } : options.destination;
  await putIntegration(t, companyId, 'tracker_b', {
    site: fake.url,
    credentials:
      options.auth === 'bearer'
        ? { accessToken: fake.bearerToken }
        : { email: fake.email, apiToken: fake.apiToken },
    settings: {
      ...(options.auth === 'bearer' ? { baseUrl: fake.gatewayUrl } : {}),
      ...(destination ? { destination } : {}),
      ...(options.isDefault ? { default: true } : {}),
    },
  });
}
