import { and, type Column, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
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
import { type Binder, INLINE_VALUES, keptStatements, oneOf, plainRows } from '../db/sql.ts';
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

const MEMBERSHIP_COLUMNS = {
  repositoryId: repositoryMembers.repositoryId,
  role: repositoryMembers.role,
  showAllFindings: repositories.showAllFindings,
  companyId: repositories.companyId,
};
/** The memberships read of every request that loads a user's access, built once per database handle. */
function prepareMembershipRead(db: Db) {
  return db
    .select(MEMBERSHIP_COLUMNS)
    .from(repositoryMembers)
    .innerJoin(repositories, eq(repositories.id, repositoryMembers.repositoryId))
    .where(and(eq(repositoryMembers.userId, sql.placeholder('userId')), isNull(repositoryMembers.deletedAt)));
}
const membershipReads = keptStatements<ReturnType<typeof prepareMembershipRead>>();

/** Loads what the policy needs from the database. */
export function accessRepo(db: Db) {
  return {
    /** The user's active repository memberships (removed members have none). */
    async findMemberships(userId: string): Promise<[string, RepositoryMembership][]> {
      const query = membershipReads(db, '', () => prepareMembershipRead(db));
      const rows = await plainRows(db, MEMBERSHIP_COLUMNS, query, { userId });
      return rows.map((r) => [
        r.repositoryId,
        { role: r.role, showAllFindings: r.showAllFindings, companyId: r.companyId },
      ]);
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

/** `column` is one of `ids` (uuids), as values of `b` (see {@link oneOf}). */
function inIdSet(column: Column, ids: string[], b: Binder): SQL {
  return oneOf(column, ids, 'uuid', b);
}

/** `column` is none of `ids` (see {@link inIdSet}); `ids` is not empty. */
function notInIdSet(column: Column, ids: string[], b: Binder): SQL {
  return sql`not (${inIdSet(column, ids, b)})`;
}

/**
 * `finding.read` as one SQL condition on `findings`: published findings filed on a repository
 * where the user is a company user of its company, holds a repository role that sees everything
 * (client, judge, triager, admin, or reviewer with `showAllFindings`), or is a reviewer who filed
 * the finding. Cross-company readers see all.
 *
 * The repository sets are inlined as arrays so that the planner can use the repository, company
 * and author indexes (a correlated membership subquery per row cannot be).
 */
export function visibleFindingsCondition(
  access: FindingAccess,
  table: FindingColumns = findings,
  b: Binder = INLINE_VALUES,
): SQL {
  // Written as the predicate of the partial indexes (not `published = $1`) so that the planner can use them.
  const base = sql`(${table.published} and ${table.repositoryId} is not null)`;
  const scope = visibilityScope(access);
  if (b.choose(scope.readAll)) return base;
  const any: SQL[] = [];
  if (b.choose(scope.companyIds.length > 0)) any.push(inIdSet(table.companyId, scope.companyIds, b));
  if (b.choose(scope.fullRepositoryIds.length > 0))
    any.push(inIdSet(table.repositoryId, scope.fullRepositoryIds, b));
  if (b.choose(scope.ownRepositoryIds.length > 0)) {
    any.push(
      sql`(${table.createdBy} = ${b.bind(access.userId, 'uuid')} and ${inIdSet(table.repositoryId, scope.ownRepositoryIds, b)})`,
    );
  }
  if (any.length === 0) return sql`false`;
  return and(base, any.length === 1 ? any[0] : sql`(${sql.join(any, sql` or `)})`) as SQL;
}

const publicReport = () => sql`(${reports.publishedAt} is not null and not ${reports.isPrivate})`;

/**
 * `report.read` as SQL over `reports` (undefined: every report). The caller's company ids and
 * repository ids are one uuid array parameter each of `b`, so that a statement built once per
 * shape (`StatementValues`) has the same text whatever their number.
 */
export function readableReportsCondition(scope: ReportReadScope, b: Binder = INLINE_VALUES): SQL | undefined {
  b.choose(scope.kind);
  if (scope.kind === 'all') return undefined;
  const any: SQL[] = [publicReport()];
  if (b.choose(scope.companyIds.length > 0))
    any.push(sql`${reports.companyId} = any(${b.bind(scope.companyIds, 'uuid[]')})`);
  if (b.choose(scope.repositoryIds.length > 0))
    any.push(sql`${reports.repositoryId} = any(${b.bind(scope.repositoryIds, 'uuid[]')})`);
  return any.length === 1 ? any[0] : sql`(${sql.join(any, sql` or `)})`;
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
export function readableLabelCondition(
  access: FindingAccess,
  finding: FindingColumns = findings,
  b: Binder = INLINE_VALUES,
): SQL {
  const reviewerIds = reviewerReadRepositoryIds(access);
  if (!b.choose(reviewerIds.length > 0)) return sql`true`;
  const asReviewer = b.choose(access.companyIds.length > 0)
    ? sql`(${inIdSet(finding.repositoryId, reviewerIds, b)} and ${notInIdSet(finding.companyId, access.companyIds, b)})`
    : inIdSet(finding.repositoryId, reviewerIds, b);
  return sql`(${labels.reviewerRead} or not (${asReviewer}))`;
}

/**
 * Whether the user reads the finding row as a reviewer ({@link readableLabelCondition}'s rule over
 * {@link AccessValues}): a reviewer membership of its repository, outside the user's companies.
 * Such a user reads only the finding's labels that reviewers may read (`labels.reviewer_read`),
 * any other user all of them ({@link readableLabelConditionOf}).
 */
export function readsAsReviewerOf(v: AccessValues, finding: FindingColumns = findings): SQL<boolean> {
  return sql<boolean>`(${finding.repositoryId} = any(${v.reviewerReadRepositoryIds}) and not (${finding.companyId} = any(${v.companyIds})))`;
}

/** `label.read` over {@link AccessValues}, on `labels` joined to a finding row. */
export function readableLabelConditionOf(v: AccessValues, finding: FindingColumns = findings): SQL<boolean> {
  return sql<boolean>`(${labels.reviewerRead} or not ${readsAsReviewerOf(v, finding)})`;
}

/** `finding.read_note` over {@link AccessValues}, on a finding row. */
export function readableNoteConditionOf(v: AccessValues, finding: FindingColumns = findings): SQL<boolean> {
  return sql<boolean>`(not ${readsAsReviewerOf(v, finding)})`;
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
  b: Binder = INLINE_VALUES,
): SQL {
  const sets = effectiveRoleSets(access, role);
  if (b.choose(sets.all)) return sql`true`;
  const byRepository = b.choose(sets.exceptCompanyIds.length > 0)
    ? sql`(${inIdSet(columns.repositoryId, sets.repositoryIds, b)} and ${notInIdSet(columns.companyId, sets.exceptCompanyIds, b)})`
    : inIdSet(columns.repositoryId, sets.repositoryIds, b);
  const inCompanies = inIdSet(columns.companyId, sets.companyIds, b);
  const byCompany = b.choose(sets.exceptRepositoryIds.length > 0)
    ? sql`(${inCompanies} and ${notInIdSet(columns.repositoryId, sets.exceptRepositoryIds, b)})`
    : inCompanies;
  return sql`(${byRepository} or ${byCompany})`;
}

/**
 * The sets of the access predicates that are written with parameters: a user's values change
 * only the parameters, never the statement text, so one statement serves every user (built once,
 * prepared on each connection, its generic plan reused). Used where the predicates filter rows
 * one by one (comments, a finding's duplicate group, per-row comment times); where a predicate
 * chooses the index of a list ({@link visibleFindingsCondition}), its sets stay in the text.
 */
export interface AccessValues<T = SQL> {
  userId: T;
  readAll: T;
  companyIds: T;
  fullRepositoryIds: T;
  ownRepositoryIds: T;
  commentsAll: T;
  internalAll: T;
  internalCompanyIds: T;
  internalRepositoryIds: T;
  privateRepositoryIds: T;
  hiddenRepositoryIds: T;
  reviewerReadRepositoryIds: T;
}

const ACCESS_VALUE_TYPES: AccessValues<string> = {
  userId: 'uuid',
  readAll: 'boolean',
  companyIds: 'uuid[]',
  fullRepositoryIds: 'uuid[]',
  ownRepositoryIds: 'uuid[]',
  commentsAll: 'boolean',
  internalAll: 'boolean',
  internalCompanyIds: 'uuid[]',
  internalRepositoryIds: 'uuid[]',
  privateRepositoryIds: 'uuid[]',
  hiddenRepositoryIds: 'uuid[]',
  reviewerReadRepositoryIds: 'uuid[]',
};
const ACCESS_VALUE_KEYS = Object.keys(ACCESS_VALUE_TYPES) as Array<keyof AccessValues>;

/** The values of {@link AccessValues} for one user, from the sets of the policy. */
export function accessParameters(access: FindingAccess): AccessValues<unknown> {
  const scope = visibilityScope(access);
  const comments = commentReadScope(access);
  return {
    userId: access.userId,
    readAll: scope.readAll,
    companyIds: scope.companyIds,
    fullRepositoryIds: scope.fullRepositoryIds,
    ownRepositoryIds: scope.ownRepositoryIds,
    commentsAll: comments.all,
    internalAll: comments.internalAll,
    internalCompanyIds: comments.internalCompanyIds,
    internalRepositoryIds: comments.internalRepositoryIds,
    privateRepositoryIds: comments.privateRepositoryIds,
    hiddenRepositoryIds: comments.hiddenRepositoryIds,
    reviewerReadRepositoryIds: reviewerReadRepositoryIds(access),
  };
}

/**
 * Placeholders of {@link AccessValues} for a statement built once: fill them with
 * {@link accessParameters} under the same names (prefixed by `prefix`).
 */
export function accessPlaceholders(prefix = 'access_'): AccessValues {
  const out = {} as AccessValues;
  for (const key of ACCESS_VALUE_KEYS)
    out[key] = sql`${sql.placeholder(`${prefix}${key}`)}::${sql.raw(ACCESS_VALUE_TYPES[key])}`;
  return out;
}

/** {@link accessParameters} named for {@link accessPlaceholders} of the same prefix. */
export function accessPlaceholderValues(access: FindingAccess, prefix = 'access_'): Record<string, unknown> {
  const values = accessParameters(access);
  const out: Record<string, unknown> = {};
  for (const key of ACCESS_VALUE_KEYS) out[`${prefix}${key}`] = values[key];
  return out;
}

/** {@link AccessValues} of one user as values of `b` (by default parameters bound for one request). */
export function boundAccessValues(access: FindingAccess, b: Binder = INLINE_VALUES): AccessValues {
  const values = accessParameters(access);
  const out = {} as AccessValues;
  for (const key of ACCESS_VALUE_KEYS) out[key] = b.bind(values[key], ACCESS_VALUE_TYPES[key]);
  return out;
}

/**
 * `finding.read` over a finding row with the user's sets as parameters (see
 * {@link visibleFindingsCondition}, the same rule with the sets in the statement text, which
 * the lists use to choose their index).
 */
export function visibleFindingsConditionOf(v: AccessValues, table: FindingColumns = findings): SQL {
  return sql`(${table.published} and ${table.repositoryId} is not null and (${v.readAll}
    or ${table.companyId} = any(${v.companyIds}) or ${table.repositoryId} = any(${v.fullRepositoryIds})
    or (${table.createdBy} = ${v.userId} and ${table.repositoryId} = any(${v.ownRepositoryIds}))))`;
}

/**
 * For each restricted visibility, the condition on the `findings` row under which the user reads
 * comments of it (`comment.read` as SQL, from {@link commentReadScope}). The repository sets are
 * arrays compared per row, so that no correlated membership subquery runs per row.
 */
function readableConditions(v: AccessValues): { private: SQL; internal: SQL; hidden: SQL } {
  const hidden = sql`(${v.commentsAll} or ${findings.repositoryId} = any(${v.hiddenRepositoryIds}))`;
  const internal = sql`(${v.commentsAll} or ${v.internalAll} or ${findings.companyId} = any(${v.internalCompanyIds})
    or ${findings.repositoryId} = any(${v.internalRepositoryIds}))`;
  const priv = sql`(${internal} or ${findings.createdBy} = ${v.userId} or ${findings.repositoryId} = any(${v.privateRepositoryIds}))`;
  return { private: priv, internal, hidden };
}

/**
 * Which comments the user may read, as a condition on `comments` joined to (or correlated with)
 * `findings`. The findings themselves must already be limited to those the user sees.
 */
export function visibleCommentsCondition(access: FindingAccess): SQL {
  if (commentReadScope(access).all) return sql`true`;
  return visibleCommentsConditionOf(boundAccessValues(access));
}

/** {@link visibleCommentsCondition} over {@link AccessValues}. */
export function visibleCommentsConditionOf(v: AccessValues): SQL {
  const can = readableConditions(v);
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
export function visibleLastCommentAt(access: FindingAccess, b: Binder = INLINE_VALUES): SQL<Date | null> {
  return visibleLastCommentAtOf(boundAccessValues(access, b));
}

/** {@link visibleLastCommentAt} over {@link AccessValues}. */
export function visibleLastCommentAtOf(v: AccessValues): SQL<Date | null> {
  const can = readableConditions(v);
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
  return latestReadableByOthersAtOf(boundAccessValues(access));
}

/** {@link latestReadableByOthersAt} over {@link AccessValues}. */
export function latestReadableByOthersAtOf(v: AccessValues): SQL<Date | null> {
  const can = readableConditions(v);
  const notMine = (author: SQL, last: SQL, other: SQL) =>
    sql`case when ${author} is distinct from ${v.userId} then ${last} else ${other} end`;
  return sql<Date | null>`greatest(${notMine(sql`${findings.lastCommentAuthorId}`, sql`${findings.lastCommentAt}`, sql`${findings.lastCommentOtherAt}`)},
    case when ${can.private} then ${notMine(sql`${findings.lastPrivateCommentAuthorId}`, sql`${findings.lastPrivateCommentAt}`, sql`${findings.lastPrivateCommentOtherAt}`)} end,
    case when ${can.internal} then ${notMine(sql`${findings.lastInternalCommentAuthorId}`, sql`${findings.lastInternalCommentAt}`, sql`${findings.lastInternalCommentOtherAt}`)} end,
    case when ${can.hidden} then ${notMine(sql`${findings.lastHiddenCommentAuthorId}`, sql`${findings.lastHiddenCommentAt}`, sql`${findings.lastHiddenCommentOtherAt}`)} end)`;
}
