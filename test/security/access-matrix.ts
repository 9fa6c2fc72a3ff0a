/**
 * The isolation matrix: for every operation of openapi.json, a caller that has access (`as`) and
 * every caller that lacks it with the answer the contract gives them (`deny`), or an exemption
 * with its reason. v0 (platform API v0 §4, DESIGN §4, §7, §7b): another company's resource → 404;
 * a role that sees the resource but may not do the operation → 403; a user without the platform
 * permission → 403. v1 (scanner API v1 §5): another organization's resource → 404, a key without
 * the scope → 403, no service key (a user token is not one) → 401.
 *
 * The isolation test and the fuzz run both read this table: the fuzz run calls each operation as
 * its `as` caller with the resources named by `params`.
 */
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../src/auth/credentials.ts';
import { type AccessWorld, type Caller, webhookSignature as webhookSignatureOf } from './access-world.ts';

/** What a caller without access gets: an error status, or a success that shows none of `hides`. */
export type Denial = 401 | 403 | 404 | { status: 200 | 204; hides: (w: AccessWorld) => string[] };

/** Whether the values are for the control call (a caller with access) or for a denied caller. */
export type Mode = 'allow' | 'deny';

export interface MatrixEntry {
  /** A caller with access: the control call of the matrix and the fuzz run use it. */
  as: Caller;
  /** The control call's status when not 2xx (the resource is reached, a state rule answers). */
  ok?: number;
  /** The scope a v1 operation needs (for `keyWithoutScope`). */
  scope?: Scope;
  deny: Partial<Record<Caller, Denial>>;
  /** Path parameters beyond the defaults of {@link defaultParams}. */
  params?: (w: AccessWorld, mode: Mode) => Record<string, string>;
  /** The JSON body (default: the schema's required fields). */
  body?: (w: AccessWorld, caller: Caller) => unknown;
  query?: (w: AccessWorld) => string;
  headers?: (w: AccessWorld, caller: Caller, body: string) => Record<string, string>;
  /**
   * Tables a refused request may write, with the reason beside the entry (createScan stores the
   * Idempotency-Key record of a definitive 4xx so that a retry replays it, DESIGN §6).
   */
  mayWrite?: string[];
  /** A raw body sent as is (uploads, webhooks). */
  raw?: { contentType: string; body: string };
}

export interface Exemption {
  exempt: string;
}

/** Path parameters by name: the resources of company A in the world. */
export function defaultParams(w: AccessWorld): Record<string, string> {
  return {
    companyId: w.companyA.id,
    company_id: w.companyA.id,
    repo_id: w.repo.id,
    repoId: w.repo.id,
    finding_ref: w.finding.id,
    findingId: w.finding.id,
    comment_id: w.comment.id,
    label_id: w.label.id,
    notification_id: w.notification.id,
    report_id: w.report.id,
    scanId: w.scan.id,
    uploadId: w.upload.uploadId,
    keyId: w.keyToRevoke.id,
    rule_id: w.ssoRule.id,
    tokenId: w.userToken.tokenId,
    userId: w.userToken.userId,
    user_id: w.companyUserToChange.id,
    integrationId: w.sourcehostIntegration.id,
    conversation_id: w.conversation.id,
    invitation_id: w.invitationToRevoke.id,
    deliveryId: randomUUID(),
    provider: 'sourcehost',
    owner: 'acme',
    name: 'vault',
  };
}

const ADMIN: Partial<Record<Caller, Denial>> = {
  anonymous: 401,
  plainUser: 403,
  manager: 403,
  reviewer: 403,
};
/** Company user operations: another company's manager and users outside the company → 404. */
const COMPANY: Partial<Record<Caller, Denial>> = {
  anonymous: 401,
  otherManager: 404,
  plainUser: 404,
  reviewer: 404,
};
/** … that need the manager role: a member → 403. */
const MANAGER: Partial<Record<Caller, Denial>> = { ...COMPANY, member: 403 };
/** Repository operations: another company, and roles on another repository of the company → 404. */
const REPO: Partial<Record<Caller, Denial>> = {
  anonymous: 401,
  otherManager: 404,
  plainUser: 404,
  outsideReviewer: 404,
  outsideJudge: 404,
  outsideTriager: 404,
};
/** Finding operations: also a reviewer of the repository who may not see the finding → 404. */
const FINDING: Partial<Record<Caller, Denial>> = { ...REPO, otherReviewer: 404 };
/** v1: no service key → 401, a key without the scope → 403, another organization → 404. */
const v1 = (crossTenant = true): Partial<Record<Caller, Denial>> => ({
  anonymous: 401,
  manager: 401,
  keyWithoutScope: 403,
  ...(crossTenant ? { otherKey: 404 } : {}),
});

export const MATRIX: Record<string, MatrixEntry | Exemption> = {
  getHealth: { exempt: 'liveness probe: answers {status} and reads no data' },
  getReadiness: {
    exempt: 'readiness probe: answers whether the database is reachable and reads no tenant data',
  },

  // Platform administration (DESIGN §7b): platform admins only.
  adminCreateCompany: {
    as: 'platformAdmin',
    deny: ADMIN,
    body: () => ({ name: 'New', handle: `h-${randomUUID().slice(0, 8)}` }),
  },
  adminListCompanies: { as: 'platformAdmin', deny: ADMIN },
  adminCreateUser: {
    as: 'platformAdmin',
    deny: ADMIN,
    body: () => ({ name: 'U', username: `u${randomUUID().slice(0, 8)}` }),
  },
  adminCreateUserToken: { as: 'platformAdmin', deny: ADMIN },
  adminRevokeUserToken: { as: 'platformAdmin', deny: ADMIN },
  adminGrantCredits: {
    as: 'platformAdmin',
    deny: { ...ADMIN, otherManager: 403 },
    body: () => ({ amount: 1 }),
  },

  // The caller's own session.
  openSession: {
    as: 'anonymous',
    deny: { forged: 401 },
    body: (w, caller) => ({ token: caller === 'forged' ? `vgl_u_${'x'.repeat(40)}` : w.users.manager.token }),
  },
  getSession: { as: 'manager', deny: { anonymous: 401, forged: 401 } },
  // Sign-out ends the cookie's own session only; a cross-site request (the cookie without the
  // CSRF token) is refused and ends nothing.
  closeSession: {
    as: 'manager',
    deny: { forged: 403 },
    headers: (w, caller): Record<string, string> =>
      caller === 'forged'
        ? { cookie: w.sessions.toClose.cookie }
        : { cookie: w.sessions.toClose.cookie, 'x-csrf-token': w.sessions.toClose.csrfToken },
  },
  // A user's console sessions: their own only.
  listConsoleSessions: {
    as: 'manager',
    // The forged caller puts the manager's API token where the session cookie goes: refused.
    headers: (w, caller): Record<string, string> =>
      caller === 'forged' ? { cookie: `vigil_session=${w.users.manager.token}` } : {},
    deny: {
      anonymous: 401,
      forged: 401,
      otherManager: { status: 200, hides: (w) => [w.sessions.listed.id] },
      plainUser: { status: 200, hides: (w) => [w.sessions.listed.id] },
      member: { status: 200, hides: (w) => [w.sessions.listed.id] },
      platformAdmin: { status: 200, hides: (w) => [w.sessions.listed.id] },
    },
  },
  revokeConsoleSession: {
    as: 'manager',
    deny: { anonymous: 401, otherManager: 404, member: 404, plainUser: 404, platformAdmin: 404 },
    params: (w) => ({ sessionId: w.sessions.toRevoke.id }),
  },

  // Company management (DESIGN §7b): managers; other company users 403; outsiders 404.
  createServiceKey: { as: 'manager', deny: MANAGER },
  listServiceKeys: { as: 'manager', deny: MANAGER },
  revokeServiceKey: { as: 'manager', deny: MANAGER },
  putIntegration: {
    as: 'manager',
    deny: MANAGER,
    params: () => ({ provider: 'tracker_b' }),
    body: () => ({
      site: 'https://acme.tracker-b.example',
      credentials: { email: 'bot@example.com', apiToken: 'x' },
      settings: {},
    }),
  },
  deleteIntegration: { as: 'manager', deny: MANAGER, params: () => ({ provider: 'tracker_a' }), ok: 404 },
  listIntegrations: { as: 'manager', deny: MANAGER },

  // Scanner v1 (scanner API v1 §4, §5).
  getCreditBalances: { as: 'key', scope: 'credits:read', deny: v1(false) },
  createSourceUploads: {
    as: 'key',
    scope: 'scans:create',
    deny: v1(),
    body: (w) => ({
      workspaceId: w.archive.workspaceId,
      archives: [{ filename: 'a.tar.gz', sizeBytes: 10 }],
    }),
  },
  completeSourceUpload: { as: 'key', scope: 'scans:create', deny: v1(), ok: 409 },
  putSourceUpload: {
    as: 'signed',
    deny: { forged: 403 },
    raw: { contentType: 'application/gzip', body: 'not a gzip stream' },
  },
  createScan: {
    as: 'key',
    scope: 'scans:create',
    deny: v1(),
    body: (w) => ({
      type: 'standard',
      scanSources: [{ kind: 'local', archiveId: w.archive.archiveId, sha256: w.archive.sha256 }],
    }),
    headers: () => ({ 'idempotency-key': `m-${randomUUID()}` }),
    mayWrite: ['idempotency_records'],
    ok: 202,
  },
  listScans: {
    as: 'key',
    scope: 'scans:read',
    deny: { ...v1(false), otherKey: { status: 200, hides: (w) => [w.scan.id] } },
  },
  getScan: { as: 'key', scope: 'scans:read', deny: v1() },
  cancelScan: { as: 'key', scope: 'scans:create', deny: v1(), ok: 409 },
  getScanFindings: { as: 'key', scope: 'scans:read', deny: v1(), ok: 409 },
  getScanThreatModel: { as: 'key', scope: 'scans:read', deny: v1(), ok: 409 },
  // Draft triage (ADR 0023).
  listWorkspaceDrafts: {
    as: 'key',
    scope: 'findings:read',
    deny: v1(),
    params: (w) => ({ workspaceId: w.archive.workspaceId }),
  },
  listScanDrafts: { as: 'key', scope: 'findings:read', deny: v1(), ok: 409 },
  // Workspace names (ADR 0018).
  listWorkspaces: {
    as: 'key',
    scope: 'scans:read',
    deny: { ...v1(false), otherKey: { status: 200, hides: (w) => [w.archive.workspaceId] } },
  },
  getWorkspace: {
    as: 'key',
    scope: 'scans:read',
    deny: v1(),
    params: (w) => ({ workspaceId: w.archive.workspaceId }),
  },
  getScanComparison: { as: 'key', scope: 'scans:read', deny: v1(), ok: 409 },
  triageDrafts: {
    as: 'key',
    scope: 'findings:read',
    deny: v1(),
    body: (w) => ({ draftIds: [w.draft.id], action: 'dismiss', reason: 'false_positive' }),
  },
  publishDrafts: {
    // A published finding has an author: every service key is refused (console sessions publish;
    // src/scanner/drafts/drafts.test.ts covers who may).
    as: 'key',
    scope: 'findings:read',
    deny: { ...v1(false), otherKey: 403 },
    body: (w) => ({ repositoryId: w.repo.id, drafts: [{ draftId: w.draft.id }] }),
    ok: 403,
  },
  getFindingTickets: { as: 'key', scope: 'findings:read', deny: v1() },
  linkFindingTicket: {
    as: 'key',
    scope: 'findings:write',
    deny: v1(),
    body: () => ({ provider: 'tracker_a', issueRef: 'ENG-1' }),
    ok: 409,
  },
  sendFindingToIssueTracker: {
    as: 'key',
    scope: 'findings:write',
    deny: v1(),
    params: () => ({ provider: 'tracker_a' }),
    ok: 409,
  },

  // Findings (v0 §4.4, DESIGN §7): visible to the company, to repository roles that see all, and
  // to the reviewer who filed them.
  listAllFindings: {
    as: 'reviewer',
    deny: {
      anonymous: 401,
      otherManager: { status: 200, hides: (w) => [w.finding.id, w.finding2.id] },
      otherReviewer: { status: 200, hides: (w) => [w.finding.id, w.finding2.id] },
      outsideJudge: { status: 200, hides: (w) => [w.finding.id, w.finding2.id] },
      plainUser: { status: 200, hides: (w) => [w.finding.id, w.finding2.id] },
    },
  },
  createFinding: {
    as: 'reviewer',
    deny: { ...REPO, client: 403 },
    body: () => ({ title: 'T', description: 'D', severity: 'low' }),
    ok: 201,
  },
  getFinding: { as: 'reviewer', deny: FINDING },
  getFindingScanTimeline: { as: 'reviewer', deny: FINDING },
  changeFindingStatus: {
    as: 'judge',
    // Which role may make which transition (a reviewer confirming → 409) is the findings module's
    // transition table, tested in src/platform/findings/findings.routes.test.ts.
    deny: FINDING,
    body: () => ({ status: 'confirmed' }),
  },
  changeFindingSeverity: {
    as: 'judge',
    deny: { ...FINDING, reviewer: 403, client: 403 },
    body: () => ({ severity: 'critical' }),
  },
  assignFinding: {
    as: 'judge',
    deny: { ...FINDING, reviewer: 403 },
    body: (w) => ({ assignee: w.users.judge.username }),
  },
  updateFindingLabels: {
    as: 'judge',
    // A reviewer may not use a label without `reviewerUse`.
    deny: { ...FINDING, reviewer: 403 },
    body: (w) => ({ add: [w.labelToDelete.id] }),
  },
  markFindingDuplicate: {
    as: 'judge',
    deny: { ...FINDING, reviewer: 403, client: 403 },
    body: (w) => ({ duplicateOf: w.finding2.id }),
  },
  markFindingRead: { as: 'reviewer', deny: FINDING },
  listFindingEvents: { as: 'reviewer', deny: FINDING },
  listFindingPeople: { as: 'reviewer', deny: FINDING },
  bulkTriageFindings: {
    as: 'judge',
    deny: { ...FINDING, reviewer: 403, client: 403 },
    body: (w) => ({ findings: [{ repositoryId: w.repo.id, finding: w.finding.id }], severity: 'critical' }),
  },
  addFindingComment: {
    as: 'judge',
    deny: { ...FINDING, reviewer: 403 },
    // A reviewer may write public comments only (DESIGN §7): the denied reviewer asks for private.
    body: (_w, caller) => ({ content: 'Noted.', visibility: caller === 'reviewer' ? 'private' : 'public' }),
    ok: 201,
  },
  listFindingComments: { as: 'reviewer', deny: FINDING },
  editFindingComment: {
    as: 'reviewer',
    deny: { ...FINDING, judge: 403, repoAdmin: 403 },
    body: () => ({ content: 'Edited.' }),
  },
  deleteFindingComment: {
    as: 'repoAdmin',
    deny: { ...FINDING, judge: 403, client: 403 },
    params: (w) => ({ comment_id: w.commentToDelete.id }),
  },

  // The caller's own notifications.
  listNotifications: {
    as: 'manager',
    deny: { anonymous: 401, otherManager: { status: 200, hides: (w) => [w.notification.id] } },
  },
  markNotificationRead: { as: 'manager', deny: { anonymous: 401, otherManager: 404, member: 404 } },
  markAllNotificationsRead: {
    as: 'manager',
    // Another user marks only their own: the manager's notification stays unread (nothing written).
    deny: { anonymous: 401, otherManager: { status: 200, hides: () => [] } },
  },
  putCompanyNotificationWebhook: {
    as: 'manager',
    deny: MANAGER,
    body: () => ({ url: 'https://hooks.example.com/vigil' }),
  },
  deleteCompanyNotificationWebhook: { as: 'manager', deny: MANAGER },
  // The webhook's deliveries and attempts: company managers (and cross-company readers) only.
  listCompanyWebhookDeliveries: { as: 'manager', deny: MANAGER },

  // Labels: repository admins manage them (DESIGN §7b); every role that sees the repository reads them.
  listLabels: { as: 'reviewer', deny: REPO },
  createLabel: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403, client: 403 },
    body: () => ({ name: `l-${randomUUID().slice(0, 8)}` }),
    ok: 201,
  },
  updateLabel: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403 },
    body: () => ({ description: 'x' }),
  },
  deleteLabel: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403 },
    params: (w) => ({ label_id: w.labelToDelete.id }),
  },

  // Finding views (v0 §4.3): shared views by repository admins and clients.
  listFindingViews: { as: 'reviewer', deny: REPO },
  createFindingView: {
    as: 'client',
    deny: { ...REPO, reviewer: 403, judge: 403 },
    body: () => ({ personal: false, name: 'Open', filter: 'status:new' }),
    ok: 201,
  },
  deleteFindingView: {
    as: 'client',
    deny: { ...REPO, reviewer: 403, judge: 403 },
    params: (w) => ({ view_id: w.viewToDelete.id }),
    ok: 204,
  },

  // Companies and their users (v0 §4.10, DESIGN §7b).
  getCompany: { as: 'member', deny: COMPANY },
  getCompanyDashboard: { as: 'member', deny: COMPANY },
  listConnectedTrackers: { as: 'member', deny: COMPANY },
  updateCompany: { as: 'manager', deny: MANAGER, body: () => ({ name: 'Renamed' }) },
  listCompanyUsers: { as: 'member', deny: COMPANY },
  // Invitations (ADR 0016): the answer names only what the inviter gave, for a user of another
  // company as for nobody; every call names a fresh username so that a repeated call is new.
  inviteCompanyUser: {
    as: 'manager',
    deny: MANAGER,
    body: () => ({ username: `inv-${randomUUID().slice(0, 8)}` }),
    ok: 202,
  },
  listCompanyInvitations: { as: 'manager', deny: MANAGER },
  revokeCompanyInvitation: { as: 'manager', deny: MANAGER },
  // The invitee's own list: company B's invitation of the reviewer, seen by the reviewer only
  // (its inviting manager included: they list it under their company).
  listMyInvitations: {
    as: 'reviewer',
    deny: {
      anonymous: 401,
      manager: { status: 200, hides: (w) => [w.reviewerInvitation.id] },
      otherManager: { status: 200, hides: (w) => [w.reviewerInvitation.id] },
      plainUser: { status: 200, hides: (w) => [w.reviewerInvitation.id] },
      otherReviewer: { status: 200, hides: (w) => [w.reviewerInvitation.id] },
    },
  },
  // Only the invited name answers: everyone else, a platform admin and the inviting manager
  // included, gets 404 (the id reveals nothing). The invitee reaches it: declined already → 409.
  acceptInvitation: {
    as: 'outsideJudge',
    ok: 409,
    deny: {
      anonymous: 401,
      platformAdmin: 404,
      manager: 404,
      member: 404,
      otherManager: 404,
      plainUser: 404,
    },
    params: (w) => ({ invitation_id: w.declinedInvitation.id }),
  },
  declineInvitation: {
    as: 'outsideJudge',
    ok: 409,
    deny: {
      anonymous: 401,
      platformAdmin: 404,
      manager: 404,
      member: 404,
      otherManager: 404,
      plainUser: 404,
    },
    params: (w) => ({ invitation_id: w.declinedInvitation.id }),
  },
  joinCompany: {
    as: 'member',
    // Users join themselves: the manager may not join the invited user on their behalf.
    deny: { ...COMPANY, manager: 403 },
    params: (w) => ({ user_id: w.invited.id }),
    ok: 403,
  },
  disableCompanyUser: { as: 'manager', deny: MANAGER },
  reenableCompanyUser: { as: 'manager', deny: MANAGER },
  changeCompanyRole: { as: 'manager', deny: MANAGER, body: () => ({ role: 'member' }) },
  getAuditorProfile: {
    as: 'plainUser',
    deny: { anonymous: 401 },
    params: (w) => ({ user_id: w.users.reviewer.id }),
  },
  updateAuditorProfile: {
    as: 'reviewer',
    deny: { anonymous: 401, judge: 403, manager: 403, otherManager: 403 },
    params: (w) => ({ user_id: w.users.reviewer.id }),
    body: () => ({ tagline: 'Reviews things' }),
  },
  awardBadge: {
    as: 'platformAdmin',
    deny: { ...ADMIN, judge: 403 },
    params: (w) => ({ user_id: w.users.reviewer.id }),
    body: () => ({ name: 'First blood' }),
    ok: 201,
  },

  // Audit log and SSO rules (v0 §4.5, §4.9): company managers and cross-company readers.
  getCompanyAuditLog: { as: 'manager', deny: MANAGER },
  listSsoEnforcementRules: { as: 'manager', deny: MANAGER },
  createSsoEnforcementRule: {
    as: 'manager',
    deny: MANAGER,
    body: () => ({ domain: `${randomUUID().slice(0, 8)}.example.org` }),
    ok: 201,
  },
  deleteSsoEnforcementRule: { as: 'manager', deny: MANAGER },

  // Repositories (v0 §4.2, §4.7, DESIGN §7b).
  listCompanyRepositories: {
    as: 'member',
    deny: {
      anonymous: 401,
      // Outsiders see the repositories they have a role on and the public (joinable) ones only
      // (docs/adr/0054-platform-listing-rules.md); a company with neither answers 404.
      otherManager: { status: 200, hides: (w) => [w.repo.id, w.repo2.id, w.repoToFinish.id] },
      plainUser: { status: 200, hides: (w) => [w.repo.id, w.repo2.id, w.repoToFinish.id] },
      outsideReviewer: { status: 200, hides: (w) => [w.repo.id, w.repoToFinish.id] },
    },
  },
  createRepository: { as: 'manager', deny: MANAGER, body: () => ({ name: 'New repository' }), ok: 201 },
  getRepository: { as: 'reviewer', deny: REPO },
  updateRepository: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403, triager: 403, client: 403, member: 403 },
    body: () => ({ instructions: 'Read the scope.' }),
  },
  finishRepository: {
    as: 'manager',
    deny: { ...REPO, reviewer: 404, member: 403 },
    params: (w) => ({ repo_id: w.repoToFinish.id }),
  },
  getRepositoryLog: { as: 'client', deny: { ...REPO, reviewer: 403, judge: 403, triager: 403 } },
  listRepositoryMembers: { as: 'client', deny: { ...REPO, reviewer: 403 } },
  putRepositoryMember: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403, client: 403, member: 403 },
    params: (w) => ({ user_id: w.repoMemberToRemove.id }),
    body: () => ({ role: 'reviewer' }),
  },
  removeRepositoryMember: {
    as: 'repoAdmin',
    deny: { ...REPO, reviewer: 403, judge: 403, client: 403, member: 403 },
    params: (w) => ({ user_id: w.repoMemberToRemove.id }),
  },
  joinRepository: {
    as: 'outsideReviewer',
    // Only public repositories are open to join; others are invisible to outsiders.
    deny: { anonymous: 401, otherManager: 404, plainUser: 404, outsideJudge: 404, member: 403 },
    params: (w, mode) => ({ repo_id: mode === 'allow' ? w.publicRepo.id : w.repo.id }),
  },

  // Reports (v0 §4.6, DESIGN §7): public ones to everyone, private ones to the company.
  listReports: {
    as: 'member',
    deny: {
      anonymous: { status: 200, hides: (w) => [w.report.id] },
      otherManager: { status: 200, hides: (w) => [w.report.id] },
      reviewer: { status: 200, hides: (w) => [w.report.id] },
    },
  },
  createReport: {
    as: 'manager',
    deny: { ...MANAGER, repoAdmin: 404 },
    // repoToFinish is finished by finishRepository above (reports are of finished repositories).
    body: (w) => ({ repositoryId: w.repoToFinish.id, projectTitle: 'Second', clientName: 'A' }),
    ok: 201,
  },
  getReport: { as: 'member', deny: { anonymous: 404, otherManager: 404, reviewer: 404, plainUser: 404 } },
  updateReport: {
    as: 'manager',
    deny: { anonymous: 401, otherManager: 404, reviewer: 404, plainUser: 404, member: 403 },
    body: () => ({ description: 'Updated.' }),
  },
  publishReport: {
    as: 'manager',
    deny: { anonymous: 401, otherManager: 404, reviewer: 404, plainUser: 404, member: 403 },
    body: () => ({ isPrivate: true }),
  },
  listGuilds: { exempt: 'guild names are public data of the platform, not of a tenant' },
  createGuild: {
    as: 'platformAdmin',
    deny: ADMIN,
    body: () => ({ name: `g-${randomUUID().slice(0, 8)}` }),
    ok: 201,
  },

  // Source-host integration of the company.
  receiveSourcehostWebhook: {
    as: 'signed',
    deny: { forged: 401, anonymous: 401 },
    raw: { contentType: 'application/json', body: '{"zen":"ping"}' },
    headers: (w, caller, body) => ({
      'x-github-event': 'ping',
      'x-github-delivery': randomUUID(),
      ...(caller === 'anonymous'
        ? {}
        : {
            'x-hub-signature-256':
              caller === 'signed'
                ? webhookSignatureOf(w.sourcehostIntegration.webhookSecret, body)
                : webhookSignatureOf('not-the-secret', body),
          }),
    }),
    ok: 202,
  },
  listSourcehostDeliveries: { as: 'manager', deny: MANAGER },
  getDraftSettings: { as: 'manager', deny: MANAGER },
  updateDraftSettings: {
    as: 'manager',
    deny: MANAGER,
    body: () => ({ triagerUserIds: [], autoMarkFixed: false }),
  },
  redeliverSourcehostDelivery: { as: 'manager', deny: MANAGER, ok: 404 },
  listSourcehostRepositories: { as: 'manager', deny: MANAGER, ok: 502 },
  linkSourcehostRepository: { as: 'manager', deny: MANAGER, body: () => ({}) },
  unlinkSourcehostRepository: { as: 'manager', deny: MANAGER },

  // Repository statistics and the assistant (v0 §4.1): whoever may see the repository.
  getLeaderboard: { as: 'reviewer', deny: REPO },
  askAi: { as: 'reviewer', deny: REPO, body: () => ({ prompt: 'What is in scope?' }) },
  getAiStatus: { as: 'reviewer', deny: REPO },
  getAiConversation: {
    as: 'repoAdmin',
    // A conversation is its author's only (`conversation.read` in src/access/policy.ts).
    deny: { ...REPO, judge: 404, manager: 404, reviewer: 404 },
  },
};

/** The operations of a spec without a matrix entry, and the entries naming no operation. */
export function matrixGaps(
  operationIds: string[],
  matrix: Record<string, unknown>,
): { missing: string[]; stale: string[] } {
  const ids = new Set(operationIds);
  return {
    missing: operationIds.filter((id) => matrix[id] === undefined),
    stale: Object.keys(matrix).filter((id) => !ids.has(id)),
  };
}
