import { and, asc, desc, type SQL, sql } from 'drizzle-orm';
import { FINDING_HAS_COMMENTS } from '../../access/access.repo.ts';
import type { FindingAccess } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import { findings } from '../../db/schema/index.ts';
import { keptStatements, plainRows, StatementValues } from '../../db/sql.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { loadFindingPayloads } from './finding-payloads.repo.ts';
import type { Finding, FindingOrder } from './findings.schemas.ts';
import { type AllFindingsQuery, bucketCount, prepare } from './findings-listing.filters.ts';

export {
  type AllFindingsQuery,
  DEFAULT_FINDINGS_LIMIT,
  DEFAULT_FINDINGS_ORDER,
  MAX_FINDINGS_LIMIT,
} from './findings-listing.filters.ts';

import { cursorCondition, cursorText, type SortKey, sortKeyOf } from './findings-listing.order.ts';

/** A page of the listing: the route's `FindingPage`. */
export interface AllFindingsResult {
  findings: Finding[];
  filteredTotal: number;
  nextValue: string | null;
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
 * What reading one page of the listing needs, worked out once from the request: the filters as a
 * condition, the sort key and its direction, the cursor's position, the count's statement, and the
 * statement values every part binds into (one shape per combination of parameters).
 */
interface PagePlan {
  db: Db;
  access: FindingAccess;
  query: AllFindingsQuery;
  cursors: CursorCodec;
  b: StatementValues;
  order: FindingOrder;
  filterHash: string;
  limit: number;
  unreadOnly: boolean;
  key: SortKey;
  direction: 'asc' | 'desc';
  /** The rows after the cursor (null: from the start). */
  after: SQL | null;
  where: SQL;
  /** Whether the count rides in the page statement (from `finding_counts`). */
  countFromBuckets: boolean;
  countSource: () => PlainQuery;
  /** `limit + 1`, written into the statement's text. */
  pageLimit: number;
}

const COUNT_FIELDS = { n: sql<number>`n` };

/** Validates the request and builds the parts of its statements (see {@link PagePlan}). */
function planPage(db: Db, access: FindingAccess, query: AllFindingsQuery, cursors: CursorCodec): PagePlan {
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
  // In the text: a generic plan of a page with a `limit` placeholder never wins over the custom
  // ones, and every page was planned anew (see StatementValues.rowCount).
  const pageLimit = b.rowCount(limit + 1);
  return {
    db,
    access,
    query,
    cursors,
    b,
    order,
    filterHash,
    limit,
    unreadOnly,
    key,
    direction,
    after,
    where,
    countFromBuckets: bucketFilters !== null && bucketFilters !== undefined,
    countSource,
    pageLimit,
  };
}

/**
 * The all-findings listing (v0 §4.4) for a user: visible published findings, every filter of the
 * document combined by AND, the chosen order with the id as tie-breaker (nulls last in both
 * directions), keyset pages of at most `limit`, and `filteredTotal` counted under the same
 * filters without the cursor. The page's rows are read first (ids and sort keys), then their
 * payloads by one statement over the ids, whose cached generic plan does not depend on how
 * selective the filters are.
 */
export async function listAllFindings(
  db: Db,
  access: FindingAccess,
  query: AllFindingsQuery,
  cursors: CursorCodec,
): Promise<AllFindingsResult> {
  const plan = planPage(db, access, query, cursors);
  const { rows, total } = plan.b.choose(plan.order.startsWith('last_comment_'))
    ? await lastCommentRows(plan)
    : await keyedRows(plan);
  const payloads = await loadFindingPayloads(
    db,
    access,
    rows.slice(0, plan.limit).map((r) => r.id),
  );
  return pageResult(plan, rows, total, payloads);
}

/**
 * The rows of a page in the order of a key of the findings (or their author), with the count. A
 * count from the per-bucket counts rides in the keyset page as a scalar subquery, which PostgreSQL
 * evaluates once: one statement instead of two (an empty page has no row to carry it: a first page
 * then has a total of 0, a later one counts on its own). A count over the findings themselves runs
 * beside the page on a second connection instead: inside the page statement it would run after
 * the page's scan, doubling the request's time.
 */
async function keyedRows(plan: PagePlan): Promise<{ rows: PageRow[]; total: number }> {
  const { db, b, key, after, where, pageLimit, countSource } = plan;
  const shape = b.shape;
  const dir = plan.direction === 'asc' ? sql`asc` : sql`desc`;
  const orderBy = [
    // Nulls last in both directions. A key that is never null is sorted without the clause,
    // so that a descending order can read an ascending index backwards.
    key.nullable ? sql`${key.expression} ${dir} nulls last` : sql`${key.expression} ${dir}`,
    plan.direction === 'asc' ? asc(findings.id) : desc(findings.id),
  ];
  const page = (role: string, total: SQL<number | null>) => {
    const fields = { id: findings.id, key: cursorText(key), total };
    return runListing<PageRow>(db, role, b, shape, fields, () => {
      return db
        .select(fields)
        .from(findings)
        .where(after ? and(where, after) : where)
        .orderBy(...orderBy)
        .limit(pageLimit);
    });
  };
  const count = async () =>
    (await runListing<CountRow>(db, 'count', b, shape, COUNT_FIELDS, countSource))[0]?.n ?? 0;
  if (plan.countFromBuckets) {
    const rows = await page('page', sql<number>`(${countSource()})`);
    // An empty first page has nothing to count.
    const total = rows[0] ? (rows[0].total ?? 0) : after === null ? 0 : await count();
    return { rows, total };
  }
  const [rows, total] = await Promise.all([page('page-alone', sql<null>`null::int`), count()]);
  return { rows, total };
}

/**
 * The rows of a page in the order of the user's lastCommentAt, with the count: the findings with a
 * comment the user reads (only commented findings, read through the `findings_commented_*`
 * partial indexes and sorted), then, if the page is not full, those without (by id). One query
 * over every visible finding would sort them all on a per-user expression.
 */
async function lastCommentRows(plan: PagePlan): Promise<{ rows: PageRow[]; total: number }> {
  const { db, b, key, after, where, pageLimit, limit, direction, query, cursors, filterHash } = plan;
  /** The id of a cursor positioned among the null keys; undefined for a non-null key or the start. */
  const cursorNullKeyId = (next: string): string | undefined => {
    const keys = cursors.decode(next, filterHash);
    return keys.length === 2 && keys[0] === null && typeof keys[1] === 'string' ? keys[1] : undefined;
  };
  const cursorKeyIsNull = query.next ? cursorNullKeyId(query.next) : undefined;
  b.choose(cursorKeyIsNull !== undefined);
  const dir = direction === 'asc' ? sql`asc` : sql`desc`;
  const byId = direction === 'asc' ? asc(findings.id) : desc(findings.id);
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
  const pageRows = async () => {
    const rows: PageRow[] = [];
    if (cursorKeyIsNull === undefined) {
      rows.push(...(await runListing<PageRow>(db, 'commented', b, shape, commentedFields, commented)));
    }
    // An unread comment is a readable one: with that filter no finding has a null key.
    if (rows.length > limit || plan.unreadOnly) return rows;
    // The rest of the page: the one value set after the shape, a placeholder's value only.
    b.values[nullLimit.name as string] = limit + 1 - rows.length;
    rows.push(...(await runListing<PageRow>(db, 'uncommented', b, shape, nullFields, uncommented)));
    return rows;
  };
  const [[count], rows] = await Promise.all([
    runListing<CountRow>(db, 'count', b, shape, COUNT_FIELDS, plan.countSource),
    pageRows(),
  ]);
  return { rows, total: count?.n ?? 0 };
}

/** The result of a page of `limit + 1` rows (the last only tells that more follow). */
function pageResult(
  plan: PagePlan,
  rows: Array<{ id: string; key: string | null }>,
  filteredTotal: number,
  findings: Finding[],
): AllFindingsResult {
  const { limit, query, cursors, filterHash } = plan;
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
