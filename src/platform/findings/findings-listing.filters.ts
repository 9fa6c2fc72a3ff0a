import { and, type Column, inArray, isNotNull, isNull, not, or, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  effectiveRoleCondition,
  readableLabelCondition,
  readsEveryLabel,
  visibleFindingsCondition,
} from '../../access/access.repo.ts';
import { type FindingAccess, type VisibilityScope, visibilityScope } from '../../access/policy.ts';
import type { FindingStatus, RepositoryRole } from '../../access/rules.ts';
import type { Db } from '../../db/client.ts';
import {
  findingCounts,
  findingLabels,
  findingRelatedFiles,
  findingStatuses,
  findings,
  labels,
  repositories,
  repositoryRoles,
  severities,
  users,
} from '../../db/schema/index.ts';
import { type Binder, inList, oneOf } from '../../db/sql.ts';
import { AppError } from '../../errors.ts';
import { escapeLike, isUuid } from '../../strings.ts';
import { hashFilters } from '../pagination/cursor.ts';
import { splitListParam } from '../pagination/list-params.ts';
import { hasUnreadComments } from './finding-payloads.repo.ts';
import { FILTER_FOR_VALUES, FINDING_ORDERS, type FilterFor, type FindingOrder } from './findings.schemas.ts';

import { parseSearch, requireValues } from './search-syntax.ts';

/**
 * The filters of the all-findings listing: the parameters validated and turned into conditions,
 * the filter hash a cursor carries, and the count from `finding_counts` where the filters allow it.
 */

/** Query parameters of GET /api/v0/repositories/all-findings, as the HTTP schema parsed them. */
export interface AllFindingsQuery {
  limit?: number | null;
  order_by?: FindingOrder;
  next?: string | null;
  with_unread_comments?: boolean;
  repositories?: string[];
  role?: RepositoryRole;
  path?: string;
  status?: string;
  duplicates?: boolean;
  severity?: string;
  label?: string;
  unlabeled?: boolean;
  filter_for?: FilterFor;
  created_by?: string;
  assigned_to?: string;
  q?: string;
  s?: string;
}

export const DEFAULT_FINDINGS_LIMIT = 20;
export const MAX_FINDINGS_LIMIT = 100;
/** "Default order by number" (v0 §4.4): ascending, as SQL orders by a column by default. */
export const DEFAULT_FINDINGS_ORDER: FindingOrder = 'number_asc';

/** A second finding row: the duplicates of a root in `filter_for=with_duplicates`. */
const duplicate = alias(findings, 'dup');

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid query parameter '${field}': ${message}`,
    details: { field },
  });
}

/** A free-text term matches the finding number exactly, or the title or description (case-insensitive). */
function textMatch(term: string, b: Binder): SQL {
  const pattern = b.bind(`%${escapeLike(term)}%`, 'text');
  const parts = [sql`${findings.title} ilike ${pattern}`, sql`${findings.description} ilike ${pattern}`];
  const digits = term.replace(/^#/, '');
  if (b.choose(/^[0-9]{1,9}$/.test(digits)))
    parts.unshift(sql`${findings.number} = ${b.bind(Number(digits), 'int')}`);
  return sql`(${sql.join(parts, sql` or `)})`;
}

const lowered = (values: string[]) => [...new Set(values.map((v) => v.toLowerCase()))].sort();

function byUsernames(
  column: typeof findings.createdBy | typeof findings.assignedTo,
  names: string[],
  b: Binder,
): SQL {
  return sql`${column} in (select ${users.id} from ${users} where ${oneOf(sql`lower(${users.username})`, lowered(names), 'text', b)})`;
}

/**
 * The labels a visible finding can carry: a finding's labels are those of its repository or the
 * company-wide labels of its company (labels are attached only after that check), so labels
 * outside the user's repositories and companies never match a visible finding.
 */
function labelScope(scope: VisibilityScope, b: Binder): SQL {
  if (b.choose(scope.readAll)) return sql`true`;
  const repositoryIds = [...scope.fullRepositoryIds, ...scope.ownRepositoryIds];
  const parts: SQL[] = [];
  if (b.choose(scope.companyIds.length > 0)) parts.push(oneOf(labels.companyId, scope.companyIds, 'uuid', b));
  if (b.choose(repositoryIds.length > 0)) {
    parts.push(oneOf(labels.repositoryId, repositoryIds, 'uuid', b));
    parts.push(sql`(${labels.repositoryId} is null and ${labels.companyId} in (select ${repositories.companyId}
      from ${repositories} where ${oneOf(repositories.id, repositoryIds, 'uuid', b)}))`);
  }
  return parts.length > 0 ? (or(...parts) as SQL) : sql`false`;
}

function byLabelNames(names: string[], scope: VisibilityScope, access: FindingAccess, b: Binder): SQL {
  // The label ids are computed once (an init plan) and limited to the user's scope, so that the
  // planner hashes only the findings of those few labels instead of every finding with that name.
  // A label the user may not read on the finding (reviewers, `reviewerRead` off) never matches.
  // When the user reads every label, `labels` is not joined: the planner would otherwise hash the
  // whole table for a condition that is always true.
  const labelIds = sql`array(select ${labels.id} from ${labels} where ${oneOf(sql`lower(${labels.name})`, lowered(names), 'text', b)}
    and ${labelScope(scope, b)})`;
  if (b.choose(readsEveryLabel(access))) {
    return sql`exists (select 1 from ${findingLabels} where ${findingLabels.findingId} = ${findings.id}
      and ${findingLabels.labelId} = any(${labelIds}))`;
  }
  return sql`exists (select 1 from ${findingLabels} inner join ${labels} on ${labels.id} = ${findingLabels.labelId}
    where ${findingLabels.findingId} = ${findings.id}
    and ${findingLabels.labelId} = any(${labelIds})
    and ${readableLabelCondition(access, findings, b)})`;
}

/**
 * Findings that carry no label the user may read (what their payload shows as `labels: []`). A
 * scalar subquery (`limit 1`) rather than `not exists`:
 * PostgreSQL cannot turn it into an anti-join, so each finding of the scope probes the
 * `finding_labels` key, and a page stops at its `limit`; as an anti-join it hashed every label
 * assignment of the database for each page and count (400,000 over 1,000,000 findings).
 */
function unlabeled(access: FindingAccess, b: Binder): SQL {
  if (b.choose(readsEveryLabel(access))) {
    return sql`(select 1 from ${findingLabels} where ${findingLabels.findingId} = ${findings.id} limit 1) is null`;
  }
  return sql`(select 1 from ${findingLabels} inner join ${labels} on ${labels.id} = ${findingLabels.labelId}
    where ${findingLabels.findingId} = ${findings.id} and ${readableLabelCondition(access, findings, b)} limit 1) is null`;
}

function byPaths(paths: string[], b: Binder): SQL {
  return sql`exists (select 1 from ${findingRelatedFiles} where ${findingRelatedFiles.findingId} = ${findings.id}
    and ${oneOf(findingRelatedFiles.path, [...new Set(paths)], 'text', b)})`;
}

function byRepositoryRefs(refs: string[], b: Binder): SQL {
  const ids = refs.filter(isUuid).map((r) => r.toLowerCase());
  const names = lowered(refs);
  const nameMatch = sql`${findings.repositoryId} in (select ${repositories.id} from ${repositories} where ${oneOf(sql`lower(${repositories.name})`, names, 'text', b)})`;
  return b.choose(ids.length > 0)
    ? sql`(${oneOf(findings.repositoryId, ids, 'uuid', b)} or ${nameMatch})`
    : nameMatch;
}

const REQUIRE_REVIEW: FindingStatus[] = ['new', 'in_review', 'disputed'];

/**
 * The predefined `filter_for` filters but `require_review` (findings still waiting for a judgement:
 * new, in_review, disputed), which is a status filter (`prepare`):
 * - `client_recommended`: what the triage team recommends to the client — valid findings
 *   (confirmed, acknowledged, fixed) that are not duplicates of another finding;
 * - `with_duplicates`: root findings that at least one other finding duplicates.
 */
function filterFor(value: Exclude<FilterFor, 'require_review'>, access: FindingAccess, b: Binder): SQL {
  if (b.choose(value) === 'client_recommended')
    return and(
      inArray(findings.status, ['confirmed', 'acknowledged', 'fixed']),
      isNull(findings.duplicateOf),
    ) as SQL;
  // Only duplicates the user may see make a root: a hidden one must not reveal itself.
  return sql`exists (select 1 from ${findings} as "dup" where ${duplicate.duplicateOf} = ${findings.id} and ${visibleFindingsCondition(access, duplicate, b)})`;
}

/** The columns a filter on repository, status and severity reads: of `findings` or `finding_counts`. */
interface BucketColumns {
  repositoryId: Column;
  companyId: Column;
  status: Column;
  severity: Column;
}
export type BucketFilter = (columns: BucketColumns) => SQL;

const FINDING_BUCKET: BucketColumns = {
  repositoryId: findings.repositoryId,
  companyId: findings.companyId,
  status: findings.status,
  severity: findings.severity,
};
const COUNT_BUCKET: BucketColumns = {
  repositoryId: findingCounts.repositoryId,
  companyId: findingCounts.companyId,
  status: findingCounts.status,
  severity: findingCounts.severity,
};

export interface Prepared {
  conditions: SQL[];
  /** The same filters on `finding_counts`, when every filter reads only repository, status and severity. */
  bucketFilters: BucketFilter[] | null;
  scope: VisibilityScope;
  order: FindingOrder;
  filterHash: string;
  limit: number;
  /** Only findings with an unread comment (which all have a comment the user reads). */
  unreadOnly: boolean;
}

/** The listing's parameters, validated and normalised. */
interface ListingParams {
  limit: number;
  order: FindingOrder;
  /** Lower-cased, distinct, sorted. */
  repositoryIds: string[];
  role: RepositoryRole | undefined;
  statuses: string[] | undefined;
  severities: string[] | undefined;
  labelNames: string[] | undefined;
  createdBy: string[] | undefined;
  assignedTo: string | undefined;
  path: string | undefined;
  /** Free text (`q`), trimmed. */
  q: string | undefined;
  /** The search expression (`s`), trimmed, and parsed. */
  s: string | undefined;
  search: ReturnType<typeof parseSearch> | undefined;
}

/** Validates and normalises the parameters, builds the filter conditions and the filter hash. */
export function prepare(access: FindingAccess, query: AllFindingsQuery, b: Binder): Prepared {
  const params = listingParams(query);
  const scope = visibilityScope(access);
  const { conditions, bucketFilters } = filterConditions(access, query, params, scope, b);
  return {
    conditions,
    bucketFilters,
    scope,
    order: params.order,
    filterHash: filterHashOf(query, params),
    limit: params.limit,
    unreadOnly: query.with_unread_comments === true || params.search?.unread === true,
  };
}

/** The query's parameters checked one by one (the first mistake is the 400) and normalised. */
function listingParams(query: AllFindingsQuery): ListingParams {
  const limit = query.limit ?? DEFAULT_FINDINGS_LIMIT;
  if (!Number.isInteger(limit) || limit < 0 || limit > MAX_FINDINGS_LIMIT) {
    throw invalid('limit', `must be an integer from 0 to ${MAX_FINDINGS_LIMIT}.`);
  }
  const order = query.order_by ?? DEFAULT_FINDINGS_ORDER;
  if (!FINDING_ORDERS.includes(order)) throw invalid('order_by', `unknown ordering '${order}'.`);

  const repositoryIds = [
    ...new Set((splitListParam('repositories', query.repositories) ?? []).map((r) => r.toLowerCase())),
  ].sort();
  for (const id of repositoryIds) if (!isUuid(id)) throw invalid('repositories', `'${id}' is not a uuid.`);
  if (query.role !== undefined) requireValues('role', [query.role], repositoryRoles);
  const statuses =
    query.status !== undefined
      ? requireValues('status', splitListParam('status', query.status) ?? [], findingStatuses)
      : undefined;
  if (statuses?.length === 0) throw invalid('status', 'give at least one status.');
  const sevs =
    query.severity !== undefined
      ? requireValues('severity', splitListParam('severity', query.severity) ?? [], severities)
      : undefined;
  if (sevs?.length === 0) throw invalid('severity', 'give at least one severity.');
  const labelNames = splitListParam('label', query.label);
  if (labelNames?.length === 0) throw invalid('label', 'give at least one label name.');
  if (labelNames && query.unlabeled === true) {
    throw invalid('unlabeled', "'label' and 'unlabeled' are mutually exclusive.");
  }
  if (query.filter_for !== undefined) requireValues('filter_for', [query.filter_for], FILTER_FOR_VALUES);
  const createdBy = splitListParam('created_by', query.created_by);
  if (createdBy?.length === 0) throw invalid('created_by', 'give at least one username.');
  const assignedTo = query.assigned_to?.trim();
  if (assignedTo === '') throw invalid('assigned_to', 'give a username.');
  const path = query.path;
  if (path === '') throw invalid('path', 'give a file path.');
  const s = query.s?.trim() || undefined;
  return {
    limit,
    order,
    repositoryIds,
    role: query.role as RepositoryRole | undefined,
    statuses,
    severities: sevs,
    labelNames,
    createdBy,
    assignedTo,
    path,
    q: query.q?.trim() || undefined,
    s,
    search: s ? parseSearch(s) : undefined,
  };
}

/**
 * The conditions of the listing, and the same filters on `finding_counts` when every one reads
 * only repository, status and severity (`null` otherwise). Every value goes into the statement
 * through `b`, and every test that adds a condition is a choice of `b`: equal choices give equal
 * statement texts (see StatementValues).
 */
function filterConditions(
  access: FindingAccess,
  query: AllFindingsQuery,
  p: ListingParams,
  scope: VisibilityScope,
  b: Binder,
): { conditions: SQL[]; bucketFilters: BucketFilter[] | null } {
  const conditions: SQL[] = [visibleFindingsCondition(access, findings, b)];
  let bucketFilters: BucketFilter[] | null = [];
  /** A filter that finding_counts can answer as well. */
  const bucketed = (filter: BucketFilter) => {
    conditions.push(filter(FINDING_BUCKET));
    bucketFilters?.push(filter);
  };
  /** A filter on other columns: the total needs the findings themselves. */
  const unbucketed = (condition: SQL) => {
    conditions.push(condition);
    bucketFilters = null;
  };
  const uuids = (values: string[]) => (c: BucketColumns) => oneOf(c.repositoryId, values, 'uuid', b);
  const statusIn = (values: string[]) => (c: BucketColumns) => inList(c.status, values, 'text', b);
  const severityIn = (values: string[]) => (c: BucketColumns) => inList(c.severity, values, 'text', b);
  if (b.choose(p.repositoryIds.length > 0)) bucketed(uuids(p.repositoryIds));
  if (b.choose(p.role !== undefined)) {
    const role = p.role as RepositoryRole;
    bucketed((c) => effectiveRoleCondition(access, role, c, b));
  }
  if (b.choose(p.path !== undefined)) unbucketed(byPaths([p.path as string], b));
  // `filter_for=require_review` filters by status too: with `status`, the statuses in both (none
  // in common: no finding, which the condition says without reading any).
  const requireReview = query.filter_for === 'require_review';
  const wantedStatuses =
    p.statuses && requireReview
      ? p.statuses.filter((status) => REQUIRE_REVIEW.some((r) => r === status))
      : (p.statuses ?? (requireReview ? REQUIRE_REVIEW : undefined));
  if (wantedStatuses && b.choose(true)) bucketed(statusIn(wantedStatuses));
  else b.choose(false);
  if (p.severities && b.choose(true)) bucketed(severityIn(p.severities));
  else b.choose(false);
  if (b.choose(query.duplicates === false)) unbucketed(isNull(findings.duplicateOf));
  if (p.labelNames && b.choose(true)) unbucketed(byLabelNames(p.labelNames, scope, access, b));
  else b.choose(false);
  if (b.choose(query.unlabeled === true)) unbucketed(unlabeled(access, b));
  const otherFilter = query.filter_for === 'require_review' ? undefined : query.filter_for;
  if (otherFilter !== undefined && b.choose(true)) unbucketed(filterFor(otherFilter, access, b));
  else b.choose(false);
  if (p.createdBy && b.choose(true)) unbucketed(byUsernames(findings.createdBy, p.createdBy, b));
  else b.choose(false);
  if (p.assignedTo !== undefined && b.choose(true))
    unbucketed(byUsernames(findings.assignedTo, [p.assignedTo], b));
  else b.choose(false);
  if (p.q !== undefined && b.choose(true)) unbucketed(textMatch(p.q, b));
  else b.choose(false);
  if (b.choose(query.with_unread_comments === true)) unbucketed(hasUnreadComments(access, b));
  if (b.choose(query.with_unread_comments === false)) unbucketed(not(hasUnreadComments(access, b)));
  const search = p.search;
  if (search && b.choose(true)) {
    if (b.choose(search.status.length > 0)) bucketed(statusIn(search.status));
    if (b.choose(search.severity.length > 0)) bucketed(severityIn(search.severity));
    if (b.choose(search.label.length > 0)) unbucketed(byLabelNames(search.label, scope, access, b));
    if (b.choose(search.createdBy.length > 0))
      unbucketed(byUsernames(findings.createdBy, search.createdBy, b));
    if (b.choose(search.assignedTo.length > 0))
      unbucketed(byUsernames(findings.assignedTo, search.assignedTo, b));
    if (b.choose(search.repository.length > 0)) unbucketed(byRepositoryRefs(search.repository, b));
    if (b.choose(search.path.length > 0)) unbucketed(byPaths(search.path, b));
    if (b.choose(search.unread)) unbucketed(hasUnreadComments(access, b));
    if (b.choose(search.duplicate)) unbucketed(isNotNull(findings.duplicateOf));
    b.choose(search.text.length);
    for (const term of search.text) unbucketed(textMatch(term, b));
  } else b.choose(false);
  return { conditions, bucketFilters };
}

/**
 * The hash covers everything that changes which rows match or their order (not `limit`), in a
 * normalised form, so an equivalent request may continue a pagination.
 */
function filterHashOf(query: AllFindingsQuery, p: ListingParams): string {
  return hashFilters({
    order: p.order,
    repositories: p.repositoryIds,
    role: query.role,
    path: p.path,
    status: p.statuses ? [...new Set(p.statuses)].sort() : undefined,
    severity: p.severities ? [...new Set(p.severities)].sort() : undefined,
    duplicates: query.duplicates === false ? false : undefined,
    label: p.labelNames ? lowered(p.labelNames) : undefined,
    unlabeled: query.unlabeled === true ? true : undefined,
    filterFor: query.filter_for,
    createdBy: p.createdBy ? lowered(p.createdBy) : undefined,
    assignedTo: p.assignedTo?.toLowerCase(),
    q: p.q,
    s: p.s,
    unread: query.with_unread_comments,
  });
}

/**
 * `filteredTotal` from `finding_counts` when every filter reads only repository, status and
 * severity: the buckets of whole visible repositories (by company or by a role that sees all),
 * plus the reviewer's own findings in the repositories where they see only those, counted on
 * `findings` (the two parts are disjoint, see {@link VisibilityScope}).
 */
export function bucketCount(
  db: Db,
  access: FindingAccess,
  scope: VisibilityScope,
  filters: BucketFilter[],
  b: Binder,
) {
  const whole: SQL[] = [];
  if (b.choose(scope.companyIds.length > 0))
    whole.push(oneOf(findingCounts.companyId, scope.companyIds, 'uuid', b));
  if (b.choose(scope.fullRepositoryIds.length > 0))
    whole.push(oneOf(findingCounts.repositoryId, scope.fullRepositoryIds, 'uuid', b));
  const wholeCondition = b.choose(scope.readAll)
    ? sql`true`
    : whole.length > 0
      ? (or(...whole) as SQL)
      : sql`false`;
  let own: SQL = sql`0`;
  if (b.choose(!scope.readAll && scope.ownRepositoryIds.length > 0)) {
    const notWhole = [
      sql`${findings.published} and ${findings.repositoryId} is not null`,
      sql`${findings.createdBy} = ${b.bind(access.userId, 'uuid')}`,
      oneOf(findings.repositoryId, scope.ownRepositoryIds, 'uuid', b),
    ];
    // Findings of the user's companies are already in the buckets.
    if (b.choose(scope.companyIds.length > 0))
      notWhole.push(sql`not (${oneOf(findings.companyId, scope.companyIds, 'uuid', b)})`);
    own = sql`(select count(*)::int from ${findings} where ${and(...notWhole, ...filters.map((f) => f(FINDING_BUCKET)))})`;
  }
  const counted = filters.map((f) => f(COUNT_BUCKET));
  return () =>
    db
      .select({ n: sql<number>`coalesce(sum(${findingCounts.n}), 0)::int + ${own}` })
      .from(findingCounts)
      .where(and(wholeCondition, ...counted));
}
