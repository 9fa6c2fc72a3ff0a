import { and, type Column, eq, inArray, isNull, notInArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import {
  comments,
  companies,
  findings,
  labels,
  reports,
  repositories,
  repositoryMembers,
} from '../db/schema/index.ts';
import {
  can,
  commentReadScope,
  effectiveRoleSets,
  type FindingAccess,
  type ReportReadScope,
  type RepositoryMembership,
  type RepositorySubject,
  reviewerReadRepositoryIds,
  visibilityScope,
} from './policy.ts';
import type { RepositoryRole } from './rules.ts';

/**
 * The queries of the access policy, and its rules as SQL predicates for lists, filters, orders and
 * totals. Each predicate is built from the sets that `policy.ts` derives, so that the rule itself
 * is written there only; these functions decide nothing of their own.
 */

/** Loads what the policy needs from the database. */
export function accessRepo(db: Db) {
  return {
    /** The user's active repository memberships (removed members have none). */
    async findMemberships(userId: string): Promise<[string, RepositoryMembership][]> {
      const rows = await db
        .select({
          repositoryId: repositoryMembers.repositoryId,
          role: repositoryMembers.role,
          showAllFindings: repositories.showAllFindings,
        })
        .from(repositoryMembers)
        .innerJoin(repositories, eq(repositories.id, repositoryMembers.repositoryId))
        .where(and(eq(repositoryMembers.userId, userId), isNull(repositoryMembers.deletedAt)));
      return rows.map((r) => [r.repositoryId, { role: r.role, showAllFindings: r.showAllFindings }]);
    },

    async findCompany(companyId: string) {
      const [row] = await db.select().from(companies).where(eq(companies.id, companyId));
      return row ?? null;
    },

    async findRepository(repositoryId: string) {
      const [row] = await db.select().from(repositories).where(eq(repositories.id, repositoryId));
      return row ?? null;
    },
  };
}

/** The columns of a finding row (the `findings` table or an alias of it) that access rules read. */
export interface FindingColumns {
  published: Column;
  repositoryId: Column;
  companyId: Column;
  createdBy: Column;
}

const inIds = (column: Column, ids: string[]): SQL => (ids.length > 0 ? inArray(column, ids) : sql`false`);

/**
 * `finding.read` as one SQL condition on `findings`: published findings filed on a repository
 * where the user is a company user of its company, holds a repository role that sees everything
 * (client, judge, triager, admin, or reviewer with `showAllFindings`), or is a reviewer who filed
 * the finding. Cross-company readers see all.
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

const publicReport = () => sql`(${reports.publishedAt} is not null and not ${reports.isPrivate})`;

/** `report.read` as SQL over `reports` (undefined: every report). */
export function readableReportsCondition(scope: ReportReadScope): SQL | undefined {
  if (scope.kind === 'all') return undefined;
  if (scope.companyIds.length === 0) return publicReport();
  return sql`(${publicReport()} or ${inArray(reports.companyId, scope.companyIds)})`;
}

/** The SQL shapes `report.read` takes over `reports`, whatever the ids in them. */
export type ReadableReportsShape = 'all' | 'public' | 'public-and-companies';

/**
 * `report.read` for a statement built once per shape and run many times: the shape of the
 * caller's condition (part of the built statement's key) and the value of its placeholder
 * `readableCompanyIds` (see {@link readableReportsConditionOfShape}).
 */
export function readableReportsShape(scope: ReportReadScope): {
  shape: ReadableReportsShape;
  values: { readableCompanyIds: string[] };
} {
  if (scope.kind === 'all') return { shape: 'all', values: { readableCompanyIds: [] } };
  return {
    shape: scope.companyIds.length === 0 ? 'public' : 'public-and-companies',
    values: { readableCompanyIds: scope.companyIds },
  };
}

/**
 * {@link readableReportsCondition} of a shape, the company ids as the placeholder
 * `readableCompanyIds`: one uuid array parameter, so that the text is the same whatever their
 * number (undefined: every report).
 */
export function readableReportsConditionOfShape(shape: ReadableReportsShape): SQL | undefined {
  if (shape === 'all') return undefined;
  if (shape === 'public') return publicReport();
  return sql`(${publicReport()} or ${reports.companyId} = any(${sql.placeholder('readableCompanyIds')}::uuid[]))`;
}

/** `repository.read` as SQL over `repositories`: those whose findings the user sees, and public ones. */
export function readableRepositoriesCondition(access: FindingAccess): SQL {
  if (access.readAll) return sql`true`;
  return sql`(${repositories.isPublic} or ${inIds(repositories.companyId, access.companyIds)} or ${inIds(repositories.id, [...access.memberships.keys()])})`;
}

/**
 * `label.read` as SQL over `labels` joined to a finding row (`findings` by default): the label is
 * reviewer-readable, or the finding is in a repository where the user does not read as a reviewer.
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
 * True when {@link readableLabelCondition} holds for every label (the user reads no repository as
 * a reviewer): a label filter then needs only `finding_labels`, not the `labels` rows.
 */
export function readsEveryLabel(access: FindingAccess): boolean {
  return reviewerReadRepositoryIds(access).length === 0;
}

/** `label.read` on one repository, as a condition on `labels` (the repository assistant, label lists). */
export function readableLabelsCondition(access: FindingAccess, repository: RepositorySubject): SQL {
  return can(access, 'label.read', { repository, label: { reviewerRead: false } })
    ? sql`true`
    : sql`${labels.reviewerRead}`;
}

/**
 * The effective role as SQL over a finding's (or a finding count's) repository and company
 * columns: the rows of repositories where the user's effective role is `role`.
 */
export function effectiveRoleCondition(
  access: FindingAccess,
  role: RepositoryRole,
  columns: { repositoryId: Column; companyId: Column },
): SQL {
  const sets = effectiveRoleSets(access, role);
  if (sets.all) return sql`true`;
  const byRepository =
    sets.exceptCompanyIds.length > 0
      ? (and(
          inIds(columns.repositoryId, sets.repositoryIds),
          notInArray(columns.companyId, sets.exceptCompanyIds),
        ) as SQL)
      : inIds(columns.repositoryId, sets.repositoryIds);
  const inCompanies = inIds(columns.companyId, sets.companyIds);
  const byCompany =
    sets.exceptRepositoryIds.length > 0
      ? (and(inCompanies, notInArray(columns.repositoryId, sets.exceptRepositoryIds)) as SQL)
      : inCompanies;
  return sql`(${byRepository} or ${byCompany})`;
}

/**
 * For each restricted visibility, the condition on the `findings` row under which the user reads
 * comments of it (`comment.read` as SQL). Repository sets are inlined as arrays like
 * {@link visibleFindingsCondition} so that no correlated membership subquery runs per row.
 */
function readableConditions(access: FindingAccess): { private: SQL; internal: SQL; hidden: SQL } {
  const scope = commentReadScope(access);
  if (scope.all) return { private: sql`true`, internal: sql`true`, hidden: sql`true` };
  const hidden = inIds(findings.repositoryId, scope.hiddenRepositoryIds);
  const internal = scope.internalAll
    ? sql`true`
    : sql`(${inIds(findings.companyId, scope.internalCompanyIds)} or ${inIds(findings.repositoryId, scope.internalRepositoryIds)})`;
  const priv = sql`(${internal} or ${findings.createdBy} = ${access.userId} or ${inIds(findings.repositoryId, scope.privateRepositoryIds)})`;
  return { private: priv, internal, hidden };
}

/**
 * Which comments the user may read, as a condition on `comments` joined to (or correlated with)
 * `findings`. The findings themselves must already be limited to those the user sees.
 */
export function visibleCommentsCondition(access: FindingAccess): SQL {
  if (commentReadScope(access).all) return sql`true`;
  const can = readableConditions(access);
  return sql`(${comments.visibility} = 'public'
    or (${comments.visibility} = 'private' and ${can.private})
    or (${comments.visibility} = 'internal' and ${can.internal})
    or (${comments.visibility} = 'hidden' and ${can.hidden}))`;
}

/**
 * The user's `lastCommentAt` of the outer `findings` row: the latest of the per-visibility
 * columns the user may read (`greatest` skips nulls). Used for the field and the
 * `last_comment_*` orders, so neither reveals comments the user may not read.
 */
export function visibleLastCommentAt(access: FindingAccess): SQL<Date | null> {
  const can = readableConditions(access);
  return sql<Date | null>`greatest(${findings.lastCommentAt},
    case when ${can.private} then ${findings.lastPrivateCommentAt} end,
    case when ${can.internal} then ${findings.lastInternalCommentAt} end,
    case when ${can.hidden} then ${findings.lastHiddenCommentAt} end)`;
}

/**
 * The outer `findings` row has at least one comment (of any visibility, not deleted): the predicate
 * of the partial indexes `findings_commented_*`. Implied by a non-null {@link visibleLastCommentAt}
 * and by {@link latestReadableByOthersAt}; stated next to them so that the planner uses those indexes.
 */
export const FINDING_HAS_COMMENTS: SQL = sql`(${findings.lastCommentAt} is not null or ${findings.lastPrivateCommentAt} is not null or ${findings.lastInternalCommentAt} is not null or ${findings.lastHiddenCommentAt} is not null)`;

/**
 * The time of the latest comment of the outer `findings` row that the user may read and did not
 * write (null: none). Per visibility, the finding keeps its last comment's time and author and
 * the time of the last one by anyone else; for a readable visibility the latest not by the user
 * is the last one when someone else wrote it, else that other one. Comments are unread when this
 * is later than the user's read marker. Computed from the user's current roles at query time, so
 * nothing per user is cached that a role change could leave stale.
 */
export function latestReadableByOthersAt(access: FindingAccess): SQL<Date | null> {
  const can = readableConditions(access);
  const notMine = (author: SQL, last: SQL, other: SQL) =>
    sql`case when ${author} is distinct from ${access.userId}::uuid then ${last} else ${other} end`;
  return sql<Date | null>`greatest(${notMine(sql`${findings.lastCommentAuthorId}`, sql`${findings.lastCommentAt}`, sql`${findings.lastCommentOtherAt}`)},
    case when ${can.private} then ${notMine(sql`${findings.lastPrivateCommentAuthorId}`, sql`${findings.lastPrivateCommentAt}`, sql`${findings.lastPrivateCommentOtherAt}`)} end,
    case when ${can.internal} then ${notMine(sql`${findings.lastInternalCommentAuthorId}`, sql`${findings.lastInternalCommentAt}`, sql`${findings.lastInternalCommentOtherAt}`)} end,
    case when ${can.hidden} then ${notMine(sql`${findings.lastHiddenCommentAuthorId}`, sql`${findings.lastHiddenCommentAt}`, sql`${findings.lastHiddenCommentOtherAt}`)} end)`;
}
