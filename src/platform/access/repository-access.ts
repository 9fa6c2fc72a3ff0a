import { and, type Column, eq, inArray, isNull, notInArray, type SQL, sql } from 'drizzle-orm';
import { type Actor, requireUser, type UserActor } from '../../auth/actor.ts';
import type { Db } from '../../db/client.ts';
import {
  findings,
  labels,
  repositories,
  repositoryMembers,
  type repositoryRoles,
} from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';

export type RepositoryRole = (typeof repositoryRoles)[number];

/** The columns of a finding row (the `findings` table or an alias of it) that access rules read. */
export interface FindingColumns {
  published: Column;
  repositoryId: Column;
  companyId: Column;
  createdBy: Column;
}

/** A user's active membership of one repository. */
export interface RepositoryMembership {
  role: RepositoryRole;
  showAllFindings: boolean;
}

/**
 * Everything that decides which findings a user sees, loaded once per request: platform
 * permissions, company memberships (from the actor) and repository memberships (one query).
 */
export interface FindingAccess {
  userId: string;
  /** Platform admins and `read_all_companies` readers see every published finding. */
  readAll: boolean;
  /** Platform admins may also do every management operation. */
  platformAdmin: boolean;
  /** Companies the user is an active member or manager of: they see all of their findings. */
  companyIds: string[];
  /** Active repository memberships by repository id (removed members have none). */
  memberships: Map<string, RepositoryMembership>;
}

/** Loads what decides the user's finding visibility (401 for callers that are not users). */
export async function loadFindingAccess(db: Db, actor: Actor): Promise<FindingAccess> {
  const user: UserActor = requireUser(actor);
  const rows = await db
    .select({
      repositoryId: repositoryMembers.repositoryId,
      role: repositoryMembers.role,
      showAllFindings: repositories.showAllFindings,
    })
    .from(repositoryMembers)
    .innerJoin(repositories, eq(repositories.id, repositoryMembers.repositoryId))
    .where(and(eq(repositoryMembers.userId, user.userId), isNull(repositoryMembers.deletedAt)));
  return {
    userId: user.userId,
    readAll: user.permissions.has('admin') || user.permissions.has('read_all_companies'),
    platformAdmin: user.permissions.has('admin'),
    companyIds: [...user.companies.keys()],
    memberships: new Map(
      rows.map((r) => [r.repositoryId, { role: r.role, showAllFindings: r.showAllFindings }]),
    ),
  };
}

/** Whether a reviewer-only view applies: the user sees only their own findings of the repository. */
export function seesOnlyOwnFindings(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): boolean {
  if (access.readAll || access.companyIds.includes(repository.companyId)) return false;
  const membership = access.memberships.get(repository.id);
  return membership?.role === 'reviewer' && !membership.showAllFindings;
}

/** Whether the user may see the repository at all (member, company user, or cross-company reader). */
export function canSeeRepository(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): boolean {
  return (
    access.readAll ||
    access.companyIds.includes(repository.companyId) ||
    access.memberships.has(repository.id)
  );
}

/**
 * The role that decides what a user may do on a repository's findings. Company users act as the
 * client (the repository belongs to their company); platform admins act as repository admins.
 * A repository role wins over the company role when it grants more.
 */
export function effectiveRole(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): RepositoryRole | null {
  if (access.platformAdmin) return 'admin';
  const own = access.memberships.get(repository.id)?.role ?? null;
  if (own && own !== 'reviewer') return own;
  if (access.companyIds.includes(repository.companyId)) return 'client';
  return own;
}

/**
 * The visibility rule (DESIGN §7) as sets, in two disjoint parts: whole repositories (those of the
 * user's companies, and those where the user's role sees everything: client, judge, triager,
 * admin, or reviewer with `showAllFindings`), and the repositories where the user sees only the
 * findings they filed (reviewer without `showAllFindings`). A repository has one membership, so
 * `fullRepositoryIds` and `ownRepositoryIds` never share an id. Cross-company readers see all.
 */
export interface VisibilityScope {
  readAll: boolean;
  companyIds: string[];
  fullRepositoryIds: string[];
  ownRepositoryIds: string[];
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
 * The findings the user may see, as one SQL condition on `findings` (DESIGN §7): published
 * findings filed on a repository where the user is a company user of its company, holds a
 * repository role that sees everything (client, judge, triager, admin, or reviewer with
 * `showAllFindings`), or is a reviewer who filed the finding. Cross-company readers see all.
 *
 * The repository sets are inlined as arrays so that the planner can use the repository, company
 * and author indexes (a correlated membership subquery per row cannot be).
 */
export function visibleFindingsCondition(access: FindingAccess, table: FindingColumns = findings): SQL {
  // Written as the predicate of the partial indexes (not `published = $1`) so that the planner can use them.
  const base = sql`(${table.published} and ${table.repositoryId} is not null)`;
  const scope = visibilityScope(access);
  if (scope.readAll) return base;
  const any: SQL[] = [];
  if (scope.companyIds.length > 0) any.push(inArray(table.companyId, scope.companyIds));
  if (scope.fullRepositoryIds.length > 0) any.push(inArray(table.repositoryId, scope.fullRepositoryIds));
  if (scope.ownRepositoryIds.length > 0) {
    any.push(
      and(eq(table.createdBy, access.userId), inArray(table.repositoryId, scope.ownRepositoryIds)) as SQL,
    );
  }
  if (any.length === 0) return sql`false`;
  return and(base, any.length === 1 ? any[0] : sql`(${sql.join(any, sql` or `)})`) as SQL;
}

/** Loads a repository the user may see; another company's (or an unknown) repository is 404. */
export async function requireVisibleRepository(db: Db, access: FindingAccess, repositoryId: string) {
  const [repository] = await db.select().from(repositories).where(eq(repositories.id, repositoryId));
  if (!repository || !canSeeRepository(access, repository)) {
    throw new AppError('NOT_FOUND', { message: 'Repository not found.' });
  }
  return repository;
}

/**
 * The repositories where the user reads as a reviewer (effective role `reviewer`): there they read
 * only reviewer-readable labels and no notes. Company users, platform admins and cross-company
 * readers never do.
 */
function reviewerReadRepositoryIds(access: FindingAccess): string[] {
  if (access.readAll || access.platformAdmin) return [];
  return [...access.memberships].filter(([, m]) => m.role === 'reviewer').map(([id]) => id);
}

/** Whether the user may read the label on a finding of the repository (DESIGN §7, `reviewerRead`). */
export function canReadLabel(
  access: FindingAccess,
  repository: { id: string; companyId: string },
  label: { reviewerRead: boolean },
): boolean {
  if (access.readAll) return true;
  return label.reviewerRead || effectiveRole(access, repository) !== 'reviewer';
}

/** Whether the user may read the private note of a finding of the repository. */
export function canReadFindingNote(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): boolean {
  return access.readAll || effectiveRole(access, repository) !== 'reviewer';
}

/**
 * {@link canReadLabel} as SQL over `labels` joined to a finding row (`findings` by default): the
 * label is reviewer-readable, or the finding is in a repository where the user is not a reviewer.
 */
export function readableLabelCondition(access: FindingAccess, finding: FindingColumns = findings): SQL {
  const reviewerIds = reviewerReadRepositoryIds(access);
  if (reviewerIds.length === 0) return sql`true`;
  const asReviewer =
    access.companyIds.length > 0
      ? and(inArray(finding.repositoryId, reviewerIds), notInArray(finding.companyId, access.companyIds))
      : inArray(finding.repositoryId, reviewerIds);
  return sql`(${labels.reviewerRead} or not (${asReviewer}))`;
}

/**
 * {@link effectiveRole} as SQL over a finding's (or a finding count's) repository and company
 * columns: the rows of repositories where the user's effective role is `role`. Company users act
 * as the client of their company's repositories unless a repository role grants more.
 */
export function effectiveRoleCondition(
  access: FindingAccess,
  role: RepositoryRole,
  columns: { repositoryId: Column; companyId: Column },
): SQL {
  if (access.platformAdmin) return role === 'admin' ? sql`true` : sql`false`;
  const own = (r: RepositoryRole) =>
    [...access.memberships].filter(([, m]) => m.role === r).map(([id]) => id);
  const inIds = (ids: string[]) => (ids.length > 0 ? inArray(columns.repositoryId, ids) : sql`false`);
  const inCompanies =
    access.companyIds.length > 0 ? inArray(columns.companyId, access.companyIds) : sql`false`;
  if (role === 'reviewer') {
    return access.companyIds.length > 0
      ? (and(inIds(own('reviewer')), notInArray(columns.companyId, access.companyIds)) as SQL)
      : inIds(own('reviewer'));
  }
  if (role !== 'client') return inIds(own(role));
  // A repository role other than reviewer and client wins over the company's client role.
  const higher = [...access.memberships]
    .filter(([, m]) => m.role !== 'reviewer' && m.role !== 'client')
    .map(([id]) => id);
  const asCompany =
    higher.length > 0 ? and(inCompanies, notInArray(columns.repositoryId, higher)) : inCompanies;
  return sql`(${inIds(own('client'))} or ${asCompany})`;
}
