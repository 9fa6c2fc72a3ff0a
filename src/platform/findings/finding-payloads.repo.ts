import { eq, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  type AccessValues,
  accessPlaceholders,
  accessPlaceholderValues,
  boundAccessValues,
  FINDING_HAS_COMMENTS,
  latestReadableByOthersAtOf,
  readableNoteConditionOf,
  readsAsReviewerOf,
  visibleCommentsConditionOf,
  visibleFindingsConditionOf,
  visibleLastCommentAtOf,
} from '../../access/access.repo.ts';
import type { FindingAccess } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import { commentReads, comments, findingBodies, findings } from '../../db/schema/index.ts';
import {
  type Binder,
  INLINE_VALUES,
  isoMillis,
  keptStatements,
  plainRows,
  rowCountInText,
} from '../../db/sql.ts';
import type { Label } from '../labels/labels.schemas.ts';
import type { Finding } from './findings.schemas.ts';

/**
 * A finding's API payload as one reader sees it: its body (`finding_bodies`, the part every reader
 * sees alike, kept by PostgreSQL; finding-bodies.source.ts) with the fields that depend on the
 * reader, read by one statement over a page's ids.
 */

/**
 * The user's read marker of the outer `findings` row, joined once per row to the payload's
 * findings (its primary key: at most one row), so that the payload's unread state reads it once.
 */
const readMarker = alias(commentReads, 'read_marker');

/**
 * The number of comments on the outer `findings` row that the user has not read: written by
 * someone else after the user's last read (`readAt`, the {@link readMarker}'s), not deleted, and
 * readable by the user (access policy). Counted on `comments` for the findings of one page only;
 * zero unless {@link hasUnreadComments}.
 */
function unreadCommentsCountOf(v: AccessValues, readAt: SQL): SQL<number> {
  return sql<number>`(case when ${hasUnreadCommentsOf(v, readAt)} then (select count(*)::int from ${comments}
    where ${comments.findingId} = ${findings.id}
      and ${comments.authorId} is distinct from ${v.userId}
      and ${comments.deletedAt} is null
      and ${comments.createdAt} > coalesce(${readAt}, '-infinity'::timestamptz)
      and ${visibleCommentsConditionOf(v)}) else 0 end)`;
}

/**
 * Whether the outer `findings` row has a comment the user has not read: the latest comment the
 * user may read and did not write (kept on the finding row, see {@link latestReadableByOthersAt})
 * is later than the user's read marker. A row test plus a probe of `comment_reads` that the
 * planner runs as one anti-join over the user's markers; the filter, the payload's
 * `hasUnreadComments` and the gate of its `unreadCommentsNumber` are this one expression.
 */
export function hasUnreadComments(access: FindingAccess, b: Binder = INLINE_VALUES): SQL<boolean> {
  return hasUnreadCommentsOf(boundAccessValues(access, b));
}

/**
 * {@link hasUnreadComments} over {@link AccessValues}; with `readAt`, the user's read marker of
 * the row already at hand (the payload's {@link readMarker}, null when there is none) instead of
 * a probe of `comment_reads`.
 */
function hasUnreadCommentsOf(v: AccessValues, readAt?: SQL): SQL<boolean> {
  const latest = latestReadableByOthersAtOf(v);
  const notRead = readAt
    ? sql`(${readAt} is null or ${readAt} < ${latest})`
    : sql`not exists (select 1 from ${commentReads}
    where ${commentReads.userId} = ${v.userId} and ${commentReads.findingId} = ${findings.id}
      and ${commentReads.readAt} >= ${latest})`;
  return sql<boolean>`(${FINDING_HAS_COMMENTS} and ${latest} is not null and ${notRead})`;
}

/** Finding rows of the duplicate group of the outer one: looked up, then tested for visibility. */
const groupRow = alias(findings, 'group_row');
const groupMember = alias(findings, 'group_member');
/** A duplicate of the outer finding: whether it is the root of a group at all. */
const duplicate = alias(findings, 'duplicate');

/** A finding reference (`FindingRef`) of a row of the duplicate group. */
function findingRefJson(row: typeof groupMember): SQL {
  return sql`json_build_object('id', ${row.id}, 'number', coalesce(${row.number}, 0), 'title', ${row.title})`;
}

/**
 * The columns of a finding's payload that depend on the reader, with the user's access sets as
 * placeholders (see {@link accessPlaceholders}): what the user may not read (labels, the note,
 * members of the duplicate group, comments) is left out here, by the access policy's predicates.
 * With them, the finding's body: the part every reader sees alike (finding-bodies.source.ts).
 */
function readerColumns(v: AccessValues) {
  const root = sql`coalesce(${findings.duplicateOf}, ${findings.id})`;
  return {
    id: findings.id,
    body: findingBodies.body,
    duplicateOf: findings.duplicateOf,
    note: sql<string | null>`case when ${readableNoteConditionOf(v)} then ${findings.note} end`.as(
      'readable_note',
    ),
    hasUnread: hasUnreadCommentsOf(v, sql`${readMarker.readAt}`).as('has_unread'),
    unread: unreadCommentsCountOf(v, sql`${readMarker.readAt}`).as('unread'),
    lastCommentAt: isoMillis(visibleLastCommentAtOf(v)).as('last_comment_at_text'),
    // Which of the body's two label lists the user reads: a user who reads the finding as a
    // reviewer reads only the labels reviewers may read (the access policy's `label.read`).
    readsAsReviewer: readsAsReviewerOf(v).as('reads_as_reviewer'),
    // The root and the duplicates of the row's group that the user may see, as an array of three
    // JSON values: the root's reference (null when it is not visible), the references of the
    // duplicates by number (null when none is visible), and the group's description; null for a
    // finding that is neither a duplicate nor the root of one (most: one probe of the index of
    // duplicates). The group is looked up first (`offset 0` keeps the visibility test out of that
    // lookup): the planner would otherwise intersect it with every visible finding of the company.
    group: sql<unknown>`(case when ${findings.duplicateOf} is not null
        or exists (select 1 from ${findings} as "duplicate" where ${duplicate.duplicateOf} = ${findings.id})
      then (select array[
          (array_agg(${findingRefJson(groupMember)}) filter (where ${groupMember.id} = ${root}))[1],
          json_agg(${findingRefJson(groupMember)} order by ${groupMember.number}, ${groupMember.id})
            filter (where ${groupMember.duplicateOf} = ${root}),
          to_json((array_agg(${groupMember.duplicateGroupDescription}) filter (where ${groupMember.id} = ${root}))[1])]
        from (select ${groupRow.id}, ${groupRow.number}, ${groupRow.title}, ${groupRow.duplicateOf},
            ${groupRow.duplicateGroupDescription}, ${groupRow.published}, ${groupRow.repositoryId},
            ${groupRow.companyId}, ${groupRow.createdBy}
          from ${findings} as "group_row" where ${groupRow.id} = ${root} or ${groupRow.duplicateOf} = ${root} offset 0)
          as "group_member"
        where ${visibleFindingsConditionOf(v, groupMember)}) end)`.as('duplicate_group'),
  };
}

/**
 * `offset 0` in the text: Drizzle leaves out an offset of the number 0, and an offset placeholder
 * would make the planner estimate generic plans apart from custom ones.
 */
const OFFSET_ZERO = rowCountInText(0);

/** The findings of the ids of the placeholder `ids` (filed on a repository). */
const OF_THE_IDS = sql`${findings.id} = any(${sql.placeholder('ids')}::uuid[]) and ${findings.repositoryId} is not null`;

/*
 * The rows of the payload statement: `findings` of the ids with their bodies, each column computed
 * once: the outer selection names some of them more than once, and the planner would put their
 * expressions in its place, computing them again. An `offset 0` keeps it from doing so
 * ({@link OFFSET_ZERO}).
 */
const readerRows = (db: Db) => {
  const v = accessPlaceholders();
  return db
    .select(readerColumns(v))
    .from(findings)
    .leftJoin(findingBodies, eq(findingBodies.findingId, findings.id))
    .leftJoin(
      readMarker,
      sql`${readMarker.findingId} = ${findings.id} and ${readMarker.userId} = ${v.userId}`,
    )
    .where(OF_THE_IDS)
    .offset(OFFSET_ZERO)
    .as('payload');
};
/**
 * The reader's statement: {@link readerColumns} as the answer writes them, the duplicate group's
 * three parts taken out of their array once each.
 */
function prepareReaderSelect(db: Db) {
  const p = readerRows(db);
  const fields = {
    id: p.id,
    body: p.body,
    duplicateOf: p.duplicateOf,
    note: p.note,
    hasUnread: p.hasUnread,
    unread: p.unread,
    lastCommentAt: p.lastCommentAt,
    readsAsReviewer: p.readsAsReviewer,
    rootRef: sql<FindingRef | null>`${p.group}[1]`,
    duplicateRefs: sql<FindingRef[] | null>`${p.group}[2]`,
    groupDescription: sql<string | null>`${p.group}[3]`,
  };
  return { fields, query: db.select(fields).from(p) };
}
type ReaderRow = { [K in keyof ReturnType<typeof prepareReaderSelect>['fields']]: unknown };

/** The body as `finding_body_source` writes it: the shared fields and both label lists. */
type SharedBody = Omit<Finding, ReaderField> & { labels: Label[]; reviewerLabels: Label[] };
/** The fields of a payload that depend on the reader. */
type ReaderField =
  | 'hasUnreadComments'
  | 'unreadCommentsNumber'
  | 'duplicateOf'
  | 'duplicates'
  | 'duplicateGroup'
  | 'labels'
  | 'lastCommentAt'
  | 'note';

/**
 * The payload statement, prepared once per connection. Its generic plan must stay the plan
 * PostgreSQL chooses after five executions, or every execution is planned again (some 3 ms):
 * `finding-payload.test.ts` checks.
 */
const readerSelects = keptStatements<ReturnType<typeof prepareReaderSelect>>();

/** How many ids the payload statement is given at the least (see {@link planIds}). */
const PLAN_IDS = 11;
const NO_FINDING = '00000000-0000-0000-0000-000000000000';

/**
 * The ids, made up to {@link PLAN_IDS} with an id no finding has. PostgreSQL's plan cache compares
 * the generic plan, whose cost it estimates for an array parameter of ten values, with the custom
 * plans of the actual arrays: for fewer than ten ids (one finding, the last page) the custom plan
 * always looks cheaper, and the statement was planned again at every execution (some 3 ms). The
 * index scan reads the repeated id once.
 */
function planIds(ids: string[]): string[] {
  return ids.length >= PLAN_IDS ? ids : [...ids, ...Array<string>(PLAN_IDS - ids.length).fill(NO_FINDING)];
}

/** A reference to a finding of a duplicate group, as the payload holds it. */
type FindingRef = { id: string; number: number; title: string };

/**
 * A finding's payload: its body with the reader's own fields — the unread comments, the duplicate
 * group as the reader sees it (the root when visible, then the visible duplicates), the labels the
 * reader may read, the last comment the reader may read, and the note.
 */
function payloadOf(r: ReaderRow): Finding {
  const { labels, reviewerLabels, ...shared } = r.body as SharedBody;
  const rootRef = r.rootRef as FindingRef | null;
  const duplicateRefs = r.duplicateRefs as FindingRef[] | null;
  const isDuplicate = r.duplicateOf !== null;
  return {
    ...shared,
    hasUnreadComments: r.hasUnread === true,
    unreadCommentsNumber: Number(r.unread),
    duplicateOf: isDuplicate ? rootRef : null,
    duplicates: !isDuplicate && duplicateRefs !== null ? duplicateRefs : [],
    duplicateGroup:
      rootRef !== null && duplicateRefs !== null
        ? { description: r.groupDescription as string | null, findings: [rootRef, ...duplicateRefs] }
        : null,
    labels: r.readsAsReviewer === true ? reviewerLabels : labels,
    lastCommentAt: r.lastCommentAt as string | null,
    note: r.note as string | null,
  };
}

/**
 * The API payloads of the given findings as the user sees them, in the order of `ids` (findings
 * that have no body, or are not filed on a repository, are left out). The caller has already
 * checked visibility of the findings themselves; related data (duplicates, labels, comments, the
 * note) is filtered here, by the access policy's predicates.
 */
export async function loadFindingPayloads(db: Db, access: FindingAccess, ids: string[]): Promise<Finding[]> {
  if (ids.length === 0) return [];
  const { fields, query } = readerSelects(db, '', () => prepareReaderSelect(db));
  const rows = (await plainRows(db, fields, query, {
    ...accessPlaceholderValues(access),
    ids: planIds(ids),
  })) as ReaderRow[];
  const byId = new Map<string, Finding>();
  for (const r of rows) if (r.body !== null) byId.set(r.id as string, payloadOf(r));
  return ids.map((id) => byId.get(id)).filter((payload): payload is Finding => payload !== undefined);
}
