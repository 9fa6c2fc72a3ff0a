/**
 * One populated instance for the isolation matrix and the fuzz run: two companies, a repository of
 * company A with a user in every repository role, users holding roles on another repository of A,
 * and one resource of every kind the API addresses by id (finding, comment, label, view, report,
 * notification, conversation, scan, upload, service key, SSO rule, integration …). Callers are
 * named; {@link credentialsOf} turns a name into request headers.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { SCOPES, type Scope } from '../../src/auth/credentials.ts';
import type { TestApp } from '../helpers/app.ts';
import { apiOk } from '../helpers/app.ts';
import {
  buildArchive,
  buildCompany,
  buildServiceKey,
  buildUser,
  grantCredits,
  type TestUser,
} from '../helpers/factories.ts';
import { localScanBody, newIdempotencyKey, REENTRANT_BANK } from '../helpers/scan-helpers.ts';

/** Named callers of the matrix. */
export const CALLERS = [
  'anonymous',
  'platformAdmin',
  /** A user with no company, no repository role and no platform permission. */
  'plainUser',
  'manager',
  'member',
  /** Manager of company B. */
  'otherManager',
  /** Reviewer of the repository, author of the finding. */
  'reviewer',
  /** Reviewer of the repository who did not file the finding (the repository hides others' findings). */
  'otherReviewer',
  'judge',
  'triager',
  'repoAdmin',
  'client',
  /** Reviewer, judge and triager of another repository of company A. */
  'outsideReviewer',
  'outsideJudge',
  'outsideTriager',
  /** Service key of company A with every scope. */
  'key',
  /** Service key of company B with every scope. */
  'otherKey',
  /** Service key of company A with every scope but the one the operation needs. */
  'keyWithoutScope',
  /** No credential but a valid signature (upload URL, webhook). */
  'signed',
  /** No credential and a forged signature. */
  'forged',
] as const;
export type Caller = (typeof CALLERS)[number];

const unique = () => randomBytes(4).toString('hex');

export interface AccessWorld {
  t: TestApp;
  users: Record<
    Exclude<
      Caller,
      'anonymous' | 'platformAdmin' | 'key' | 'otherKey' | 'keyWithoutScope' | 'signed' | 'forged'
    >,
    TestUser
  >;
  companyA: { id: string };
  companyB: { id: string };
  /** The repository every role is on; repo2 holds the outside roles; repoToFinish and publicRepo serve one operation each. */
  repo: { id: string };
  repo2: { id: string };
  repoToFinish: { id: string };
  publicRepo: { id: string };
  finding: { id: string; number: number };
  finding2: { id: string; number: number };
  comment: { id: string };
  commentToDelete: { id: string };
  /** A shared saved view of `repo`, made by its client (what deleteFindingView removes). */
  viewToDelete: { id: string };
  label: { id: string; name: string };
  labelToDelete: { id: string };
  report: { id: string };
  notification: { id: string };
  conversation: { id: string };
  scan: { id: string };
  /** An open draft of company A's workspace (what the draft triage operations act on). */
  draft: { id: string };
  archive: { archiveId: string; sha256: string; workspaceId: string };
  upload: { uploadId: string; uploadUrl: string };
  sourcehostIntegration: { id: string; webhookSecret: string };
  keyA: string;
  keyB: string;
  keyToRevoke: { id: string };
  ssoRule: { id: string };
  /** A member of company A whose role and status operations may change. */
  companyUserToChange: TestUser;
  /** A user invited to company A (by username) who has not joined yet. */
  invited: TestUser;
  /** A pending invitation of company A for a name no user has (revokeCompanyInvitation revokes it). */
  invitationToRevoke: { id: string };
  /** An invitation of company A for the outside judge's username, which they declined. */
  declinedInvitation: { id: string };
  /** A pending invitation of company B for the reviewer's username. */
  reviewerInvitation: { id: string };
  /** A member of the repository that removeRepositoryMember may remove. */
  repoMemberToRemove: TestUser;
  userToken: { userId: string; tokenId: string };
  /** Console sessions of the manager: one listed, one for revokeConsoleSession, one for closeSession. */
  sessions: Record<'listed' | 'toRevoke' | 'toClose', ConsoleSignIn>;
}

/** A console session opened through `POST /api/v0/session`. */
export interface ConsoleSignIn {
  id: string;
  /** The `Cookie` header value carrying the session. */
  cookie: string;
  csrfToken: string;
}

/** Signs in to the console with a user token, as the console does. */
export async function signInToConsole(t: TestApp, token: string): Promise<ConsoleSignIn> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v0/session', payload: { token } });
  if (res.statusCode !== 200) throw new Error(`openSession → ${res.statusCode}: ${res.body}`);
  const line = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('vigil_session='));
  if (!line) throw new Error('openSession set no vigil_session cookie');
  const body = res.json() as { sessionId: string; csrfToken: string };
  return { id: body.sessionId, cookie: line.split(';')[0]!, csrfToken: body.csrfToken };
}

/** Builds the world through the API wherever an endpoint exists, as the users allowed to. */
export async function buildAccessWorld(t: TestApp): Promise<AccessWorld> {
  const admin = t.adminToken;
  const companyA = await buildCompany(t);
  const companyB = await buildCompany(t);
  const user = (o: Parameters<typeof buildUser>[1] = {}) => buildUser(t, o);
  const [manager, member, otherManager, plainUser, companyUserToChange] = await Promise.all([
    user({ companyId: companyA.id, companyRole: 'manager' }),
    user({ companyId: companyA.id, companyRole: 'member' }),
    user({ companyId: companyB.id, companyRole: 'manager' }),
    user(),
    user({ companyId: companyA.id, companyRole: 'member' }),
  ]);
  const [reviewer, otherReviewer, judge, triager, repoAdmin, client] = await Promise.all([
    user(),
    user(),
    user(),
    user(),
    user(),
    user(),
  ]);
  const [outsideReviewer, outsideJudge, outsideTriager, repoMemberToRemove, invited] = await Promise.all([
    user(),
    user(),
    user(),
    user(),
    user(),
  ]);
  const newRepo = (body: Record<string, unknown> = {}) =>
    apiOk<{ id: string }>(t, 'POST', `/api/v0/companies/${companyA.id}/repositories`, manager.token, {
      name: `repo-${unique()}`,
      ...body,
    });
  const repo = await newRepo();
  const repo2 = await newRepo();
  const repoToFinish = await newRepo();
  const publicRepo = await newRepo({ isPublic: true });
  const put = (repoId: string, u: TestUser, role: string) =>
    apiOk(t, 'PUT', `/api/v0/repositories/${repoId}/members/${u.id}`, admin, { role });
  await put(repo.id, reviewer, 'reviewer');
  await put(repo.id, otherReviewer, 'reviewer');
  await put(repo.id, judge, 'judge');
  await put(repo.id, triager, 'triager');
  await put(repo.id, repoAdmin, 'admin');
  await put(repo.id, client, 'client');
  await put(repo.id, repoMemberToRemove, 'reviewer');
  await put(repo2.id, outsideReviewer, 'reviewer');
  await put(repo2.id, outsideJudge, 'judge');
  await put(repo2.id, outsideTriager, 'triager');

  const label = await apiOk<{ id: string; name: string }>(
    t,
    'POST',
    `/api/v0/repositories/${repo.id}/labels`,
    repoAdmin.token,
    { name: `label-${unique()}`, reviewerUse: true, reviewerRead: true },
  );
  const labelToDelete = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/repositories/${repo.id}/labels`,
    repoAdmin.token,
    { name: `label-${unique()}` },
  );
  const file = (title: string) =>
    apiOk<{ id: string; number: number }>(
      t,
      'POST',
      `/api/v0/repositories/${repo.id}/findings`,
      reviewer.token,
      {
        title,
        description: 'Reentrancy in withdraw.',
        severity: 'high',
        labels: [label.id],
      },
    );
  const finding = await file('Reentrancy in Vault.withdraw');
  const finding2 = await file('Reentrancy in Vault.withdrawAll');
  const commentUrl = `/api/v0/repositories/${repo.id}/findings/${finding.id}/comment`;
  // `@project` notifies the company's users: the manager's notification below.
  const comment = await apiOk<{ id: string }>(t, 'POST', commentUrl, reviewer.token, {
    content: 'Please look at this @project',
  });
  const commentToDelete = await apiOk<{ id: string }>(t, 'POST', commentUrl, reviewer.token, {
    content: 'A second thought.',
  });
  const viewToDelete = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/repositories/${repo.id}/finding-views`,
    client.token,
    { personal: false, name: 'To delete', filter: 'status:new' },
  );
  const notifications = await apiOk<{ notifications: Array<{ id: string }> }>(
    t,
    'GET',
    '/api/v0/notifications',
    manager.token,
  );
  const notification = notifications.notifications[0];
  if (!notification) throw new Error(`no notification for the manager: ${JSON.stringify(notifications)}`);

  await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finding-views`, reviewer.token, {
    personal: true,
    name: 'mine',
    filter: 'status:new',
  });
  const conversationId = randomUUID();
  await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/ai/ask`, repoAdmin.token, {
    prompt: 'Which findings are open?',
    conversationId,
  });
  const reportRepo = await newRepo();
  await apiOk(t, 'POST', `/api/v0/repositories/${reportRepo.id}/finish`, manager.token, {});
  const report = await apiOk<{ id: string }>(t, 'POST', '/api/v0/reports', manager.token, {
    repositoryId: reportRepo.id,
    projectTitle: 'Vault review',
    clientName: 'Company A',
    isPrivate: true,
  });
  const ssoRule = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/companies/${companyA.id}/sso-enforcement-rules`,
    manager.token,
    { domain: `a-${unique()}.example.com` },
  );
  const webhookSecret = `whsec-${unique()}`;
  const integration = await apiOk<{ id: string }>(
    t,
    'PUT',
    `/api/v0/companies/${companyA.id}/integrations/sourcehost`,
    manager.token,
    {
      credentials: { token: 'sourcehost-token', webhookSecret },
      settings: { baseUrl: 'http://127.0.0.1:1' },
    },
  );
  await apiOk(t, 'POST', `/api/v0/companies/${companyA.id}/users`, manager.token, {
    username: invited.username,
  });
  const invitationToRevoke = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/companies/${companyA.id}/users`,
    manager.token,
    { username: `nobody-${unique()}` },
  );
  const declinedInvitation = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/companies/${companyA.id}/users`,
    manager.token,
    { username: outsideJudge.username },
  );
  await apiOk(t, 'POST', `/api/v0/invitations/${declinedInvitation.id}/decline`, outsideJudge.token);
  const reviewerInvitation = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/companies/${companyB.id}/users`,
    otherManager.token,
    { username: reviewer.username },
  );
  const keyA = (await buildServiceKey(t, { companyId: companyA.id, scopes: [...SCOPES] })).key;
  const keyB = (await buildServiceKey(t, { companyId: companyB.id, scopes: [...SCOPES] })).key;
  const keyToRevoke = await buildServiceKey(t, { companyId: companyA.id });
  const { id: tokenId } = await apiOk<{ id: string }>(
    t,
    'POST',
    `/api/v0/admin/users/${plainUser.id}/tokens`,
    admin,
    {},
  );

  await grantCredits(t, companyA.id, 100);
  const archive = await buildArchive(t, {
    companyId: companyA.id,
    files: { 'contracts/Bank.sol': REENTRANT_BANK },
  });
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/scanner/v1/scans',
    headers: { authorization: `Bearer ${keyA}`, 'idempotency-key': newIdempotencyKey() },
    payload: localScanBody(archive),
  });
  if (created.statusCode !== 202) throw new Error(`createScan → ${created.statusCode}: ${created.body}`);
  const scan = created.json() as { id: string };
  const draftRows = await t.container.database.db.execute<{ id: string }>(sql`
    insert into findings (company_id, workspace_id, fingerprint, rule_id, published, triage_state, title, severity, location)
    values (${companyA.id}, ${archive.workspaceId}, ${`fp-${unique()}`}, 'vigil.reentrancy', false, 'open',
            'Reentrancy in withdraw', 'high', ${JSON.stringify({ file: 'contracts/Bank.sol', startLine: 9, endLine: 9 })}::jsonb)
    returning id`);
  const draft = { id: draftRows.rows[0]!.id };
  const sessions = await t.app.inject({
    method: 'POST',
    url: '/api/scanner/v1/source-uploads',
    headers: { authorization: `Bearer ${keyA}` },
    payload: { workspaceId: archive.workspaceId, archives: [{ filename: 'source.tar.gz', sizeBytes: 512 }] },
  });
  if (sessions.statusCode !== 200)
    throw new Error(`createSourceUploads → ${sessions.statusCode}: ${sessions.body}`);
  const upload = (sessions.json() as { uploads: Array<{ uploadId: string; uploadUrl: string }> }).uploads[0]!;

  const [listed, toRevoke, toClose] = await Promise.all([
    signInToConsole(t, manager.token),
    signInToConsole(t, manager.token),
    signInToConsole(t, manager.token),
  ]);

  return {
    t,
    draft,
    sessions: { listed, toRevoke, toClose },
    users: {
      plainUser,
      manager,
      member,
      otherManager,
      reviewer,
      otherReviewer,
      judge,
      triager,
      repoAdmin,
      client,
      outsideReviewer,
      outsideJudge,
      outsideTriager,
    },
    companyA,
    companyB,
    repo,
    repo2,
    repoToFinish,
    publicRepo,
    finding,
    finding2,
    comment,
    commentToDelete,
    viewToDelete,
    label,
    labelToDelete,
    report,
    notification,
    conversation: { id: conversationId },
    scan,
    archive,
    upload,
    sourcehostIntegration: { id: integration.id, webhookSecret },
    keyA,
    keyB,
    keyToRevoke: { id: keyToRevoke.id },
    ssoRule,
    companyUserToChange,
    invited,
    invitationToRevoke: { id: invitationToRevoke.id },
    declinedInvitation: { id: declinedInvitation.id },
    reviewerInvitation: { id: reviewerInvitation.id },
    repoMemberToRemove,
    userToken: { userId: plainUser.id, tokenId },
  };
}

const keysWithout = new Map<Scope, string>();

/** Request headers of a named caller (`scope`: the scope the operation needs, for `keyWithoutScope`). */
export async function credentialsOf(
  w: AccessWorld,
  caller: Caller,
  scope?: Scope,
): Promise<Record<string, string>> {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  switch (caller) {
    case 'anonymous':
    case 'signed':
    case 'forged':
      return {};
    case 'platformAdmin':
      return bearer(w.t.adminToken);
    case 'key':
      return bearer(w.keyA);
    case 'otherKey':
      return { 'x-api-key': w.keyB };
    case 'keyWithoutScope': {
      if (!scope) throw new Error('keyWithoutScope needs the scope of the operation');
      let key = keysWithout.get(scope);
      if (!key) {
        key = (
          await buildServiceKey(w.t, { companyId: w.companyA.id, scopes: SCOPES.filter((s) => s !== scope) })
        ).key;
        keysWithout.set(scope, key);
      }
      return bearer(key);
    }
    default:
      return bearer(w.users[caller].token);
  }
}

/** The signature header of the sourcehost webhook for a body. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** A signed upload URL with one character of its signature changed. */
export function forgeUploadUrl(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  for (const [name, value] of parsed.searchParams) {
    if (/sig/i.test(name)) {
      parsed.searchParams.set(name, value.slice(0, -1) + (value.endsWith('A') ? 'B' : 'A'));
    }
  }
  return `${parsed.pathname}${parsed.search}`;
}

/** Path and query of an upload URL. */
export function localPath(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  return `${parsed.pathname}${parsed.search}`;
}

let fingerprintSql: string | undefined;

/**
 * A digest of every row of every table in the public schema, except the `last_used_at` columns
 * that authenticating a credential updates: equal digests before and after a request mean the
 * request wrote nothing.
 */
export async function databaseFingerprint(t: TestApp): Promise<Record<string, string>> {
  const db = t.container.database.db;
  if (!fingerprintSql) {
    const res = await db.execute<{ table_name: string; cols: string }>(
      sql.raw(`select c.table_name, string_agg(quote_ident(c.column_name), ', ' order by c.ordinal_position) as cols
        from information_schema.columns c join information_schema.tables tb
          on tb.table_schema = c.table_schema and tb.table_name = c.table_name
        where c.table_schema = 'public' and tb.table_type = 'BASE TABLE' and c.column_name <> 'last_used_at'
        group by c.table_name order by c.table_name`),
    );
    fingerprintSql = `select ${res.rows
      .map(
        (r) =>
          `(select md5(coalesce(string_agg(h, '' order by h), '')) from (select md5(row(${r.cols})::text) as h from "${r.table_name}") x) as "${r.table_name}"`,
      )
      .join(', ')}`;
  }
  const res = await db.execute<Record<string, string>>(sql.raw(fingerprintSql));
  return res.rows[0] ?? {};
}

/** Lowercase hex SHA-256 (for request bodies that carry a checksum). */
export const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
