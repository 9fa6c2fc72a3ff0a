import {
  and,
  asc,
  type Column,
  desc,
  eq,
  inArray,
  isNotNull,
  isNull,
  not,
  or,
  type SQL,
  sql,
} from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  effectiveRoleCondition,
  FINDING_HAS_COMMENTS,
  readableLabelCondition,
  readsEveryLabel,
  visibleFindingsCondition,
  visibleLastCommentAt,
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
import { type Binder, inList, keptStatements, oneOf, plainRows, StatementValues } from '../../db/sql.ts';
import { AppError } from '../../errors.ts';
import { badStringReason, escapeLike, isUuid } from '../../strings.ts';
import {
  type CursorCodec,
  hashFilters,
  invalidCursor,
  isEpochMicrosText,
  isInt4Text,
} from '../pagination/cursor.ts';
import { splitListParam } from '../pagination/list-params.ts';
import { hasUnreadComments, loadFindingPayloads } from './finding-payloads.repo.ts';
import {
  FILTER_FOR_VALUES,
  FINDING_ORDERS,
  type FilterFor,
  type Finding,
  type FindingOrder,
} from './findings.schemas.ts';
import { parseSearch, requireValues } from './search-syntax.ts';

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

/** A page of the listing: the route's `FindingPage`. */
export interface AllFindingsResult {
  findings: Finding[];
  filteredTotal: number;
  nextValue: string | null;
}

export const DEFAULT_FINDINGS_LIMIT = 20;
export const MAX_FINDINGS_LIMIT = 100;
/** "Default order by number" (v0 §4.4): ascending, as SQL orders by a column by default. */
export const DEFAULT_FINDINGS_ORDER: FindingOrder = 'number_asc';

/** Status in lifecycle order (v0 §3), severity from least to most severe: what `_asc` means. */
const STATUS_ORDER = sql.raw(`array_position('{${findingStatuses.join(',')}}'::text[], "findings"."status")`);
const SEVERITY_ORDER = sql.raw(
  `array_position('{gas_optimization,informational,low,medium,high,critical}'::text[], "findings"."severity")`,
);

const creator = alias(users, 'creator');
/** A second finding row: the duplicates of a root in `filter_for=with_duplicates`. */
const duplicate = alias(findings, 'dup');

type KeyType = 'int' | 'text' | 'numeric' | 'timestamptz';
interface SortKey {
  expression: SQL;
  type: KeyType;
  nullable: boolean;
  /** Needs the author joined (reputation, username). */
  joinsCreator: boolean;
}

function sortKeyOf(order: FindingOrder, access: FindingAccess, b: Binder): SortKey {
  const field = order.replace(/_(asc|desc)$/, '');
  switch (field) {
    case 'number':
      return { expression: sql`${findings.number}`, type: 'int', nullable: false, joinsCreator: false };
    case 'status':
      return { expression: STATUS_ORDER, type: 'int', nullable: false, joinsCreator: false };
    case 'severity':
      return { expression: SEVERITY_ORDER, type: 'int', nullable: false, joinsCreator: false };
    case 'reputation':
      return { expression: sql`${creator.reputation}`, type: 'int', nullable: true, joinsCreator: true };
    case 'username':
      return {
        expression: sql`lower(${creator.username})`,
        type: 'text',
        nullable: true,
        joinsCreator: true,
      };
    case 'created_at':
      return {
        expression: sql`${findings.createdAt}`,
        type: 'timestamptz',
        nullable: false,
        joinsCreator: false,
      };
    case 'last_updated_at':
      return {
        expression: sql`${findings.lastUpdatedAt}`,
        type: 'timestamptz',
        nullable: false,
        joinsCreator: false,
      };
    case 'reward':
      return { expression: sql`${findings.reward}`, type: 'numeric', nullable: true, joinsCreator: false };
    default:
      // The user's own lastCommentAt: only comments they may read move a finding (access policy).
      return {
        expression: visibleLastCommentAt(access, b),
        type: 'timestamptz',
        nullable: true,
        joinsCreator: false,
      };
  }
}

/**
 * The sort key as text for the cursor. Timestamps travel as integer microseconds since the epoch,
 * because a JavaScript Date would drop the microseconds and make the next page repeat rows.
 */
function cursorText(key: SortKey): SQL<string | null> {
  if (key.type === 'timestamptz')
    return sql<string | null>`(extract(epoch from ${key.expression}) * 1000000)::bigint::text`;
  return sql<string | null>`(${key.expression})::text`;
}

/** Whether a cursor key fits its column type and range (checked before it reaches SQL). */
const KEY_CHECK: Record<KeyType, (text: string) => boolean> = {
  int: isInt4Text,
  numeric: (text) => /^-?[0-9]{1,40}(\.[0-9]{1,40})?$/.test(text),
  timestamptz: isEpochMicrosText,
  text: (text) => text.length <= 1000 && badStringReason(text) === null,
};

function cursorValue(key: SortKey, text: string, b: Binder): SQL {
  switch (key.type) {
    case 'int':
      return b.bind(Number(text), 'int');
    case 'numeric':
      return b.bind(text, 'numeric');
    case 'timestamptz':
      return sql`('epoch'::timestamptz + ${b.bind(text, 'bigint')} * interval '1 microsecond')`;
    default:
      return b.bind(text, 'text');
  }
}

/**
 * Rows after the cursor in `ORDER BY key <dir> NULLS LAST, id <dir>`. Nulls sort last in both
 * directions, so after a non-null key come the remaining non-null keys and then every null key;
 * after a null key come only null keys with a later id.
 */
function afterCursor(
  key: SortKey,
  direction: 'asc' | 'desc',
  keyText: string | null,
  id: string,
  b: Binder,
): SQL {
  const cmp = direction === 'asc' ? sql`>` : sql`<`;
  if (b.choose(keyText === null))
    return sql`(${key.expression} is null and ${findings.id} ${cmp} ${b.bind(id, 'uuid')})`;
  const row = sql`(${key.expression}, ${findings.id}) ${cmp} (${cursorValue(key, keyText as string, b)}, ${b.bind(id, 'uuid')})`;
  return key.nullable ? sql`(${row} or ${key.expression} is null)` : row;
}

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

/** Findings that carry no label the user may read (what their payload shows as `labels: []`). */
function unlabeled(access: FindingAccess, b: Binder): SQL {
  if (b.choose(readsEveryLabel(access))) {
    return sql`not exists (select 1 from ${findingLabels} where ${findingLabels.findingId} = ${findings.id})`;
  }
  return sql`not exists (select 1 from ${findingLabels} inner join ${labels} on ${labels.id} = ${findingLabels.labelId}
    where ${findingLabels.findingId} = ${findings.id} and ${readableLabelCondition(access, findings, b)})`;
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
 * The predefined `filter_for` filters:
 * - `client_recommended`: what the triage team recommends to the client — valid findings
 *   (confirmed, acknowledged, fixed) that are not duplicates of another finding;
 * - `with_duplicates`: root findings that at least one other finding duplicates;
 * - `require_review`: findings still waiting for a judgement (new, in_review, disputed).
 */
function filterFor(value: FilterFor, access: FindingAccess, b: Binder): SQL {
  switch (b.choose(value)) {
    case 'client_recommended':
      return and(
        inArray(findings.status, ['confirmed', 'acknowledged', 'fixed']),
        isNull(findings.duplicateOf),
      ) as SQL;
    case 'with_duplicates':
      // Only duplicates the user may see make a root: a hidden one must not reveal itself.
      return sql`exists (select 1 from ${findings} as "dup" where ${duplicate.duplicateOf} = ${findings.id} and ${visibleFindingsCondition(access, duplicate, b)})`;
    default:
      return inArray(findings.status, REQUIRE_REVIEW);
  }
}

/** The columns a filter on repository, status and severity reads: of `findings` or `finding_counts`. */
interface BucketColumns {
  repositoryId: Column;
  companyId: Column;
  status: Column;
  severity: Column;
}
type BucketFilter = (columns: BucketColumns) => SQL;

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

interface Prepared {
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

/** Validates and normalises the parameters, builds the filter conditions and the filter hash. */
function prepare(access: FindingAccess, query: AllFindingsQuery, b: Binder): Prepared {
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
  const q = query.q?.trim() || undefined;
  const s = query.s?.trim() || undefined;
  const search = s ? parseSearch(s) : undefined;

  // Every value goes into the statement through `b`, and every test below that adds a condition
  // is a choice of `b`: equal choices give equal statement texts (see StatementValues).
  const scope = visibilityScope(access);
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
  if (b.choose(repositoryIds.length > 0)) bucketed(uuids(repositoryIds));
  if (b.choose(query.role !== undefined)) {
    const role = query.role as RepositoryRole;
    bucketed((c) => effectiveRoleCondition(access, role, c, b));
  }
  if (b.choose(path !== undefined)) unbucketed(byPaths([path as string], b));
  if (statuses && b.choose(true)) bucketed(statusIn(statuses));
  else b.choose(false);
  if (sevs && b.choose(true)) bucketed(severityIn(sevs));
  else b.choose(false);
  if (b.choose(query.duplicates === false)) unbucketed(isNull(findings.duplicateOf));
  if (labelNames && b.choose(true)) unbucketed(byLabelNames(labelNames, scope, access, b));
  else b.choose(false);
  if (b.choose(query.unlabeled === true)) unbucketed(unlabeled(access, b));
  if (b.choose(query.filter_for === 'require_review'))
    bucketed((c) => inList(c.status, REQUIRE_REVIEW, 'text', b));
  else if (query.filter_for !== undefined && b.choose(true))
    unbucketed(filterFor(query.filter_for, access, b));
  else b.choose(false);
  if (createdBy && b.choose(true)) unbucketed(byUsernames(findings.createdBy, createdBy, b));
  else b.choose(false);
  if (assignedTo !== undefined && b.choose(true))
    unbucketed(byUsernames(findings.assignedTo, [assignedTo], b));
  else b.choose(false);
  if (q !== undefined && b.choose(true)) unbucketed(textMatch(q, b));
  else b.choose(false);
  if (b.choose(query.with_unread_comments === true)) unbucketed(hasUnreadComments(access, b));
  if (b.choose(query.with_unread_comments === false)) unbucketed(not(hasUnreadComments(access, b)));
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

  // The hash covers everything that changes which rows match or their order (not `limit`), in a
  // normalised form, so an equivalent request may continue a pagination.
  const filterHash = hashFilters({
    order,
    repositories: repositoryIds,
    role: query.role,
    path,
    status: statuses ? [...new Set(statuses)].sort() : undefined,
    severity: sevs ? [...new Set(sevs)].sort() : undefined,
    duplicates: query.duplicates === false ? false : undefined,
    label: labelNames ? lowered(labelNames) : undefined,
    unlabeled: query.unlabeled === true ? true : undefined,
    filterFor: query.filter_for,
    createdBy: createdBy ? lowered(createdBy) : undefined,
    assignedTo: assignedTo?.toLowerCase(),
    q,
    s,
    unread: query.with_unread_comments,
  });
  const unreadOnly = query.with_unread_comments === true || search?.unread === true;
  return { conditions, bucketFilters, scope, order, filterHash, limit, unreadOnly };
}

/** Decodes `next` into the keyset condition of this ordering (null: from the start). */
function cursorCondition(
  key: SortKey,
  direction: 'asc' | 'desc',
  next: string,
  filterHash: string,
  cursors: CursorCodec,
  b: Binder,
): SQL | null {
  const keys = cursors.decode(next, filterHash);
  if (keys.length === 0) return null;
  const [keyText, id] = keys;
  if (keys.length !== 2 || typeof id !== 'string' || !isUuid(id)) throw invalidCursor();
  if (keyText === null) {
    if (!key.nullable) throw invalidCursor();
    return afterCursor(key, direction, null, id, b);
  }
  if (typeof keyText !== 'string' || !KEY_CHECK[key.type](keyText)) throw invalidCursor();
  return afterCursor(key, direction, keyText, id, b);
}

/**
 * `filteredTotal` from `finding_counts` when every filter reads only repository, status and
 * severity: the buckets of whole visible repositories (by company or by a role that sees all),
 * plus the reviewer's own findings in the repositories where they see only those, counted on
 * `findings` (the two parts are disjoint, see {@link VisibilityScope}).
 */
function bucketCount(
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

type PageRow = { id: string; key: string | null; total: number | null };
type CountRow = { n: number };

/** The statements of the listing, by their shape and role (see {@link StatementValues}), per database handle. */
const listingStatements = keptStatements<PlainQuery>();
type PlainQuery = PromiseLike<unknown[]> & { toSQL(): { sql: string; params: unknown[] } };

/**
 * Runs one statement of the listing: built (a Drizzle query with the placeholders of `values`)
 * the first time its shape is seen on this database handle, afterwards only filled with the
 * request's values. The text is the same for every request of the shape, so each pooled
 * connection prepares it once.
 */
async function runListing<T>(
  db: Db,
  role: string,
  values: StatementValues,
  shape: string,
  fields: Record<string, unknown>,
  build: () => PlainQuery,
): Promise<T[]> {
  const query = listingStatements(db, `${role}:${shape}`, build);
  return (await plainRows(db, fields, query, values.values)) as T[];
}

/**
 * The all-findings listing (v0 §4.4) for a user: visible published findings, every filter of the
 * document combined by AND, the chosen order with the id as tie-breaker (nulls last in both
 * directions), keyset pages of at most `limit`, and `filteredTotal` counted under the same
 * filters without the cursor.
 */
export async function listAllFindings(
  db: Db,
  access: FindingAccess,
  query: AllFindingsQuery,
  cursors: CursorCodec,
): Promise<AllFindingsResult> {
  const b = new StatementValues();
  const { conditions, bucketFilters, scope, order, filterHash, limit, unreadOnly } = prepare(
    access,
    query,
    b,
  );
  const direction = order.endsWith('_desc') ? 'desc' : 'asc';
  b.choose(order);
  const key = sortKeyOf(order, access, b);
  const after = query.next ? cursorCondition(key, direction, query.next, filterHash, cursors, b) : null;
  b.choose(after !== null);
  const where = and(...conditions) as SQL;

  const countSource = bucketFilters
    ? bucketCount(db, access, scope, bucketFilters, b)
    : () => db.select({ n: sql<number>`count(*)::int` }).from(findings).where(where);
  const countFields = { n: sql<number>`n` };
  const dir = direction === 'asc' ? sql`asc` : sql`desc`;
  const byId = direction === 'asc' ? asc(findings.id) : desc(findings.id);
  const orderBy = [
    // Nulls last in both directions. A key that is never null is sorted without the clause,
    // so that a descending order can read an ascending index backwards.
    key.nullable ? sql`${key.expression} ${dir} nulls last` : sql`${key.expression} ${dir}`,
    byId,
  ];
  // In the text: a generic plan of a page with a `limit` placeholder never wins over the custom
  // ones, and every page was planned anew (see StatementValues.rowCount).
  const pageLimit = b.rowCount(limit + 1);
  /**
   * A count from the per-bucket counts rides in the keyset page as a scalar subquery, which
   * PostgreSQL evaluates once: one statement instead of two (an empty page has no row to carry
   * it: a first page then has a total of 0, a later one counts on its own). A count over the
   * findings themselves runs beside the page on a second connection instead: inside the page
   * statement it would run after the page's scan, doubling the request's time. The
   * payloads are read by a second statement over the page's ids, whose cached generic plan does
   * not depend on how selective the filters are (a page and its payloads in one statement was
   * planned again on every filtered request: some 7 ms for its many joins).
   */
  if (!b.choose(order.startsWith('last_comment_'))) {
    const shape = b.shape;
    const page = (role: string, total: SQL<number | null>) => {
      const fields = { id: findings.id, key: cursorText(key), total };
      return runListing<PageRow>(db, role, b, shape, fields, () => {
        const base = db.select(fields).from(findings);
        const joined = key.joinsCreator ? base.leftJoin(creator, eq(creator.id, findings.createdBy)) : base;
        return joined
          .where(after ? and(where, after) : where)
          .orderBy(...orderBy)
          .limit(pageLimit);
      });
    };
    const count = async () =>
      (await runListing<CountRow>(db, 'count', b, shape, countFields, countSource))[0]?.n;
    let rows: PageRow[];
    let total: number | undefined;
    if (bucketFilters) {
      // A count from the buckets is cheap: it rides in the page statement.
      rows = await page('page', sql<number>`(${countSource()})`);
      // An empty first page has nothing to count.
      total = rows[0] ? (rows[0].total ?? 0) : after === null ? 0 : await count();
    } else {
      // A count over the findings themselves reads every match, as long as the page's own scan:
      // on a second connection beside the page rather than after it within one statement.
      [rows, total] = await Promise.all([page('page-alone', sql<null>`null::int`), count()]);
    }
    const payloads = await loadFindingPayloads(
      db,
      access,
      rows.slice(0, limit).map((r) => r.id),
    );
    return pageResult(rows, total ?? 0, payloads);
  }
  /**
   * The user's lastCommentAt orders in two parts: the findings with a comment the user reads
   * (only commented findings, read through the `findings_commented_*` partial indexes and sorted),
   * then, if the page is not full, those without (by id). One query over every visible finding
   * would sort them all on a per-user expression.
   */
  /** The id of a cursor positioned among the null keys; undefined for a non-null key or the start. */
  const cursorNullKeyId = (next: string): string | undefined => {
    const keys = cursors.decode(next, filterHash);
    return keys.length === 2 && keys[0] === null && typeof keys[1] === 'string' ? keys[1] : undefined;
  };
  const cursorKeyIsNull = query.next ? cursorNullKeyId(query.next) : undefined;
  b.choose(cursorKeyIsNull !== undefined);
  const commentedFields = { id: findings.id, key: cursorText(key) };
  const commented = () =>
    db
      .select(commentedFields)
      .from(findings)
      .where(and(where, FINDING_HAS_COMMENTS, sql`${key.expression} is not null`, after ?? undefined))
      .orderBy(sql`${key.expression} ${dir}`, byId)
      .limit(pageLimit);
  const nullPart = [where, sql`${key.expression} is null`];
  if (cursorKeyIsNull)
    nullPart.push(
      direction === 'asc'
        ? sql`${findings.id} > ${b.bind(cursorKeyIsNull, 'uuid')}`
        : sql`${findings.id} < ${b.bind(cursorKeyIsNull, 'uuid')}`,
    );
  const nullLimit = b.placeholder(limit + 1);
  const nullFields = { id: findings.id, key: sql<string | null>`null::text` };
  const uncommented = () =>
    db
      .select(nullFields)
      .from(findings)
      .where(and(...nullPart))
      .orderBy(byId)
      .limit(nullLimit);
  const shape = b.shape;
  const lastCommentPage = async () => {
    const rows: Array<{ id: string; key: string | null }> = [];
    if (cursorKeyIsNull === undefined) {
      rows.push(...(await runListing<PageRow>(db, 'commented', b, shape, commentedFields, commented)));
    }
    // An unread comment is a readable one: with that filter no finding has a null key.
    if (rows.length > limit || unreadOnly) return rows;
    // The rest of the page: the one value set after the shape, a placeholder's value only.
    b.values[nullLimit.name as string] = limit + 1 - rows.length;
    rows.push(...(await runListing<PageRow>(db, 'uncommented', b, shape, nullFields, uncommented)));
    return rows;
  };
  const [[count], rows] = await Promise.all([
    runListing<CountRow>(db, 'count', b, shape, countFields, countSource),
    lastCommentPage(),
  ]);
  const payloads = await loadFindingPayloads(
    db,
    access,
    rows.slice(0, limit).map((r) => r.id),
  );
  return pageResult(rows, count?.n ?? 0, payloads);

  /** The result of a page of `limit + 1` rows (the last only tells that more follow). */
  function pageResult(
    rows: Array<{ id: string; key: string | null }>,
    filteredTotal: number,
    findings: Finding[],
  ): AllFindingsResult {
    const last = rows[Math.min(rows.length, limit) - 1];
    let nextValue: string | null = null;
    if (rows.length > limit && last) nextValue = cursors.encode([last.key, last.id], filterHash);
    // A zero-size page reads one row to know whether anything follows; if so, it hands back a
    // cursor at the current position, so the client can go on.
    else if (limit === 0 && rows.length > 0) {
      nextValue = query.next ? query.next : cursors.encode([], filterHash);
    }
    return { findings, filteredTotal, nextValue };
  }
}
