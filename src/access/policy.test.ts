import { describe, expect, it } from 'vitest';
import { type Actor, ANONYMOUS, type ServiceActor, type UserActor } from '../auth/actor.ts';
import { DEFAULT_SCOPES, SCOPES } from '../auth/credentials.ts';
import {
  ACTIONS,
  type Action,
  type ActorOf,
  can,
  type FindingAccess,
  findingAccessOf,
  type ReportReader,
  type RepositoryMembership,
  reportReadScope,
  type SubjectOf,
} from './policy.ts';

/**
 * The access policy as a table: for every action, subjects that tell its rule apart, and for each
 * kind of caller whether the policy allows it. A `null` cell is a caller the action is never asked
 * for (a user's repository access does not exist for anonymous callers and service keys; a scope
 * is asked for service keys only).
 */

const ROLES = [
  'anonymous',
  'service_key',
  'service_key_default',
  'platform_admin',
  'read_all',
  'company_manager',
  'company_member',
  'client',
  'reviewer',
  'reviewer_all',
  'judge',
  'triager',
  'repo_admin',
  'outsider',
] as const;
type Role = (typeof ROLES)[number];

const COMPANY = 'company-c';
/** A private repository of the company, where the repository roles are held. */
const R = { id: 'repo-r', companyId: COMPANY, isPublic: false };
/** A public (joinable) repository of the same company, where nobody holds a role. */
const P = { id: 'repo-p', companyId: COMPANY, isPublic: true };

const userId = (role: Role) => `user-${role}`;

function userActor(role: Role): UserActor {
  const permissions = new Set<string>(
    role === 'platform_admin' ? ['admin'] : role === 'read_all' ? ['read_all_companies'] : [],
  );
  const companies = new Map<string, 'manager' | 'member'>(
    role === 'company_manager'
      ? [[COMPANY, 'manager']]
      : role === 'company_member'
        ? [[COMPANY, 'member']]
        : [],
  );
  return {
    kind: 'user',
    credentialId: `cred-${role}`,
    userId: userId(role),
    username: role,
    companies,
    permissions,
  };
}

function serviceActor(scopes: readonly (typeof SCOPES)[number][]): ServiceActor {
  return { kind: 'service', credentialId: 'key', organizationId: COMPANY, scopes: new Set(scopes) };
}

function actorOf(role: Role): Actor {
  if (role === 'anonymous') return ANONYMOUS;
  if (role === 'service_key') return serviceActor(SCOPES);
  if (role === 'service_key_default') return serviceActor(DEFAULT_SCOPES);
  return userActor(role);
}

const MEMBERSHIPS: Partial<Record<Role, RepositoryMembership>> = {
  client: { role: 'client', showAllFindings: false, companyId: COMPANY },
  reviewer: { role: 'reviewer', showAllFindings: false, companyId: COMPANY },
  reviewer_all: { role: 'reviewer', showAllFindings: true, companyId: COMPANY },
  judge: { role: 'judge', showAllFindings: false, companyId: COMPANY },
  triager: { role: 'triager', showAllFindings: false, companyId: COMPANY },
  repo_admin: { role: 'admin', showAllFindings: false, companyId: COMPANY },
};

function accessOf(role: Role): FindingAccess | null {
  const actor = actorOf(role);
  if (actor.kind !== 'user') return null;
  const membership = MEMBERSHIPS[role];
  return findingAccessOf(actor, membership ? [[R.id, membership]] : []);
}

/** Who reads reports: the user's repository access, nobody's (null) for anonymous callers and service keys. */
function readerOf(role: Role): ReportReader {
  return accessOf(role);
}

/**
 * Whom an action is asked for: the caller, the user's repository access, a service key, or a
 * report reader (the user's access, or null for any other caller).
 */
const ASKED_OF: { [A in Action]: 'actor' | 'access' | 'service' | 'reader' } = {
  'platform.administer': 'actor',
  'companies.read_all': 'actor',
  'user.act_as': 'actor',
  'session.revoke': 'actor',
  'report.read': 'reader',
  'report.manage': 'access',
  'invitation.respond': 'actor',
  'company.read': 'actor',
  'company.manage': 'actor',
  'company.oversee': 'actor',
  'company.act_for': 'actor',
  'scope.use': 'service',
  'draft.triage': 'service',
  'draft.publish': 'service',
  'repository.read': 'access',
  'repository.join': 'access',
  'repository.manage': 'access',
  'repository.read_log': 'access',
  'repository.read_findings': 'access',
  'repository.read_all_findings': 'access',
  'repository.manage_labels': 'access',
  'repository.share_view': 'access',
  'finding_view.delete': 'access',
  'repository.ask_assistant': 'access',
  'finding.read': 'access',
  'finding.create': 'access',
  'finding.read_note': 'access',
  'finding.transition': 'access',
  'finding.read_tickets': 'access',
  'finding.judge': 'access',
  'finding.assign': 'access',
  'finding.label': 'access',
  'label.read': 'access',
  'label.use': 'access',
  'comment.read': 'access',
  'comment.create': 'access',
  'comment.edit': 'access',
  'comment.delete': 'access',
  'conversation.read': 'access',
};

interface Case {
  action: Action;
  /** What the subject is, for the test's name. */
  about: string;
  /** The subject, given the caller's user id (for "their own" subjects). */
  subject: (self: string) => unknown;
  /** The roles allowed; every other role of the kind asked is denied. */
  allowed: readonly Role[];
}

const c = <A extends Action>(
  action: A,
  about: string,
  subject: (self: string) => SubjectOf<A>,
  allowed: readonly Role[],
): Case => ({ action, about, subject, allowed });

const ALL_USERS: Role[] = ROLES.filter((r) => r !== 'anonymous' && !r.startsWith('service_key'));
const except = (...roles: Role[]) => ALL_USERS.filter((r) => !roles.includes(r));
const JUDGING: Role[] = ['platform_admin', 'judge', 'triager', 'repo_admin'];
const COMPANY_USERS: Role[] = ['company_manager', 'company_member'];
const repository = { repository: R };
const other = 'someone-else';
const REPORT_OF_R = { companyId: COMPANY, repositoryId: R.id };
const REPORT_OF_P = { companyId: COMPANY, repositoryId: P.id };
const REPORT_WITHOUT_REPOSITORY = { companyId: COMPANY, repositoryId: null };

const CASES: Case[] = [
  c('platform.administer', 'the platform', () => null, ['platform_admin']),
  c('companies.read_all', 'every company', () => null, ['platform_admin', 'read_all']),
  c('user.act_as', 'their own account', (self) => ({ userId: self }), ALL_USERS),
  c('user.act_as', "someone else's account", () => ({ userId: other }), ['platform_admin']),
  c('session.revoke', 'their own session', (self) => ({ session: { userId: self } }), ALL_USERS),
  c(
    'session.revoke',
    "someone else's session (a platform admin's too)",
    () => ({ session: { userId: other } }),
    [],
  ),
  c(
    'report.read',
    'a published public report of the company',
    () => ({ report: { ...REPORT_OF_R, publishedAt: new Date(0), isPrivate: false } }),
    ROLES,
  ),
  c(
    'report.read',
    'a private report of the repository',
    () => ({ report: { ...REPORT_OF_R, publishedAt: new Date(0), isPrivate: true } }),
    ['platform_admin', 'read_all', ...COMPANY_USERS, 'repo_admin'],
  ),
  c(
    'report.read',
    'a draft report of the repository',
    () => ({ report: { ...REPORT_OF_R, publishedAt: null, isPrivate: false } }),
    ['platform_admin', 'read_all', ...COMPANY_USERS, 'repo_admin'],
  ),
  c(
    'report.read',
    "a draft report of another of the company's repositories",
    () => ({ report: { ...REPORT_OF_P, publishedAt: null, isPrivate: true } }),
    ['platform_admin', 'read_all', ...COMPANY_USERS],
  ),
  c(
    'report.read',
    'a private report of the company without a repository',
    () => ({ report: { ...REPORT_WITHOUT_REPOSITORY, publishedAt: new Date(0), isPrivate: true } }),
    ['platform_admin', 'read_all', ...COMPANY_USERS],
  ),
  c('report.manage', 'a report of the repository', () => ({ report: REPORT_OF_R }), [
    'platform_admin',
    'company_manager',
    'repo_admin',
  ]),
  c('report.manage', "a report of another of the company's repositories", () => ({ report: REPORT_OF_P }), [
    'platform_admin',
    'company_manager',
  ]),
  c(
    'report.manage',
    'a report of the company without a repository',
    () => ({ report: REPORT_WITHOUT_REPOSITORY }),
    ['platform_admin', 'company_manager'],
  ),
  c(
    'invitation.respond',
    "an invitation for the reviewer's username (case aside)",
    () => ({ invitation: { username: 'REVIEWER' }, secretMatches: false }),
    ['reviewer'],
  ),
  c(
    'invitation.respond',
    "an invitation for the reviewer's username, with its e-mail's secret",
    () => ({ invitation: { username: 'reviewer' }, secretMatches: true }),
    ['reviewer'],
  ),
  c(
    'invitation.respond',
    'an invitation by e-mail, with its secret',
    () => ({ invitation: { username: null }, secretMatches: true }),
    ALL_USERS,
  ),
  c(
    'invitation.respond',
    'an invitation by e-mail, without its secret',
    () => ({ invitation: { username: null }, secretMatches: false }),
    [],
  ),
  c('company.read', 'the company', () => ({ companyId: COMPANY }), [
    'platform_admin',
    'read_all',
    ...COMPANY_USERS,
  ]),
  c('company.manage', 'the company', () => ({ companyId: COMPANY }), ['platform_admin', 'company_manager']),
  c('company.oversee', 'the company', () => ({ companyId: COMPANY }), [
    'platform_admin',
    'read_all',
    'company_manager',
  ]),
  c('company.act_for', 'the company', () => ({ companyId: COMPANY }), ['platform_admin', ...COMPANY_USERS]),
  c('scope.use', 'findings:write', () => ({ scope: 'findings:write' }), ['service_key']),
  c('scope.use', 'findings:read', () => ({ scope: 'findings:read' }), ['service_key', 'service_key_default']),
  c('draft.triage', "the company's drafts", () => ({ triagerUserIds: [] }), ['service_key']),
  // A published finding has an author: service keys never publish (console sessions: drafts.test.ts).
  c('draft.publish', "the company's drafts", () => ({ triagerUserIds: [] }), []),
  c('repository.read', 'a private repository', () => ({ repository: R }), except('outsider')),
  c('repository.read', 'a public repository', () => ({ repository: P }), ALL_USERS),
  c('repository.join', 'a private repository', () => ({ repository: R }), []),
  c('repository.join', 'a public repository', () => ({ repository: P }), ALL_USERS),
  c('repository.manage', 'the repository', () => repository, [
    'platform_admin',
    'company_manager',
    'repo_admin',
  ]),
  c('repository.read_log', 'the repository', () => repository, [
    'platform_admin',
    'read_all',
    ...COMPANY_USERS,
    'client',
    'repo_admin',
  ]),
  c('repository.read_findings', 'a private repository', () => repository, except('outsider')),
  c('repository.read_findings', 'a public repository', () => ({ repository: P }), [
    'platform_admin',
    'read_all',
    ...COMPANY_USERS,
  ]),
  c('repository.read_all_findings', 'the repository', () => repository, except('outsider', 'reviewer')),
  c('repository.manage_labels', 'the repository', () => repository, ['platform_admin', 'repo_admin']),
  c('repository.share_view', 'the repository', () => repository, [
    'platform_admin',
    ...COMPANY_USERS,
    'client',
    'repo_admin',
  ]),
  c(
    'finding_view.delete',
    'a shared view',
    () => ({ repository: R, view: { personal: false, userId: other } }),
    ['platform_admin', ...COMPANY_USERS, 'client', 'repo_admin'],
  ),
  c(
    'finding_view.delete',
    "someone else's personal view",
    () => ({ repository: R, view: { personal: true, userId: other } }),
    [],
  ),
  c('repository.ask_assistant', 'the repository', () => repository, except('outsider')),
  c(
    'finding.read',
    "someone else's published finding",
    () => ({ repository: R, finding: { createdBy: other, published: true } }),
    except('outsider', 'reviewer'),
  ),
  c(
    'finding.read',
    'their own published finding',
    (self) => ({ repository: R, finding: { createdBy: self, published: true } }),
    except('outsider'),
  ),
  c(
    'finding.read',
    'their own unpublished finding',
    (self) => ({ repository: R, finding: { createdBy: self, published: false } }),
    [],
  ),
  c('finding.create', 'the repository', () => repository, [
    'platform_admin',
    'reviewer',
    'reviewer_all',
    'judge',
    'triager',
    'repo_admin',
  ]),
  c('finding.read_note', 'a finding', () => repository, except('reviewer', 'reviewer_all')),
  c(
    'finding.transition',
    "someone else's finding, new → confirmed",
    () => ({ repository: R, finding: { createdBy: other }, from: 'new', to: 'confirmed' }),
    JUDGING,
  ),
  c(
    'finding.transition',
    'their own finding, new → withdrawn',
    (self) => ({ repository: R, finding: { createdBy: self }, from: 'new', to: 'withdrawn' }),
    ['reviewer', 'reviewer_all'],
  ),
  c(
    'finding.transition',
    "someone else's finding, confirmed → acknowledged",
    () => ({ repository: R, finding: { createdBy: other }, from: 'confirmed', to: 'acknowledged' }),
    [...JUDGING, ...COMPANY_USERS, 'client'],
  ),
  c('finding.read_tickets', 'a finding', () => repository, ['platform_admin', 'read_all', ...COMPANY_USERS]),
  c('finding.judge', 'a finding', () => repository, JUDGING),
  c(
    'finding.assign',
    'a finding',
    () => repository,
    except('read_all', 'reviewer', 'reviewer_all', 'outsider'),
  ),
  c('finding.label', 'a finding', () => repository, except('read_all', 'outsider')),
  c(
    'label.read',
    'a label hidden from reviewers',
    () => ({ repository: R, label: { reviewerRead: false } }),
    except('reviewer', 'reviewer_all'),
  ),
  c(
    'label.read',
    'a reviewer-readable label',
    () => ({ repository: R, label: { reviewerRead: true } }),
    ALL_USERS,
  ),
  c(
    'label.use',
    'a label reviewers may not use',
    () => ({ repository: R, label: { reviewerUse: false } }),
    except('reviewer', 'reviewer_all'),
  ),
  c(
    'label.use',
    'a reviewer-usable label',
    () => ({ repository: R, label: { reviewerUse: true } }),
    ALL_USERS,
  ),
  c(
    'comment.read',
    "a public comment on someone else's finding",
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'public' }),
    ALL_USERS,
  ),
  c(
    'comment.read',
    "a private comment on someone else's finding",
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'private' }),
    ['platform_admin', 'read_all', ...COMPANY_USERS, 'judge', 'triager', 'repo_admin'],
  ),
  c(
    'comment.read',
    'a private comment on their own finding',
    (self) => ({ repository: R, finding: { createdBy: self }, visibility: 'private' }),
    ALL_USERS,
  ),
  c(
    'comment.read',
    'an internal comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'internal' }),
    ['platform_admin', 'read_all', ...COMPANY_USERS, 'repo_admin'],
  ),
  c(
    'comment.read',
    'a hidden comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'hidden' }),
    ['platform_admin', 'repo_admin'],
  ),
  c(
    'comment.create',
    'a public comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'public' }),
    except('read_all', 'outsider'),
  ),
  c(
    'comment.create',
    'a private comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'private' }),
    ['platform_admin', ...COMPANY_USERS, 'judge', 'triager', 'repo_admin'],
  ),
  c(
    'comment.create',
    'an internal comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'internal' }),
    ['platform_admin', ...COMPANY_USERS, 'repo_admin'],
  ),
  c(
    'comment.create',
    'a hidden comment',
    () => ({ repository: R, finding: { createdBy: other }, visibility: 'hidden' }),
    ['platform_admin', 'repo_admin'],
  ),
  c('comment.edit', 'their own comment', (self) => ({ comment: { authorId: self } }), ALL_USERS),
  c('comment.edit', "someone else's comment", () => ({ comment: { authorId: other } }), []),
  c(
    'comment.delete',
    'their own comment',
    (self) => ({ repository: R, comment: { authorId: self } }),
    ALL_USERS,
  ),
  c('comment.delete', "someone else's comment", () => ({ repository: R, comment: { authorId: other } }), [
    'platform_admin',
    'repo_admin',
  ]),
  c(
    'conversation.read',
    'their own conversation',
    (self) => ({ conversation: { userId: self, repositoryId: R.id }, repositoryId: R.id }),
    ALL_USERS,
  ),
  c(
    'conversation.read',
    "someone else's conversation",
    () => ({ conversation: { userId: other, repositoryId: R.id }, repositoryId: R.id }),
    [],
  ),
];

/** The cell of the table: allowed, denied, or null when the action is never asked for the role. */
function expected(kase: Case, role: Role): boolean | null {
  const asked = ASKED_OF[kase.action];
  const service = role.startsWith('service_key');
  if (asked === 'service' && !service) return null;
  if (asked === 'access' && (service || role === 'anonymous')) return null;
  return kase.allowed.includes(role);
}

function ask(kase: Case, role: Role): boolean {
  const asked = ASKED_OF[kase.action];
  const actor = asked === 'access' ? accessOf(role) : asked === 'reader' ? readerOf(role) : actorOf(role);
  const askAny = can as (actor: ActorOf<Action>, action: Action, subject: SubjectOf<Action>) => boolean;
  return askAny(actor as ActorOf<Action>, kase.action, kase.subject(userId(role)) as SubjectOf<Action>);
}

describe('access policy', () => {
  it('has rows for every action of the policy', () => {
    const covered = new Set(CASES.map((k) => k.action));
    expect(ACTIONS.filter((a) => !covered.has(a))).toEqual([]);
    expect(Object.keys(ASKED_OF).sort()).toEqual([...ACTIONS].sort());
  });

  for (const kase of CASES) {
    describe(`${kase.action} on ${kase.about}`, () => {
      for (const role of ROLES) {
        const want = expected(kase, role);
        if (want === null) continue;
        it(`${want ? 'allows' : 'denies'} ${role}`, () => {
          expect(ask(kase, role)).toBe(want);
        });
      }
    });
  }
});

describe('report lists and report reads', () => {
  /** A report as {@link reportReadScope} reads it: the SQL of report lists, in JavaScript. */
  function inScope(
    reader: ReportReader,
    report: { companyId: string; repositoryId: string | null; publishedAt: Date | null; isPrivate: boolean },
  ): boolean {
    const scope = reportReadScope(reader);
    if (scope.kind === 'all') return true;
    return (
      (report.publishedAt !== null && !report.isPrivate) ||
      scope.companyIds.includes(report.companyId) ||
      (report.repositoryId !== null && scope.repositoryIds.includes(report.repositoryId))
    );
  }

  const reports = [
    REPORT_OF_R,
    REPORT_OF_P,
    REPORT_WITHOUT_REPOSITORY,
    { companyId: 'other', repositoryId: 'x' },
  ].flatMap((r) => [
    { ...r, publishedAt: null, isPrivate: true },
    { ...r, publishedAt: new Date(0), isPrivate: true },
    { ...r, publishedAt: new Date(0), isPrivate: false },
  ]);

  for (const role of ROLES) {
    it(`lists exactly the reports ${role} reads one by one`, () => {
      for (const report of reports)
        expect(inScope(readerOf(role), report), JSON.stringify(report)).toBe(
          can(readerOf(role), 'report.read', { report }),
        );
    });
  }

  for (const role of ALL_USERS) {
    it(`lets ${role} read the drafts they may make and publish`, () => {
      const access = accessOf(role)!;
      for (const report of reports) {
        if (can(access, 'report.manage', { report }))
          expect(can(access, 'report.read', { report }), JSON.stringify(report)).toBe(true);
      }
    });
  }
});
