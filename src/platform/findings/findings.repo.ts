import { type AnyColumn, and, eq, inArray, isNull, or, type SQL, sql } from 'drizzle-orm';
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
  visibleFindingsCondition,
  visibleFindingsConditionOf,
  visibleLastCommentAtOf,
} from '../../access/access.repo.ts';
import type { FindingAccess, PingCandidate } from '../../access/policy.ts';
import { type Db, ownTransactionPerStatement } from '../../db/client.ts';
import {
  assetGroups,
  assets,
  commentReads,
  comments,
  companies,
  companyMembers,
  findingBodies,
  findingLabels,
  findingRelatedFiles,
  findings,
  labels,
  platformPermissions,
  repositories,
  repositoryMembers,
  safeHarbors,
  users,
} from '../../db/schema/index.ts';
import {
  type Binder,
  INLINE_VALUES,
  isoMillis,
  keptStatements,
  plainRows,
  rowCountInText,
} from '../../db/sql.ts';
import { compactJson } from '../../json.ts';
import type { Label } from '../labels/labels.schemas.ts';
import type { Finding, FullUserSummary } from './findings.schemas.ts';

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

const creator = alias(users, 'creator');
const creatorMember = alias(repositoryMembers, 'creator_member');
const assignee = alias(users, 'assignee');
const assigneeMember = alias(repositoryMembers, 'assignee_member');

/**
 * The user summary (author or assignee) of the finding, with their membership of its repository,
 * as one JSON value in its API shape (null when there is no such user): one column to parse
 * instead of eleven. Times are written as `toISOString()` writes them ({@link isoMillis}).
 */
function userSummaryJson(
  user: typeof creator | typeof assignee,
  member: typeof creatorMember | typeof assigneeMember,
  userId: AnyColumn,
): SQL<FullUserSummary | null> {
  const userAlias = sql.identifier(user === creator ? 'creator' : 'assignee');
  const memberAlias = sql.identifier(member === creatorMember ? 'creator_member' : 'assignee_member');
  return sql<FullUserSummary | null>`(select json_build_object(
    'userId', ${user.id}, 'name', ${user.name}, 'username', ${user.username}, 'avatar', ${user.avatar},
    'isBot', ${user.isBot}, 'createdAt', ${isoMillis(user.createdAt)}, 'teamId', ${member.teamId},
    'pingsLeft', ${member.pingsLeft}, 'reputation', ${user.reputation},
    'disabledAt', ${isoMillis(user.disabledAt)}, 'deletedFromRepoAt', ${isoMillis(member.deletedAt)})
    from ${users} as ${userAlias} left join ${repositoryMembers} as ${memberAlias}
      on ${member.userId} = ${user.id} and ${member.repositoryId} = ${findings.repositoryId}
    where ${user.id} = ${userId})`;
}

/** Maps a label row to its API shape. */
export function toLabel(row: typeof labels.$inferSelect): Label {
  return {
    id: row.id,
    name: row.name,
    isSystem: row.isSystem,
    reviewerRead: row.reviewerRead,
    reviewerUse: row.reviewerUse,
    description: row.description,
    archivedAt: row.archivedAt?.toISOString() ?? null,
  };
}

/** Finding rows of the duplicate group of the outer one: looked up, then tested for visibility. */
const groupRow = alias(findings, 'group_row');
const groupMember = alias(findings, 'group_member');
/** A duplicate of the outer finding: whether it is the root of a group at all. */
const duplicate = alias(findings, 'duplicate');
/** The asset group of a finding, its sub-groups, and the assets of each. */
const subGroup = alias(assetGroups, 'sub_group');
const groupAsset = alias(assets, 'group_asset');
const subAsset = alias(assets, 'sub_asset');

/**
 * The finding's two label lists (`Label[]`, by name) in one lookup, as an array of two JSON
 * values: all of its labels, and those reviewers may read. Both are kept with the body, and the
 * reader's statement picks one ({@link readerColumns}' `readsAsReviewer`): no per-row lookup of
 * labels for a reader.
 */
function labelListsJson(): SQL {
  const label = sql`json_build_object('id', ${labels.id}, 'name', ${labels.name},
      'isSystem', ${labels.isSystem}, 'reviewerRead', ${labels.reviewerRead}, 'reviewerUse', ${labels.reviewerUse},
      'description', ${labels.description}, 'archivedAt', ${isoMillis(labels.archivedAt)})`;
  return sql`(select array[coalesce(json_agg(${label} order by ${labels.name}, ${labels.id}), '[]'::json),
      coalesce(json_agg(${label} order by ${labels.name}, ${labels.id}) filter (where ${labels.reviewerRead}), '[]'::json)]
    from ${findingLabels} inner join ${labels} on ${labels.id} = ${findingLabels.labelId}
    where ${findingLabels.findingId} = ${findings.id})`;
}

/** A finding reference (`FindingRef`) of a row of the duplicate group. */
function findingRefJson(row: typeof groupMember): SQL {
  return sql`json_build_object('id', ${row.id}, 'number', coalesce(${row.number}, 0), 'title', ${row.title})`;
}

/** The assets of an asset group (`Asset[]`), by name. */
function assetsJson(asset: typeof groupAsset | typeof subAsset, aliasName: string, groupId: AnyColumn): SQL {
  return sql`coalesce((select json_agg(json_build_object('id', ${asset.id}, 'name', ${asset.name},
      'description', ${asset.description}, 'reference', ${asset.reference}) order by ${asset.name}, ${asset.id})
    from ${assets} as ${sql.identifier(aliasName)} where ${asset.assetGroupId} = ${groupId}), '[]'::json)`;
}

/**
 * The columns of a finding's payload that depend on the reader, with the user's access sets as
 * placeholders (see {@link accessPlaceholders}): what the user may not read (labels, the note,
 * members of the duplicate group, comments) is left out here, by the access policy's predicates.
 * With them, the finding's kept body: the part every reader sees alike ({@link sharedColumns}).
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
    // Which of the kept body's two label lists the user reads: a user who reads the finding as a
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
 * The columns of a finding's payload that every reader sees alike, each already in its API shape
 * as JSON where it is not a plain value, with the stamp of the finding's kept body as this
 * snapshot has it (see {@link keepFindingBodies}).
 */
function sharedColumns() {
  return {
    id: findings.id,
    stamp: sql<string | null>`${findingBodies.stamp}::text`.as('stamp'),
    number: findings.number,
    attributedTo: findings.attributedTo,
    title: findings.title,
    description: findings.description,
    createdAt: isoMillis<string>(findings.createdAt).as('created_at_text'),
    lastUpdatedAt: isoMillis<string>(findings.lastUpdatedAt).as('last_updated_at_text'),
    locked: findings.locked,
    reward: sql<string | null>`${findings.reward}::text`.as('reward_text'),
    fixedBy: findings.fixedBy,
    category: findings.category,
    paymentId: findings.paymentId,
    status: findings.status,
    severity: findings.severity,
    // The repository and the company (`{repository, company}`, each in its API shape) by their
    // primary keys, once per row: as joins, the generic plan (which expects ten ids) hashed every
    // repository of the database for each page. An array of JSON values, not one JSON value, so
    // that each is taken out without parsing it.
    place:
      sql<unknown>`(select array[json_build_object('id', ${repositories.id}, 'name', ${repositories.name},
          'allowedSeverities', ${repositories.allowedSeverities}),
        json_build_object('id', ${companies.id}, 'handle', ${companies.handle})]
        from ${repositories} inner join ${companies} on ${companies.id} = ${findings.companyId}
        where ${repositories.id} = ${findings.repositoryId})`.as('place'),
    createdBy: userSummaryJson(creator, creatorMember, findings.createdBy).as('created_by_json'),
    assignedTo: userSummaryJson(assignee, assigneeMember, findings.assignedTo).as('assigned_to_json'),
    files: sql<unknown>`coalesce((select json_agg(json_build_object('id', ${findingRelatedFiles.id},
        'path', ${findingRelatedFiles.path},
        'lines', case when ${findingRelatedFiles.startLine} is not null and ${findingRelatedFiles.endLine} is not null
          then json_build_object('start', ${findingRelatedFiles.startLine}, 'end', ${findingRelatedFiles.endLine}) end,
        'language', ${findingRelatedFiles.language}, 'relevantContent', ${findingRelatedFiles.relevantContent},
        'commit', ${findingRelatedFiles.commit})
        order by ${findingRelatedFiles.path}, ${findingRelatedFiles.startLine}, ${findingRelatedFiles.id})
        from ${findingRelatedFiles} where ${findingRelatedFiles.findingId} = ${findings.id}), '[]'::json)`.as(
      'files',
    ),
    labelLists: sql<unknown>`${labelListsJson()}`.as('label_lists'),
    // The safe-harbor assets of the repository that the finding names, in the safe harbor's order.
    harborAssets:
      sql<unknown>`coalesce((select json_agg(json_build_object('id', asset->>'id', 'name', asset->>'name',
          'description', asset->>'description') order by position)
        from ${safeHarbors}, jsonb_array_elements(${safeHarbors.assets}) with ordinality as harbor_asset(asset, position)
        where ${safeHarbors.repositoryId} = ${findings.repositoryId}
          and asset->>'id' = any(${findings.safeHarborAssetIds}::text[])), '[]'::json)`.as('harbor_assets'),
    // The asset group (rare) with its sub-groups (by position and name) and the assets of each.
    assetGroup: sql<unknown>`(case when ${findings.assetGroupId} is null then null else
        (select json_build_object('id', ${assetGroups.id}, 'name', ${assetGroups.name},
          'description', ${assetGroups.description}, 'outOfScope', ${assetGroups.outOfScope},
          'rewards', coalesce((select json_agg(json_build_object('minReward', reward->>'minReward',
              'maxReward', reward->>'maxReward') order by position)
            from jsonb_array_elements(${assetGroups.rewards}) with ordinality as group_reward(reward, position)), '[]'::json),
          'assets', ${assetsJson(groupAsset, 'group_asset', assetGroups.id)},
          'subGroups', coalesce((select json_agg(json_build_object('id', ${subGroup.id}, 'name', ${subGroup.name},
              'description', ${subGroup.description}, 'assets', ${assetsJson(subAsset, 'sub_asset', subGroup.id)})
              order by ${subGroup.position}, ${subGroup.name}, ${subGroup.id})
            from ${assetGroups} as "sub_group" where ${subGroup.parentId} = ${assetGroups.id}), '[]'::json))
        from ${assetGroups} where ${assetGroups.id} = ${findings.assetGroupId}) end)`.as('asset_group'),
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
 * The rows of each payload statement: `findings` of the ids with their kept bodies, each column
 * computed once: the outer selection names some of them more than once, and the planner would put
 * their expressions in its place, computing them again. An `offset 0` keeps it from doing so
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
const sharedRows = (db: Db) =>
  db
    .select(sharedColumns())
    .from(findings)
    .leftJoin(findingBodies, eq(findingBodies.findingId, findings.id))
    .where(OF_THE_IDS)
    .offset(OFFSET_ZERO)
    .as('shared');

/** A column of the payload statement whose value is JSON, taken as its text (see {@link findingBody}). */
type JsonText = string;

/**
 * The reader's statement: {@link readerColumns} as the answer writes them, the duplicate group's
 * three parts taken out of their array once each. JSON values arrive as their text, unparsed
 * ({@link plainRows}' `jsonAsText`).
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
    rootRef: sql<JsonText | null>`${p.group}[1]`,
    duplicateRefs: sql<JsonText | null>`${p.group}[2]`,
    groupDescription: sql<JsonText | null>`${p.group}[3]`,
  };
  return { fields, query: db.select(fields).from(p) };
}
type ReaderRow = { [K in keyof ReturnType<typeof prepareReaderSelect>['fields']]: unknown };

/** The shared statement: {@link sharedColumns}, the place's two parts taken out of their array. */
function prepareSharedSelect(db: Db) {
  const p = sharedRows(db);
  const fields = {
    id: p.id,
    stamp: p.stamp,
    number: p.number,
    attributedTo: p.attributedTo,
    title: p.title,
    description: p.description,
    files: p.files,
    createdBy: p.createdBy,
    createdAt: p.createdAt,
    lastUpdatedAt: p.lastUpdatedAt,
    locked: p.locked,
    repository: sql<JsonText>`${p.place}[1]`,
    company: sql<JsonText>`${p.place}[2]`,
    reward: p.reward,
    fixedBy: sql<JsonText>`to_json(${p.fixedBy})`,
    category: p.category,
    assignedTo: p.assignedTo,
    assetGroup: p.assetGroup,
    harborAssets: p.harborAssets,
    labels: sql<JsonText>`${p.labelLists}[1]`,
    reviewerLabels: sql<JsonText>`${p.labelLists}[2]`,
    paymentId: p.paymentId,
    status: p.status,
    severity: p.severity,
  };
  return { fields, query: db.select(fields).from(p) };
}
type SharedRow = { [K in keyof ReturnType<typeof prepareSharedSelect>['fields']]: unknown };

/** A JSON value of the statement, as its text without PostgreSQL's spaces (`null` for SQL null). */
const jsonText = (value: unknown): string => (value === null ? 'null' : compactJson(value as string));
const str = (value: unknown): string => JSON.stringify(value);

/**
 * Between the pieces of a kept body: a character JSON text never holds unescaped, so the body
 * splits back into its pieces without being parsed.
 */
const PIECE_SEPARATOR = '\u0001';
/** How many pieces a kept body has ({@link sharedPieces}). */
const PIECES = 8;

/**
 * The part of a finding's payload that every reader sees alike, as the six pieces of its JSON
 * text that come between the reader's own fields ({@link findingBody}), in the `Finding` schema's
 * order, then its two label lists (`labels`: all of them, and those reviewers may read), of which
 * the reader's fields name one. Its JSON parts (files, users, the asset group…) are put in as
 * PostgreSQL wrote them.
 */
function sharedPieces(r: SharedRow): string[] {
  return [
    `{"id":${str(r.id)},"number":${(r.number as number | null) ?? 0},"attributedTo":${str(r.attributedTo)},` +
      `"title":${str(r.title)},"description":${str(r.description)},"relatedFiles":${jsonText(r.files)},` +
      `"createdBy":${jsonText(r.createdBy)},"createdAt":${str(r.createdAt)},"lastUpdatedAt":${str(r.lastUpdatedAt)},` +
      `"locked":${r.locked === true},`,
    `"repository":${jsonText(r.repository)},"company":${jsonText(r.company)},"reward":${str(r.reward)},` +
      `"fixedBy":${jsonText(r.fixedBy)},`,
    `"category":${str(r.category)},`,
    `"assignedTo":${jsonText(r.assignedTo)},"assetGroup":${jsonText(r.assetGroup)},`,
    `"safeHarborAssets":${jsonText(r.harborAssets)},`,
    `"paymentId":${str(r.paymentId)},"status":${str(r.status)},"severity":${str(r.severity)}}`,
    jsonText(r.labels),
    jsonText(r.reviewerLabels),
  ];
}

/**
 * The pieces of a kept body ({@link sharedPieces}); undefined for a body of another layout (one
 * kept by a process of another version while both ran), which is then computed anew.
 */
function keptPieces(body: string): string[] | undefined {
  const pieces = body.split(PIECE_SEPARATOR);
  return pieces.length === PIECES ? pieces : undefined;
}

/**
 * A finding's payload as the API sends it: the `Finding` schema's fields in its order, the shared
 * pieces ({@link sharedPieces}) with the reader's own fields between them — the unread comments,
 * the duplicate group as the reader sees it (the root when visible, then the visible duplicates),
 * the labels the reader may read, the last comment the reader may read, and the note — so that a
 * page of findings is neither parsed into objects nor serialized again.
 */
function findingBody(shared: string[], r: ReaderRow): string {
  const rootRef = r.rootRef === null ? null : jsonText(r.rootRef);
  const duplicateRefs = r.duplicateRefs === null ? null : jsonText(r.duplicateRefs);
  const isDuplicate = r.duplicateOf !== null;
  const group =
    rootRef !== null && duplicateRefs !== null
      ? `{"description":${jsonText(r.groupDescription)},"findings":[${rootRef},${duplicateRefs.slice(1, -1)}]}`
      : 'null';
  return (
    `${shared[0]}"hasUnreadComments":${r.hasUnread === true},"unreadCommentsNumber":${Number(r.unread)},` +
    `${shared[1]}"duplicateOf":${isDuplicate ? (rootRef ?? 'null') : 'null'},` +
    `"duplicates":${!isDuplicate && duplicateRefs !== null ? duplicateRefs : '[]'},"duplicateGroup":${group},` +
    `${shared[2]}"labels":${r.readsAsReviewer === true ? shared[7] : shared[6]},${shared[3]}"lastCommentAt":${str(r.lastCommentAt)},` +
    `${shared[4]}"note":${str(r.note)},${shared[5]}`
  );
}

/**
 * The fields of a reader with none of their own: nothing unread, no duplicate group, every label,
 * no comment, no note.
 */
const NO_READER_FIELDS: Omit<ReaderRow, 'id' | 'body'> = {
  duplicateOf: null,
  note: null,
  hasUnread: false,
  unread: 0,
  lastCommentAt: null,
  readsAsReviewer: false,
  rootRef: null,
  duplicateRefs: null,
  groupDescription: null,
};

/**
 * A kept body as a reader with no fields of their own reads it ({@link NO_READER_FIELDS}); undefined
 * for a body of another layout. Ceiling (c) of `bench/api.ts` answers its pages with it: the least
 * a page read from the database costs, in the payload's own layout.
 */
export function findingOfKeptBody(body: string): string | undefined {
  const pieces = keptPieces(body);
  return pieces && findingBody(pieces, { id: null, body, ...NO_READER_FIELDS });
}

/**
 * The two payload statements, each prepared once per connection. Their generic plans must stay
 * the plans PostgreSQL chooses after five executions, or every execution is planned again (some
 * 3 ms): `finding-payload.test.ts` checks.
 */
const readerSelects = keptStatements<ReturnType<typeof prepareReaderSelect>>();
const sharedSelects = keptStatements<ReturnType<typeof prepareSharedSelect>>();

/** How many ids the payload statements are given at the least (see {@link planIds}). */
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

/** A body computed by a reader, to be kept where the stamp read with it is still the row's. */
interface BodyToKeep {
  id: string;
  /** The stamp as this snapshot had it (a bigint, as its text). */
  stamp: string;
  body: string;
}

/**
 * Writes computed bodies back to `finding_bodies`: only where the row still has the stamp read in
 * the snapshot the body was computed from and no body, or one of another layout (a write since has
 * moved the stamp on, so a body computed from an older snapshot is not kept), and only rows no other transaction holds
 * (`skip locked`): a reader never waits here, and what it skips is computed again by a later one.
 * The bodies go as one JSON parameter (one `JSON.stringify`, not an array literal escaped body by
 * body). Outside a transaction the statement commits without waiting for its WAL to reach the
 * disk: a write-back lost in a crash only means the body is computed again; inside one (a write's
 * answer) the transaction's own commit decides, untouched.
 */
async function keepFindingBodies(db: Db, keep: BodyToKeep[]): Promise<void> {
  const ids = sql.param(keep.map((k) => k.id));
  const asyncCommit = ownTransactionPerStatement(db)
    ? sql`, (select set_config('synchronous_commit', 'off', true)) as async_commit`
    : sql``;
  await db.execute(sql`update ${findingBodies} set body = kept.body
    from json_to_recordset(${JSON.stringify(keep)}::json) as kept(id uuid, stamp bigint, body text)${asyncCommit}
    where ${findingBodies.findingId} = kept.id and ${findingBodies.stamp} = kept.stamp
      and (${findingBodies.body} is null
        or length(${findingBodies.body}) - length(replace(${findingBodies.body}, ${PIECE_SEPARATOR}, '')) <> ${PIECES - 1})
      and ${findingBodies.findingId} in (select "finding_id" from ${findingBodies}
        where "finding_id" = any(${ids}::uuid[]) for update skip locked)`);
}

/**
 * The parts every reader sees alike of the findings whose bodies are not kept, computed by the
 * shared statement (by id), and written back to be kept ({@link keepFindingBodies}).
 */
async function computeSharedPieces(db: Db, ids: string[]): Promise<Map<string, string[]>> {
  const { fields, query } = sharedSelects(db, '', () => prepareSharedSelect(db));
  const rows = (await plainRows(
    db,
    fields,
    query,
    { ids: planIds(ids) },
    { jsonAsText: true },
  )) as SharedRow[];
  const keep: BodyToKeep[] = [];
  const pieces = new Map<string, string[]>();
  for (const r of rows) {
    const shared = sharedPieces(r);
    pieces.set(r.id as string, shared);
    if (r.stamp !== null) {
      keep.push({ id: r.id as string, stamp: r.stamp as string, body: shared.join(PIECE_SEPARATOR) });
    }
  }
  if (keep.length > 0) await keepFindingBodies(db, keep);
  return pieces;
}

/**
 * The API payloads of the given findings as the user sees them, as JSON texts ({@link
 * findingBody}), in the order of `ids` (findings that have no payload row are left out). The
 * caller has already checked visibility of the findings themselves; related data (duplicates,
 * labels, comments, the note) is filtered here.
 *
 * One statement reads what depends on the reader with each finding's kept body, the part every
 * reader sees alike (`finding_bodies`); its text is the same for every user and page. Where a body
 * is missing (a new finding, or a write since cleared it: the triggers of migration 0025), a
 * second statement computes that part ({@link computeSharedPieces}) and it is kept for the readers
 * after. A change of what a kept body holds or how it is pieced must come with a migration that
 * clears the bodies.
 */
export async function loadFindingBodies(db: Db, access: FindingAccess, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { fields, query } = readerSelects(db, '', () => prepareReaderSelect(db));
  const rows = (await plainRows(
    db,
    fields,
    query,
    { ...accessPlaceholderValues(access), ids: planIds(ids) },
    { jsonAsText: true },
  )) as ReaderRow[];
  const kept = new Map<string, string[]>();
  const missing: string[] = [];
  for (const r of rows) {
    const pieces = r.body === null ? undefined : keptPieces(r.body as string);
    if (pieces) kept.set(r.id as string, pieces);
    else missing.push(r.id as string);
  }
  const computed = missing.length > 0 ? await computeSharedPieces(db, missing) : undefined;
  const byId = new Map<string, string>();
  for (const r of rows) {
    const id = r.id as string;
    const shared = kept.get(id) ?? computed?.get(id);
    // A finding removed between the two statements is left out, as one removed before.
    if (shared) byId.set(id, findingBody(shared, r));
  }
  return ids.map((id) => byId.get(id)).filter((body): body is string => body !== undefined);
}

/** {@link loadFindingBodies} as objects (one finding's answer to a write or a read). */
export async function loadFindingPayloads(db: Db, access: FindingAccess, ids: string[]): Promise<Finding[]> {
  return (await loadFindingBodies(db, access, ids)).map((body) => JSON.parse(body) as Finding);
}

/**
 * Allocates the next finding number of a repository. The `UPDATE … RETURNING` takes the
 * repository row lock until the transaction ends, so concurrent creators queue here and a rolled
 * back creation gives its number back: numbers have neither gaps nor duplicates.
 */
export async function allocateFindingNumber(db: Db, repositoryId: string): Promise<number> {
  const [row] = await db
    .update(repositories)
    .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
    .where(eq(repositories.id, repositoryId))
    .returning({ number: repositories.findingSeq });
  if (!row) throw new Error(`repository ${repositoryId} vanished while allocating a finding number`);
  return row.number;
}

export type FindingRow = typeof findings.$inferSelect;
export type LabelRow = typeof labels.$inferSelect;

/** A finding of a repository named by id or by its per-repository number. */
export type FindingRef = { id: string } | { number: number };

/** The columns a change of a finding may set (besides its last update time). */
export type FindingChange = Partial<
  Pick<
    typeof findings.$inferInsert,
    'status' | 'severity' | 'assignedTo' | 'duplicateOf' | 'duplicateGroupDescription'
  >
>;

/** SQL of the finding writes: filing, status, severity, assignee, labels, duplicates. */
export function findingsRepo(db: Db) {
  return {
    /** The finding of the repository the user may see, locked for the transaction when asked. */
    async findVisible(
      access: FindingAccess,
      repositoryId: string,
      ref: FindingRef,
      lock = false,
    ): Promise<FindingRow | null> {
      const byRef = 'id' in ref ? eq(findings.id, ref.id) : eq(findings.number, ref.number);
      const query = db
        .select()
        .from(findings)
        .where(and(eq(findings.repositoryId, repositoryId), byRef, visibleFindingsCondition(access)));
      const [row] = lock ? await query.for('update') : await query;
      return row ?? null;
    },

    /** The labels among `ids` usable on the repository: its own and its company's shared ones. */
    async usableLabels(repositoryId: string, companyId: string, ids: string[]): Promise<LabelRow[]> {
      if (ids.length === 0) return [];
      return db
        .select()
        .from(labels)
        .where(
          and(
            inArray(labels.id, ids),
            or(
              eq(labels.repositoryId, repositoryId),
              and(isNull(labels.repositoryId), eq(labels.companyId, companyId)),
            ),
          ),
        );
    },

    async labelsByIds(ids: string[]): Promise<LabelRow[]> {
      if (ids.length === 0) return [];
      return db.select().from(labels).where(inArray(labels.id, ids));
    },

    async assetGroupInRepository(assetGroupId: string, repositoryId: string): Promise<boolean> {
      const [group] = await db
        .select({ id: assetGroups.id })
        .from(assetGroups)
        .where(and(eq(assetGroups.id, assetGroupId), eq(assetGroups.repositoryId, repositoryId)));
      return group !== undefined;
    },

    /** The team the user is a repository member through, or null. */
    async memberTeam(repositoryId: string, userId: string): Promise<string | null> {
      const [row] = await db
        .select({ teamId: repositoryMembers.teamId })
        .from(repositoryMembers)
        .where(and(eq(repositoryMembers.repositoryId, repositoryId), eq(repositoryMembers.userId, userId)));
      return row?.teamId ?? null;
    },

    /** Inserts a finding with its related files and labels; returns its id. */
    async insert(
      values: typeof findings.$inferInsert,
      relatedFiles: Array<Omit<typeof findingRelatedFiles.$inferInsert, 'findingId'>>,
      labelIds: string[],
    ): Promise<string> {
      const [row] = await db.insert(findings).values(values).returning({ id: findings.id });
      const id = row!.id;
      if (relatedFiles.length > 0) {
        await db.insert(findingRelatedFiles).values(relatedFiles.map((file) => ({ ...file, findingId: id })));
      }
      if (labelIds.length > 0) {
        await db.insert(findingLabels).values(labelIds.map((labelId) => ({ findingId: id, labelId })));
      }
      return id;
    },

    /**
     * Writes one change of a finding — its new values (none for a change of its labels) and its
     * last update time — in one statement. Every change of a finding's state goes through here.
     */
    async writeChange(findingId: string, values: FindingChange = {}): Promise<void> {
      await db
        .update(findings)
        .set({ ...values, lastUpdatedAt: sql`now()` })
        .where(eq(findings.id, findingId));
    },

    /** Moves the duplicates of one finding to another root (and marks them updated). */
    async moveDuplicates(fromRootId: string, toRootId: string): Promise<void> {
      await db
        .update(findings)
        .set({ duplicateOf: toRootId, lastUpdatedAt: sql`now()` })
        .where(eq(findings.duplicateOf, fromRootId));
    },

    /**
     * The user of that username (case-insensitive), and whether they are an active member of the
     * repository or a user of its company; null when there is no such user.
     */
    async assignee(
      repositoryId: string,
      companyId: string,
      username: string,
    ): Promise<{ id: string; member: boolean } | null> {
      const [user] = await db
        .select({
          id: users.id,
          member: sql<boolean>`exists (select 1 from ${repositoryMembers} where ${repositoryMembers.userId} = ${users.id}
            and ${repositoryMembers.repositoryId} = ${repositoryId} and ${repositoryMembers.deletedAt} is null)
            or exists (select 1 from ${companyMembers} where ${companyMembers.userId} = ${users.id}
            and ${companyMembers.companyId} = ${companyId} and ${companyMembers.disabledAt} is null)`,
        })
        .from(users)
        .where(sql`lower(${users.username}) = lower(${username})`);
      return user ?? null;
    },

    /**
     * The people around a finding: active members of its repository and joined, enabled users of
     * its company (one username only when `username` is given), with what the access policy needs
     * to decide whether each sees the finding (`candidateSeesFinding`). Platform-wide readers who
     * are neither are not part of it: they are not assigned nor named in a repository's comments.
     */
    async audience(
      repository: { id: string; companyId: string; showAllFindings: boolean },
      finding: { createdBy: string | null },
      username?: string,
    ): Promise<Array<PingCandidate & { username: string; name: string }>> {
      const isCompanyUser = sql<boolean>`exists (select 1 from ${companyMembers}
        where ${companyMembers.userId} = ${users.id} and ${companyMembers.companyId} = ${repository.companyId}
          and ${companyMembers.joinedAt} is not null and ${companyMembers.disabledAt} is null)`;
      const rows = await db
        .select({
          userId: users.id,
          username: users.username,
          name: users.name,
          companyUser: isCompanyUser,
          repositoryRole: repositoryMembers.role,
          platformAdmin: sql<boolean>`exists (select 1 from ${platformPermissions} where ${platformPermissions.userId} = ${users.id} and ${platformPermissions.permission} = 'admin')`,
          readAll: sql<boolean>`exists (select 1 from ${platformPermissions} where ${platformPermissions.userId} = ${users.id} and ${platformPermissions.permission} in ('admin', 'read_all_companies'))`,
          active: sql<boolean>`(${users.disabledAt} is null and ${users.deletedAt} is null)`,
        })
        .from(users)
        .leftJoin(
          repositoryMembers,
          and(
            eq(repositoryMembers.userId, users.id),
            eq(repositoryMembers.repositoryId, repository.id),
            isNull(repositoryMembers.deletedAt),
          ),
        )
        .where(
          and(
            or(sql`${repositoryMembers.userId} is not null`, isCompanyUser),
            username === undefined ? undefined : sql`lower(${users.username}) = lower(${username})`,
          ),
        )
        .orderBy(sql`lower(${users.username})`);
      return rows.map((r) => ({
        ...r,
        showAllFindings: repository.showAllFindings,
        isFindingAuthor: finding.createdBy === r.userId,
      }));
    },

    /** Adds labels (present ones are skipped); the number added. */
    async addLabels(findingId: string, labelIds: string[]): Promise<number> {
      if (labelIds.length === 0) return 0;
      const inserted = await db
        .insert(findingLabels)
        .values(labelIds.map((labelId) => ({ findingId, labelId })))
        .onConflictDoNothing()
        .returning();
      return inserted.length;
    },

    /** Removes labels; the number removed. */
    async removeLabels(findingId: string, labelIds: string[]): Promise<number> {
      if (labelIds.length === 0) return 0;
      const deleted = await db
        .delete(findingLabels)
        .where(and(eq(findingLabels.findingId, findingId), inArray(findingLabels.labelId, labelIds)))
        .returning();
      return deleted.length;
    },
  };
}
