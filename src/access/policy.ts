import type { Actor, ServiceActor, UserActor } from '../auth/actor.ts';
import { AppError } from '../errors.ts';
import {
  type CommentReader,
  type CommentVisibility,
  canReadComment,
  canTransition,
  creatableVisibilities,
  type FindingStatus,
  JUDGING_ROLES,
  type RepositoryRole,
} from './rules.ts';

/** A scope of a service key. */
type Scope = ServiceActor['scopes'] extends ReadonlySet<infer S> ? S : never;

/**
 * The access policy: every rule of who may read or do what, written once (DESIGN §7).
 *
 * `can(actor, action, subject)` answers one question; the `RULES` table below holds one rule per
 * action of `Actions`. The SQL forms of the same rules (which findings, labels, comments,
 * repositories and reports a list may show) are in `access.repo.ts`, built from the sets this file
 * derives ({@link visibilityScope}, {@link effectiveRoleSets}, {@link commentReadScope}, …), so
 * that a rule is defined here only.
 *
 * The role-level rules the console also applies (status transitions, comment visibilities) are
 * in `rules.ts`, which imports nothing of the server.
 */

/** A user's active membership of one repository. */
export interface RepositoryMembership {
  role: RepositoryRole;
  showAllFindings: boolean;
  /** The repository's company. */
  companyId: string;
}

/**
 * Everything that decides what a user may read and do on repositories, loaded once per request
 * (`loadFindingAccess`): platform permissions, company memberships (from the actor) and
 * repository memberships (one query).
 */
export interface FindingAccess {
  userId: string;
  /** Platform admins and `read_all_companies` readers see every published finding. */
  readAll: boolean;
  /** Platform admins may also do every management operation. */
  platformAdmin: boolean;
  /** Companies the user is an active member or manager of: they see all of their findings. */
  companyIds: string[];
  /** Companies the user manages: they manage all of their repositories. */
  managedCompanyIds: string[];
  /** Active repository memberships by repository id (removed members have none). */
  memberships: Map<string, RepositoryMembership>;
}

/** The repository a rule is asked about. */
export interface RepositorySubject {
  id: string;
  companyId: string;
}

// --- platform and company ------------------------------------------------------------------

/** True for platform admins. */
function isAdmin(actor: Actor): boolean {
  return actor.kind === 'user' && actor.permissions.has('admin');
}

/** True for platform users who read every company (`read_all_companies`, or `admin`). */
function readsAll(actor: Actor): boolean {
  return (
    actor.kind === 'user' && (actor.permissions.has('read_all_companies') || actor.permissions.has('admin'))
  );
}

/** The user's role in the company (null: not an active member). */
function companyRole(actor: Actor, companyId: string) {
  return actor.kind === 'user' ? (actor.companies.get(companyId) ?? null) : null;
}

// --- repositories ------------------------------------------------------------------------

/** Builds the access of a user from the actor and their active repository memberships. */
export function findingAccessOf(
  user: UserActor,
  memberships: Iterable<readonly [string, RepositoryMembership]>,
): FindingAccess {
  return {
    userId: user.userId,
    readAll: readsAll(user),
    platformAdmin: isAdmin(user),
    companyIds: [...user.companies.keys()],
    managedCompanyIds: [...user.companies].filter(([, role]) => role === 'manager').map(([id]) => id),
    memberships: new Map(memberships),
  };
}

/** Whether the user is a company user (member or manager) of the repository's company. */
function companyUserOf(access: FindingAccess, repository: RepositorySubject): boolean {
  return access.companyIds.includes(repository.companyId);
}

/** Whether the user sees the repository's findings at all: a member, a company user, a cross-company reader. */
function seesRepository(access: FindingAccess, repository: RepositorySubject): boolean {
  return access.readAll || companyUserOf(access, repository) || access.memberships.has(repository.id);
}

/**
 * The role that decides what a user may do on a repository's findings. Company users act as the
 * client (the repository belongs to their company); platform admins act as repository admins.
 * A repository role wins over the company role when it grants more.
 */
export function effectiveRole(access: FindingAccess, repository: RepositorySubject): RepositoryRole | null {
  if (access.platformAdmin) return 'admin';
  const own = access.memberships.get(repository.id)?.role ?? null;
  if (own && own !== 'reviewer') return own;
  if (companyUserOf(access, repository)) return 'client';
  return own;
}

/** Whether the user reads as a reviewer on the repository: reviewer-readable labels only, no notes. */
function readsAsReviewer(access: FindingAccess, repository: RepositorySubject): boolean {
  return !access.readAll && effectiveRole(access, repository) === 'reviewer';
}

/** Whether a reviewer-only view applies: the user sees only their own findings of the repository. */
function seesOnlyOwnFindings(access: FindingAccess, repository: RepositorySubject): boolean {
  if (access.readAll || companyUserOf(access, repository)) return false;
  const membership = access.memberships.get(repository.id);
  return membership?.role === 'reviewer' && !membership.showAllFindings;
}

/**
 * A name for what the user can read of a repository's findings: equal names, equal views
 * (cross-company reader, effective role, reviewer label view, own findings only). Text produced
 * under one view (an assistant's answer) is replayed only under the same one.
 */
export function readingView(access: FindingAccess, repository: RepositorySubject): string {
  return [
    access.readAll ? 'all' : 'scoped',
    effectiveRole(access, repository) ?? 'none',
    readsAsReviewer(access, repository) ? 'reviewer-labels' : 'all-labels',
    seesOnlyOwnFindings(access, repository) ? 'own' : 'every',
  ].join(':');
}

/**
 * The finding visibility rule (DESIGN §7) as sets, in two disjoint parts: whole repositories
 * (those of the user's companies, and those where the user's role sees everything: client, judge,
 * triager, admin, or reviewer with `showAllFindings`), and the repositories where the user sees
 * only the findings they filed (reviewer without `showAllFindings`). A repository has one
 * membership, so `fullRepositoryIds` and `ownRepositoryIds` never share an id. Cross-company
 * readers see all. The SQL predicates of lists and totals are built from these sets.
 */
export interface VisibilityScope {
  readAll: boolean;
  companyIds: string[];
  fullRepositoryIds: string[];
  ownRepositoryIds: string[];
}

/**
 * The companies whose findings the user may see in finding lists, as {@link visibilityScope}
 * decides: those the user belongs to and those of the user's repositories; `null` for
 * cross-company readers (every company). A change of findings outside them cannot change what
 * the user's lists show.
 */
export function findingCompaniesOf(access: FindingAccess): ReadonlySet<string> | null {
  if (access.readAll) return null;
  const companies = new Set(access.companyIds);
  for (const membership of access.memberships.values()) companies.add(membership.companyId);
  return companies;
}

/** Splits the user's access into the parts of {@link VisibilityScope}. */
export function visibilityScope(access: FindingAccess): VisibilityScope {
  const full: string[] = [];
  const own: string[] = [];
  for (const [repositoryId, m] of access.memberships) {
    if (m.role !== 'reviewer' || m.showAllFindings) full.push(repositoryId);
    else own.push(repositoryId);
  }
  return {
    readAll: access.readAll,
    companyIds: access.companyIds,
    fullRepositoryIds: full,
    ownRepositoryIds: own,
  };
}

/**
 * The repositories where the user reads as a reviewer by membership (their company's repositories
 * excepted, see {@link readsAsReviewer}): the SQL form of the reviewer-readable label and note rules.
 */
export function reviewerReadRepositoryIds(access: FindingAccess): string[] {
  if (access.readAll || access.platformAdmin) return [];
  return [...access.memberships].filter(([, m]) => m.role === 'reviewer').map(([id]) => id);
}

/**
 * {@link effectiveRole} as sets, for its SQL form: the rows of repositories where the user's
 * effective role is `role` are those with `repositoryId` in `repositoryIds` and `companyId` not in
 * `exceptCompanyIds`, or with `companyId` in `companyIds` and `repositoryId` not in
 * `exceptRepositoryIds` (`all`: every row).
 */
export interface EffectiveRoleSets {
  all: boolean;
  repositoryIds: string[];
  exceptCompanyIds: string[];
  companyIds: string[];
  exceptRepositoryIds: string[];
}

/** Derives the {@link EffectiveRoleSets} of `role` for the user. */
export function effectiveRoleSets(access: FindingAccess, role: RepositoryRole): EffectiveRoleSets {
  const none = {
    all: false,
    repositoryIds: [],
    exceptCompanyIds: [],
    companyIds: [],
    exceptRepositoryIds: [],
  };
  if (access.platformAdmin) return { ...none, all: role === 'admin' };
  const own = (r: RepositoryRole) =>
    [...access.memberships].filter(([, m]) => m.role === r).map(([id]) => id);
  // A reviewer of a repository of their own company acts as its client there.
  if (role === 'reviewer')
    return { ...none, repositoryIds: own('reviewer'), exceptCompanyIds: access.companyIds };
  if (role !== 'client') return { ...none, repositoryIds: own(role) };
  // A repository role other than reviewer and client wins over the company's client role.
  const higher = [...access.memberships]
    .filter(([, m]) => m.role !== 'reviewer' && m.role !== 'client')
    .map(([id]) => id);
  return {
    ...none,
    repositoryIds: own('client'),
    companyIds: access.companyIds,
    exceptRepositoryIds: higher,
  };
}

// --- findings ----------------------------------------------------------------------------

// --- comments ----------------------------------------------------------------------------

/** The caller as a reader of one finding's comments. */
function commentReaderOf(
  access: FindingAccess,
  repository: RepositorySubject,
  finding: { createdBy: string | null },
): CommentReader {
  return {
    platformAdmin: access.platformAdmin,
    companySide: access.readAll || companyUserOf(access, repository),
    repositoryRole: access.memberships.get(repository.id)?.role ?? null,
    isFindingAuthor: finding.createdBy !== null && finding.createdBy === access.userId,
  };
}

/**
 * {@link canReadComment} as sets, for the SQL predicates of comment lists, counts and comment
 * times: per restricted visibility, whether the user reads it everywhere, in the findings of which
 * companies and repositories, and (private) in the findings they filed.
 */
export interface CommentReadScope {
  all: boolean;
  /** `hidden`: repository admins. */
  hiddenRepositoryIds: string[];
  /** `internal`: the company side (companies, or every company for cross-company readers) and admins. */
  internalAll: boolean;
  internalCompanyIds: string[];
  internalRepositoryIds: string[];
  /** `private`: everything `internal` reads, plus the finding's author and judges and triagers. */
  privateRepositoryIds: string[];
}

/** Derives the {@link CommentReadScope} of the user. */
export function commentReadScope(access: FindingAccess): CommentReadScope {
  const judging: string[] = [];
  const admin: string[] = [];
  for (const [repositoryId, m] of access.memberships) {
    if (m.role === 'judge' || m.role === 'triager') judging.push(repositoryId);
    if (m.role === 'admin') admin.push(repositoryId);
  }
  return {
    all: access.platformAdmin,
    hiddenRepositoryIds: admin,
    internalAll: access.readAll,
    internalCompanyIds: access.companyIds,
    internalRepositoryIds: admin,
    privateRepositoryIds: judging,
  };
}

/** Repository roles whose members `@username` may ping (v0 §2.5: auditors of the repository). */
const PINGABLE_BY_NAME: ReadonlySet<RepositoryRole> = new Set(['reviewer', 'judge', 'triager']);

/** Someone a comment could ping, with what decides whether they see the finding and the comment. */
export interface PingCandidate {
  userId: string;
  /** Active membership of the repository's company (joined, not disabled). */
  companyUser: boolean;
  /** Active repository role. */
  repositoryRole: RepositoryRole | null;
  showAllFindings: boolean;
  isFindingAuthor: boolean;
  platformAdmin: boolean;
  readAll: boolean;
  /** The account is neither disabled nor deleted. */
  active: boolean;
}

/**
 * Whether the candidate sees the finding (DESIGN §7): platform admins, cross-company readers,
 * company users, and repository members other than reviewers who see only their own findings.
 */
export function candidateSeesFinding(candidate: PingCandidate): boolean {
  return (
    candidate.platformAdmin ||
    candidate.readAll ||
    candidate.companyUser ||
    (candidate.repositoryRole !== null &&
      (candidate.repositoryRole !== 'reviewer' || candidate.showAllFindings || candidate.isFindingAuthor))
  );
}

/**
 * Whether a finding may be assigned to the candidate: an active member of the repository or user
 * of its company who sees the finding (an assignee who would get 404 is refused).
 */
export function mayBeAssigned(candidate: PingCandidate): boolean {
  return (
    candidate.active &&
    (candidate.companyUser || candidate.repositoryRole !== null) &&
    candidateSeesFinding(candidate)
  );
}

/**
 * Who of a finding's audience the caller may list (the assignee and mention pickers): callers
 * who may assign see everyone who sees the finding; other writers (reviewers) see only those an
 * `@username` would reach, which are the people their comments can address anyway.
 */
export function audienceListing(access: FindingAccess, repository: RepositorySubject): 'all' | 'mentionable' {
  return can(access, 'finding.assign', { repository }) ? 'all' : 'mentionable';
}

/**
 * Whether a ping notifies the candidate: `@project` reaches the active company users of the
 * repository's company, `@username` an active reviewer, judge or triager of the repository; in
 * both cases only when the candidate sees the finding and may read the comment, never the author.
 */
export function mayBePinged(
  candidate: PingCandidate,
  via: 'project' | 'username',
  comment: { authorId: string; visibility: CommentVisibility },
): boolean {
  if (!candidate.active || candidate.userId === comment.authorId) return false;
  if (via === 'project' && !candidate.companyUser) return false;
  if (via === 'username' && !(candidate.repositoryRole && PINGABLE_BY_NAME.has(candidate.repositoryRole)))
    return false;
  if (!candidateSeesFinding(candidate)) return false;
  return canReadComment(
    {
      platformAdmin: candidate.platformAdmin,
      companySide: candidate.readAll || candidate.companyUser,
      repositoryRole: candidate.repositoryRole,
      isFindingAuthor: candidate.isFindingAuthor,
    },
    comment.visibility,
  );
}

/**
 * Whether a company's notification webhook may carry the notifications of a comment of this
 * visibility: the company reads it (its side reads everything but `hidden`).
 */
export function webhookMayCarry(visibility: CommentVisibility): boolean {
  return canReadComment(
    { platformAdmin: false, companySide: true, repositoryRole: null, isFindingAuthor: false },
    visibility,
  );
}

/**
 * Checks that the caller may write a comment of this visibility on a finding they see
 * (`comment.create`), with a message that names why not.
 */
export function requireCanCreateComment(
  access: FindingAccess,
  repository: RepositorySubject,
  finding: { createdBy: string | null },
  visibility: CommentVisibility,
): void {
  if (can(access, 'comment.create', { repository, finding, visibility })) return;
  const role = effectiveRole(access, repository);
  if (role === null)
    throw new AppError('FORBIDDEN', { message: 'You may read but not comment on this finding.' });
  if (role === 'reviewer')
    throw new AppError('FORBIDDEN', { message: 'Reviewers may only write public comments.' });
  throw new AppError('FORBIDDEN', { message: `You may not write ${visibility} comments on this finding.` });
}

/** Whether a reviewer's `@project` spends one of their pings: only the caller's role decides. */
export function projectPingSpendsPing(access: FindingAccess, repository: RepositorySubject): boolean {
  return effectiveRole(access, repository) === 'reviewer';
}

// --- reports ----------------------------------------------------------------------------

/**
 * Who a report is read for: the user's repository access, or `null` for anonymous callers and
 * service keys (they read public reports only).
 */
export type ReportReader = FindingAccess | null;

/** The report a rule is asked about (a report made before repositories has no `repositoryId`). */
export interface ReportSubject {
  companyId: string;
  repositoryId: string | null;
}

/**
 * The repositories whose reports the user makes, changes and publishes by their repository role
 * (admin): they also read every report of them, drafts and private ones (ADR 0009).
 */
function reportRepositoryIds(access: FindingAccess): string[] {
  return [...access.memberships].filter(([, m]) => m.role === 'admin').map(([id]) => id);
}

/** Whether the user makes and publishes the reports of the report's repository by their role there. */
function adminsReportRepository(access: FindingAccess, report: ReportSubject): boolean {
  return report.repositoryId !== null && access.memberships.get(report.repositoryId)?.role === 'admin';
}

/**
 * `report.read` as sets, for the SQL of report lists: every report (`all`), or the public ones
 * (published and not private), every report of `companyIds` and every report of `repositoryIds`
 * (private ones and drafts).
 */
export type ReportReadScope =
  | { kind: 'all' }
  | { kind: 'public-and'; companyIds: string[]; repositoryIds: string[] };

/** Derives the {@link ReportReadScope} of the reader (anonymous callers: public reports only). */
export function reportReadScope(reader: ReportReader): ReportReadScope {
  if (reader === null) return { kind: 'public-and', companyIds: [], repositoryIds: [] };
  if (reader.readAll) return { kind: 'all' };
  return { kind: 'public-and', companyIds: reader.companyIds, repositoryIds: reportRepositoryIds(reader) };
}

// --- the policy --------------------------------------------------------------------------

type Repo = { repository: RepositorySubject };
type CompanySubject = { companyId: string };
type FindingSubject = Repo & { finding: { createdBy: string | null; published: boolean } };

/**
 * Every action of the policy, with the actor it is asked for and its subject. Platform and
 * company actions are asked for the {@link Actor}; repository, finding, label, comment and
 * assistant actions for the user's loaded {@link FindingAccess}; scopes for a service key.
 */
export interface Actions {
  /** Every management operation of the platform (users, guilds, permissions). */
  'platform.administer': { actor: Actor; subject: null };
  /** End a console session: only the user it belongs to. */
  'session.revoke': { actor: Actor; subject: { session: { userId: string } } };
  /** Read every company (lists of all companies, reports, the session's companies). */
  'companies.read_all': { actor: Actor; subject: null };
  /** Act on a user account (profile, joining a company): the user themselves, or a platform admin. */
  'user.act_as': { actor: Actor; subject: { userId: string } };
  /**
   * Read a report: public ones (published, not private) for anyone; every report (drafts and
   * private ones) of their companies for company users, of their repositories for repository
   * admins (who make them); every one for cross-company readers.
   */
  'report.read': {
    actor: ReportReader;
    subject: { report: ReportSubject & { publishedAt: Date | null; isPrivate: boolean } };
  };
  /**
   * Make a report of a repository, change it and publish it (public or private): the company's
   * managers, platform admins, and the admins of the report's repository (ADR 0009).
   */
  'report.manage': { actor: FindingAccess; subject: { report: ReportSubject } };
  /**
   * Answer (accept or decline) an invitation: one by username, the user of that name only; one by
   * e-mail alone, whoever presents the one-time secret of its e-mail. Nobody answers for another.
   */
  'invitation.respond': {
    actor: Actor;
    subject: { invitation: { username: string | null }; secretMatches: boolean };
  };
  /** Read what a company's users read: members, repositories, settings. */
  'company.read': { actor: Actor; subject: CompanySubject };
  /** Change the company: settings, members, webhook, repositories, service keys, integrations. */
  'company.manage': { actor: Actor; subject: CompanySubject };
  /** Read the company's administrative data (audit log, SSO rules): managers and cross-company readers. */
  'company.oversee': { actor: Actor; subject: CompanySubject };
  /**
   * Act for the company on the scanner API with a console session or a user token (X-Vigil-Company):
   * its users and platform admins.
   */
  'company.act_for': { actor: Actor; subject: CompanySubject };
  /** Use an operation of the scanner API that requires a scope. */
  'scope.use': { actor: ServiceActor; subject: { scope: Scope } };
  /**
   * Dismiss or reopen a scan's drafts: service keys with `findings:write`, and the company's
   * managers or the members a manager allows (`triagerUserIds`), acting with a console session or a
   * user token.
   */
  'draft.triage': { actor: ServiceActor; subject: { triagerUserIds: readonly string[] } };
  /**
   * Publish a draft as a repository finding: a person (a console session or a user token acting
   * for the company) who may triage; a service key never publishes (a published finding has an
   * author).
   */
  'draft.publish': { actor: ServiceActor; subject: { triagerUserIds: readonly string[] } };
  /** See the repository itself (its settings): whoever sees its findings, and anyone when it is public. */
  'repository.read': {
    actor: FindingAccess;
    subject: { repository: RepositorySubject & { isPublic: boolean } };
  };
  /** Join the repository as a reviewer: public (joinable) repositories only. */
  'repository.join': {
    actor: FindingAccess;
    subject: { repository: RepositorySubject & { isPublic: boolean } };
  };
  /** Update the repository, its members, finish it: repository admins, company managers, platform admins. */
  'repository.manage': { actor: FindingAccess; subject: Repo };
  /** Read the change log and the member list: those who manage it, clients, company users, cross-company readers. */
  'repository.read_log': { actor: FindingAccess; subject: Repo };
  /** See the repository's findings, labels and assistant (not for a public repository's outsiders). */
  'repository.read_findings': { actor: FindingAccess; subject: Repo };
  /** See every finding of the repository, not only one's own (reviewers without `showAllFindings` do not). */
  'repository.read_all_findings': { actor: FindingAccess; subject: Repo };
  /** Create, update, archive and delete the repository's labels. */
  'repository.manage_labels': { actor: FindingAccess; subject: Repo };
  /** Create a shared (not personal) finding view of the repository. */
  'repository.share_view': { actor: FindingAccess; subject: Repo };
  /** Delete a saved view: one's own personal view, or a shared view by those who may share. */
  'finding_view.delete': {
    actor: FindingAccess;
    subject: Repo & { view: { personal: boolean; userId: string | null } };
  };
  /** Ask the repository assistant: whoever sees the repository's findings. */
  'repository.ask_assistant': { actor: FindingAccess; subject: Repo };
  /** See a finding: published, and in a repository whose findings (or one's own there) the user sees. */
  'finding.read': { actor: FindingAccess; subject: FindingSubject };
  /** File a finding: reviewers, judges, triagers, admins. */
  'finding.create': { actor: FindingAccess; subject: Repo };
  /** Read the private note of a finding: everyone but reviewers. */
  'finding.read_note': { actor: FindingAccess; subject: Repo };
  /** Change a finding's status from `from` to `to`. */
  'finding.transition': {
    actor: FindingAccess;
    subject: Repo & { finding: { createdBy: string | null }; from: FindingStatus; to: FindingStatus };
  };
  /** See a finding's tracker tickets (and their events on its timeline): its company's users, cross-company readers. */
  'finding.read_tickets': { actor: FindingAccess; subject: Repo };
  /** Judge a finding: change its severity, mark or unmark duplicates. */
  'finding.judge': { actor: FindingAccess; subject: Repo };
  /** Assign a finding. */
  'finding.assign': { actor: FindingAccess; subject: Repo };
  /** Add and remove a finding's labels (each label also by `label.use`). */
  'finding.label': { actor: FindingAccess; subject: Repo };
  /** Read a label on a finding of the repository (reviewers: `reviewerRead` labels only). */
  'label.read': { actor: FindingAccess; subject: Repo & { label: { reviewerRead: boolean } } };
  /** Put a label on a finding or take it off (reviewers: `reviewerUse` labels only). */
  'label.use': { actor: FindingAccess; subject: Repo & { label: { reviewerUse: boolean } } };
  /** Read a comment of this visibility on a finding the user sees. */
  'comment.read': {
    actor: FindingAccess;
    subject: Repo & { finding: { createdBy: string | null }; visibility: CommentVisibility };
  };
  /** Write a comment of this visibility on a finding the user sees. */
  'comment.create': {
    actor: FindingAccess;
    subject: Repo & { finding: { createdBy: string | null }; visibility: CommentVisibility };
  };
  /** Edit a comment: its author only. */
  'comment.edit': { actor: FindingAccess; subject: { comment: { authorId: string | null } } };
  /** Delete a comment: its author, and for moderation repository and platform admins. */
  'comment.delete': { actor: FindingAccess; subject: Repo & { comment: { authorId: string | null } } };
  /** Read or continue an assistant conversation: only the user who started it, on its repository. */
  'conversation.read': {
    actor: FindingAccess;
    subject: { conversation: { userId: string; repositoryId: string }; repositoryId: string };
  };
}

export type Action = keyof Actions;
export type ActorOf<A extends Action> = Actions[A]['actor'];
export type SubjectOf<A extends Action> = Actions[A]['subject'];

/** Platform admins and the company's managers manage a company. */
function managesCompanyOf(actor: Actor, companyId: string): boolean {
  return isAdmin(actor) || companyRole(actor, companyId) === 'manager';
}

/**
 * A person acting for the company (a console session or a user token) holds `findings:write` when
 * a manager (or a platform admin); a member triages only when a manager allowed them. A service key
 * needs `findings:write`.
 */
function mayTriageDrafts(actor: ServiceActor, triagerUserIds: readonly string[]): boolean {
  if (actor.scopes.has('findings:write')) return true;
  return actor.sessionUserId !== undefined && triagerUserIds.includes(actor.sessionUserId);
}

/** One rule per action: the only place that decides access. */
const RULES: { [A in Action]: (actor: ActorOf<A>, subject: SubjectOf<A>) => boolean } = {
  'platform.administer': (actor) => isAdmin(actor),
  'companies.read_all': (actor) => readsAll(actor),
  'session.revoke': (actor, { session }) => actor.kind === 'user' && actor.userId === session.userId,
  'user.act_as': (actor, { userId }) => (actor.kind === 'user' && actor.userId === userId) || isAdmin(actor),
  'report.read': (reader, { report }) =>
    (report.publishedAt !== null && !report.isPrivate) ||
    (reader !== null &&
      (reader.readAll ||
        reader.companyIds.includes(report.companyId) ||
        adminsReportRepository(reader, report))),
  'report.manage': (access, { report }) =>
    access.platformAdmin ||
    access.managedCompanyIds.includes(report.companyId) ||
    adminsReportRepository(access, report),
  'invitation.respond': (actor, { invitation, secretMatches }) =>
    actor.kind === 'user' &&
    (invitation.username === null
      ? secretMatches
      : invitation.username.toLowerCase() === actor.username.toLowerCase()),
  'company.read': (actor, { companyId }) => companyRole(actor, companyId) !== null || readsAll(actor),
  'company.manage': (actor, { companyId }) => managesCompanyOf(actor, companyId),
  'company.oversee': (actor, { companyId }) => companyRole(actor, companyId) === 'manager' || readsAll(actor),
  'company.act_for': (actor, { companyId }) => companyRole(actor, companyId) !== null || isAdmin(actor),
  'scope.use': (actor, { scope }) => actor.scopes.has(scope),
  'draft.triage': (actor, subject) => mayTriageDrafts(actor, subject.triagerUserIds),
  'draft.publish': (actor, subject) =>
    actor.sessionUserId !== undefined && mayTriageDrafts(actor, subject.triagerUserIds),
  'repository.read': (access, { repository }) => seesRepository(access, repository) || repository.isPublic,
  'repository.join': (_access, { repository }) => repository.isPublic,
  'repository.manage': (access, { repository }) =>
    access.platformAdmin ||
    access.managedCompanyIds.includes(repository.companyId) ||
    access.memberships.get(repository.id)?.role === 'admin',
  'repository.read_log': (access, { repository }) =>
    RULES['repository.manage'](access, { repository }) ||
    access.readAll ||
    effectiveRole(access, repository) === 'client' ||
    companyUserOf(access, repository),
  'repository.read_findings': (access, { repository }) => seesRepository(access, repository),
  'repository.read_all_findings': (access, { repository }) =>
    seesRepository(access, repository) && !seesOnlyOwnFindings(access, repository),
  'repository.manage_labels': (access, { repository }) => effectiveRole(access, repository) === 'admin',
  'repository.share_view': (access, { repository }) => {
    const role = effectiveRole(access, repository);
    return role === 'admin' || role === 'client';
  },
  'finding_view.delete': (access, { repository, view }) =>
    view.personal ? view.userId === access.userId : RULES['repository.share_view'](access, { repository }),
  'repository.ask_assistant': (access, { repository }) => seesRepository(access, repository),
  'finding.read': (access, { repository, finding }) =>
    finding.published &&
    seesRepository(access, repository) &&
    (!seesOnlyOwnFindings(access, repository) ||
      (finding.createdBy !== null && finding.createdBy === access.userId)),
  'finding.create': (access, { repository }) => {
    const role = effectiveRole(access, repository);
    return role !== null && role !== 'client';
  },
  'finding.read_note': (access, { repository }) => !readsAsReviewer(access, repository),
  'finding.transition': (access, { repository, finding, from, to }) =>
    canTransition(
      effectiveRole(access, repository),
      from,
      to,
      finding.createdBy !== null && finding.createdBy === access.userId,
    ),
  'finding.read_tickets': (access, { repository }) => access.readAll || companyUserOf(access, repository),
  'finding.judge': (access, { repository }) => {
    const role = effectiveRole(access, repository);
    return role !== null && JUDGING_ROLES.has(role);
  },
  'finding.assign': (access, { repository }) => {
    const role = effectiveRole(access, repository);
    return role !== null && role !== 'reviewer';
  },
  'finding.label': (access, { repository }) => effectiveRole(access, repository) !== null,
  'label.read': (access, { repository, label }) => label.reviewerRead || !readsAsReviewer(access, repository),
  'label.use': (access, { repository, label }) =>
    label.reviewerUse || effectiveRole(access, repository) !== 'reviewer',
  'comment.read': (access, { repository, finding, visibility }) =>
    canReadComment(commentReaderOf(access, repository, finding), visibility),
  'comment.create': (access, { repository, finding, visibility }) =>
    creatableVisibilities(
      effectiveRole(access, repository),
      commentReaderOf(access, repository, finding),
    ).includes(visibility),
  'comment.edit': (access, { comment }) => comment.authorId !== null && comment.authorId === access.userId,
  'comment.delete': (access, { repository, comment }) =>
    RULES['comment.edit'](access, { comment }) || effectiveRole(access, repository) === 'admin',
  'conversation.read': (access, { conversation, repositoryId }) =>
    conversation.userId === access.userId && conversation.repositoryId === repositoryId,
};

/** Every action of the policy (the keys of its rule table). */
export const ACTIONS = Object.keys(RULES) as Action[];

/** Whether the actor may do the action on the subject. */
export function can<A extends Action>(actor: ActorOf<A>, action: A, subject: SubjectOf<A>): boolean {
  return RULES[action](actor, subject);
}

// --- callers -----------------------------------------------------------------------------

/** Throws unless the actor is a user (401 for anonymous callers, 403 for service keys). */
export function requireUser(actor: Actor): UserActor {
  if (actor.kind === 'user') return actor;
  throw new AppError(actor.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
}

/** Throws FORBIDDEN unless the user is a platform admin. */
export function requirePlatformAdmin(actor: Actor): UserActor {
  const user = requireUser(actor);
  if (!can(user, 'platform.administer', null))
    throw new AppError('FORBIDDEN', { message: 'Platform admins only.' });
  return user;
}

/** Throws INSUFFICIENT_SCOPE unless the service actor holds the scope. */
export function requireScope(actor: ServiceActor, scope: Scope): void {
  if (!can(actor, 'scope.use', { scope })) {
    throw new AppError('INSUFFICIENT_SCOPE', { message: `This operation requires the ${scope} scope.` });
  }
}

/** 404 for a company the caller may not see, so that ids of other companies reveal nothing. */
export function companyNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Company not found.' });
}

/** A company user of the company, or a cross-company reader; 404 for anyone else. */
export function requireCompanyReader(actor: Actor, companyId: string): UserActor {
  const user = requireUser(actor);
  if (!can(user, 'company.read', { companyId })) throw companyNotFound();
  return user;
}

/**
 * A company manager or a platform admin: 404 (never 403) when the user may not see the company,
 * so that other companies' ids reveal nothing; 403 when they see it but may not manage it.
 */
export function requireCompanyManager(actor: Actor, companyId: string): UserActor {
  const user = requireCompanyReader(actor, companyId);
  if (!can(user, 'company.manage', { companyId })) {
    throw new AppError('FORBIDDEN', { message: 'Only company managers may do this.' });
  }
  return user;
}

/**
 * A company manager, or a cross-company reader (`read_all_companies`, platform admins): the
 * readers of a company's administrative data (audit log, SSO rules). Other company users → 403,
 * anyone else → 404.
 */
export function requireCompanyOverseer(actor: Actor, companyId: string): UserActor {
  const user = requireCompanyReader(actor, companyId);
  if (can(user, 'company.oversee', { companyId })) return user;
  throw new AppError('FORBIDDEN', { message: 'Only company managers may see this.' });
}
