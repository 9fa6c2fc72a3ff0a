import { and, asc, eq, inArray, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  type AccessValues,
  accessPlaceholders,
  accessPlaceholderValues,
  boundAccessValues,
  FINDING_HAS_COMMENTS,
  latestReadableByOthersAtOf,
  visibleCommentsConditionOf,
  visibleFindingsCondition,
  visibleFindingsConditionOf,
  visibleLastCommentAtOf,
} from '../../access/access.repo.ts';
import { can, type FindingAccess } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import {
  assetGroups,
  assets,
  commentReads,
  comments,
  companies,
  companyMembers,
  findingLabels,
  findingRelatedFiles,
  findings,
  labels,
  repositories,
  repositoryMembers,
  safeHarbors,
  users,
} from '../../db/schema/index.ts';
import { type Binder, INLINE_VALUES, isoMillis, keptStatements, plainRows } from '../../db/sql.ts';
import type { Label } from '../labels/labels.schemas.ts';
import type { Finding, FullUserSummary } from './findings.schemas.ts';

type Severity = Finding['severity'];

/**
 * The number of comments on the outer `findings` row that the user has not read: written by
 * someone else after the user's last read, not deleted, and readable by the user (access policy).
 * Counted on `comments` for the findings of one page only; zero unless {@link hasUnreadComments}.
 */
function unreadCommentsCountOf(v: AccessValues): SQL<number> {
  return sql<number>`(case when ${hasUnreadCommentsOf(v)} then (select count(*)::int from ${comments}
    where ${comments.findingId} = ${findings.id}
      and ${comments.authorId} is distinct from ${v.userId}
      and ${comments.deletedAt} is null
      and ${comments.createdAt} > coalesce((select ${commentReads.readAt} from ${commentReads}
        where ${commentReads.userId} = ${v.userId} and ${commentReads.findingId} = ${findings.id}), '-infinity'::timestamptz)
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

/** {@link hasUnreadComments} over {@link AccessValues}. */
function hasUnreadCommentsOf(v: AccessValues): SQL<boolean> {
  const latest = latestReadableByOthersAtOf(v);
  return sql<boolean>`(${FINDING_HAS_COMMENTS} and ${latest} is not null and not exists (select 1 from ${commentReads}
    where ${commentReads.userId} = ${v.userId} and ${commentReads.findingId} = ${findings.id}
      and ${commentReads.readAt} >= ${latest}))`;
}

const creator = alias(users, 'creator');
const creatorMember = alias(repositoryMembers, 'creator_member');
const assignee = alias(users, 'assignee');
const assigneeMember = alias(repositoryMembers, 'assignee_member');

/**
 * The user summary (author or assignee) of the payload row, with their repository membership, as
 * one JSON value in its API shape (null when there is no such user): one column to parse instead
 * of eleven. Times are written as `toISOString()` writes them ({@link isoMillis}).
 */
function userSummaryJson(
  user: typeof creator | typeof assignee,
  member: typeof creatorMember | typeof assigneeMember,
): SQL<FullUserSummary | null> {
  return sql<FullUserSummary | null>`case when ${user.id} is null then null else json_build_object(
    'userId', ${user.id}, 'name', ${user.name}, 'username', ${user.username}, 'avatar', ${user.avatar},
    'isBot', ${user.isBot}, 'createdAt', ${isoMillis(user.createdAt)}, 'teamId', ${member.teamId},
    'pingsLeft', ${member.pingsLeft}, 'reputation', ${user.reputation},
    'disabledAt', ${isoMillis(user.disabledAt)}, 'deletedFromRepoAt', ${isoMillis(member.deletedAt)}) end`;
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

/** A related file of a finding as the hydration statement aggregates it. */
interface RelatedFileJson {
  id: string;
  path: string;
  startLine: number | null;
  endLine: number | null;
  language: string | null;
  relevantContent: string | null;
}

/** A label of a finding as the hydration statement aggregates it (`archivedAt` as JSON text). */
interface LabelJson {
  id: string;
  name: string;
  isSystem: boolean;
  reviewerRead: boolean;
  reviewerUse: boolean;
  description: string;
  archivedAt: string | null;
}

/** A visible member (root or duplicate) of a finding's duplicate group. */
interface GroupMemberJson {
  id: string;
  number: number | null;
  title: string;
  duplicateOf: string | null;
  description: string | null;
}

type SafeHarborAsset = (typeof safeHarbors.$inferSelect)['assets'][number];

/** The repository and company of a finding as the payload statement reads them. */
interface PlaceJson {
  repositoryName: string;
  allowedSeverities: Severity[];
  companyHandle: string;
}

/** Finding rows of the duplicate group of the outer one: looked up, then tested for visibility. */
const groupRow = alias(findings, 'group_row');
const groupMember = alias(findings, 'group_member');

/**
 * The columns of a finding payload, flat (run by {@link plainRows}, timestamps formatted by
 * PostgreSQL), with the user's access sets as placeholders (see {@link accessPlaceholders}).
 */
function payloadColumns(v: AccessValues) {
  const root = sql`coalesce(${findings.duplicateOf}, ${findings.id})`;
  return {
    id: findings.id,
    number: findings.number,
    attributedTo: findings.attributedTo,
    title: findings.title,
    description: findings.description,
    createdAt: isoMillis<string>(findings.createdAt),
    lastUpdatedAt: isoMillis<string>(findings.lastUpdatedAt),
    locked: findings.locked,
    reward: sql<string | null>`${findings.reward}::text`,
    fixedBy: findings.fixedBy,
    duplicateOf: findings.duplicateOf,
    category: findings.category,
    assetGroupId: findings.assetGroupId,
    safeHarborAssetIds: findings.safeHarborAssetIds,
    note: findings.note,
    paymentId: findings.paymentId,
    status: findings.status,
    severity: findings.severity,
    repositoryId: findings.repositoryId,
    companyId: findings.companyId,
    // The repository and company by their primary keys, once per row: as joins, the generic plan
    // (which expects ten ids) hashed every repository of the database for each page.
    place: sql<PlaceJson | null>`(select json_build_object('repositoryName', ${repositories.name},
        'allowedSeverities', ${repositories.allowedSeverities}, 'companyHandle', ${companies.handle})
        from ${repositories} inner join ${companies} on ${companies.id} = ${findings.companyId}
        where ${repositories.id} = ${findings.repositoryId})`,
    createdBy: userSummaryJson(creator, creatorMember),
    assignedTo: userSummaryJson(assignee, assigneeMember),
    hasUnread: hasUnreadCommentsOf(v),
    unread: unreadCommentsCountOf(v),
    lastCommentAt: isoMillis(visibleLastCommentAtOf(v)),
    files: sql<RelatedFileJson[] | null>`(select json_agg(json_build_object('id', ${findingRelatedFiles.id},
        'path', ${findingRelatedFiles.path}, 'startLine', ${findingRelatedFiles.startLine},
        'endLine', ${findingRelatedFiles.endLine}, 'language', ${findingRelatedFiles.language},
        'relevantContent', ${findingRelatedFiles.relevantContent})
        order by ${findingRelatedFiles.path}, ${findingRelatedFiles.startLine}, ${findingRelatedFiles.id})
        from ${findingRelatedFiles} where ${findingRelatedFiles.findingId} = ${findings.id})`,
    labels: sql<
      LabelJson[] | null
    >`(select json_agg(json_build_object('id', ${labels.id}, 'name', ${labels.name},
        'isSystem', ${labels.isSystem}, 'reviewerRead', ${labels.reviewerRead}, 'reviewerUse', ${labels.reviewerUse},
        'description', ${labels.description}, 'archivedAt', ${labels.archivedAt}) order by ${labels.name})
        from ${findingLabels} inner join ${labels} on ${labels.id} = ${findingLabels.labelId}
        where ${findingLabels.findingId} = ${findings.id})`,
    // The root and the duplicates of the row's group, limited to what the user may see. The
    // group is looked up first (`offset 0` keeps the visibility test out of that lookup): the
    // planner would otherwise intersect it with every visible finding of the company.
    group: sql<GroupMemberJson[] | null>`(select json_agg(json_build_object('id', ${groupMember.id},
        'number', ${groupMember.number}, 'title', ${groupMember.title}, 'duplicateOf', ${groupMember.duplicateOf},
        'description', ${groupMember.duplicateGroupDescription}) order by ${groupMember.number})
        from (select ${groupRow.id}, ${groupRow.number}, ${groupRow.title}, ${groupRow.duplicateOf},
            ${groupRow.duplicateGroupDescription}, ${groupRow.published}, ${groupRow.repositoryId},
            ${groupRow.companyId}, ${groupRow.createdBy}
          from ${findings} as "group_row" where ${groupRow.id} = ${root} or ${groupRow.duplicateOf} = ${root} offset 0)
          as "group_member"
        where ${visibleFindingsConditionOf(v, groupMember)})`,
    harborAssets: sql<SafeHarborAsset[] | null>`(select ${safeHarbors.assets} from ${safeHarbors}
        where ${safeHarbors.repositoryId} = ${findings.repositoryId})`,
  };
}

/** The payload columns with the access placeholders: one selection, and so one statement text, for every user. */
const PAYLOAD_COLUMNS = payloadColumns(accessPlaceholders());
type PayloadRow = { [K in keyof typeof PAYLOAD_COLUMNS]: unknown } & {
  files: RelatedFileJson[] | null;
  labels: LabelJson[] | null;
  group: GroupMemberJson[] | null;
  harborAssets: SafeHarborAsset[] | null;
  place: PlaceJson | null;
  createdBy: FullUserSummary | null;
  assignedTo: FullUserSummary | null;
};

/**
 * The payload statement: `findings` of the ids of the placeholder `ids` with their repository,
 * company, author and assignee rows. Built once per database handle; its text is the same for
 * every user and page, so each connection prepares it once and reuses its generic plan.
 */
function preparePayloadSelect(db: Db) {
  return (
    db
      .select(PAYLOAD_COLUMNS)
      .from(findings)
      .leftJoin(creator, eq(creator.id, findings.createdBy))
      .leftJoin(
        creatorMember,
        and(
          eq(creatorMember.userId, findings.createdBy),
          eq(creatorMember.repositoryId, findings.repositoryId),
        ),
      )
      .leftJoin(assignee, eq(assignee.id, findings.assignedTo))
      .leftJoin(
        assigneeMember,
        and(
          eq(assigneeMember.userId, findings.assignedTo),
          eq(assigneeMember.repositoryId, findings.repositoryId),
        ),
      )
      // A finding is shown with its repository and company (a scanner draft has neither).
      .where(
        sql`${findings.id} = any(${sql.placeholder('ids')}::uuid[]) and ${findings.repositoryId} is not null`,
      )
  );
}
const payloadSelects = keptStatements<ReturnType<typeof preparePayloadSelect>>();

/**
 * Builds the API payloads of the given findings as the user sees them, in the order of `ids`.
 * One statement whatever the page size: the finding rows with their repository, company, author
 * and assignee, and per row its related files, labels, visible duplicate group and safe-harbor
 * assets as JSON aggregates (asset groups, rare, take three more). The caller has already
 * checked visibility of the findings themselves; related data (duplicates, labels, comments) is
 * filtered here.
 */
export async function loadFindingPayloads(db: Db, access: FindingAccess, ids: string[]): Promise<Finding[]> {
  if (ids.length === 0) return [];
  const query = payloadSelects(db, '', () => preparePayloadSelect(db));
  const rows = await plainRows(db, PAYLOAD_COLUMNS, query, {
    ...accessPlaceholderValues(access),
    ids,
  });
  const payloads = await toPayloads(db, access, rows);
  const byId = new Map(payloads.map((p) => [p.id, p]));
  return ids.map((id) => byId.get(id)).filter((f): f is Finding => f !== undefined);
}

/** Maps payload rows to their API shape, in the order of the rows. */
async function toPayloads(db: Db, access: FindingAccess, rows: PayloadRow[]): Promise<Finding[]> {
  const groupIds = [
    ...new Set(rows.map((r) => r.assetGroupId as string | null).filter((id): id is string => id !== null)),
  ];
  const groups = await loadAssetGroups(db, groupIds);
  const groupsBy = new Map(groups.map((g) => [g.id, g]));
  const ref = (m: { id: string; number: number | null; title: string }) => ({
    id: m.id,
    number: m.number ?? 0,
    title: m.title,
  });

  return rows.flatMap((row): Finding[] => {
    const place = row.place;
    if (place === null) return [];
    const id = row.id as string;
    const duplicateOf = row.duplicateOf as string | null;
    const assetGroupId = row.assetGroupId as string | null;
    const safeHarborAssetIds = row.safeHarborAssetIds as string[];
    const company = { id: row.companyId as string, handle: place.companyHandle };
    const repo = { id: row.repositoryId as string, companyId: company.id };
    const rootId = duplicateOf ?? id;
    const members = row.group ?? [];
    const root = members.find((m) => m.id === rootId);
    const groupDuplicates = members.filter((m) => m.duplicateOf === rootId);
    const harborAssets = row.harborAssets ?? [];
    const finding: Finding = {
      id,
      number: (row.number as number | null) ?? 0,
      attributedTo: row.attributedTo as string | null,
      title: row.title as string,
      description: row.description as string,
      relatedFiles: (row.files ?? []).map((file) => ({
        id: file.id,
        path: file.path,
        lines:
          file.startLine !== null && file.endLine !== null
            ? { start: file.startLine, end: file.endLine }
            : null,
        language: file.language,
        relevantContent: file.relevantContent,
      })),
      createdBy: row.createdBy,
      createdAt: row.createdAt as string,
      lastUpdatedAt: row.lastUpdatedAt as string,
      locked: row.locked as boolean,
      hasUnreadComments: row.hasUnread as boolean,
      unreadCommentsNumber: row.unread as number,
      repository: {
        id: repo.id,
        name: place.repositoryName,
        allowedSeverities: place.allowedSeverities,
      },
      company,
      reward: row.reward as string | null,
      fixedBy: row.fixedBy as string[],
      duplicateOf: duplicateOf && root ? ref(root) : null,
      duplicates: duplicateOf ? [] : groupDuplicates.map(ref),
      duplicateGroup:
        groupDuplicates.length > 0 && root
          ? { description: root.description, findings: [root, ...groupDuplicates].map(ref) }
          : null,
      category: row.category as string | null,
      labels: (row.labels ?? [])
        .filter((label) => can(access, 'label.read', { repository: repo, label }))
        .map(labelOfJson),
      assignedTo: row.assignedTo,
      assetGroup: assetGroupId ? (groupsBy.get(assetGroupId) ?? null) : null,
      lastCommentAt: row.lastCommentAt as string | null,
      safeHarborAssets: harborAssets.filter((a) => safeHarborAssetIds.includes(a.id)),
      note: can(access, 'finding.read_note', { repository: repo }) ? (row.note as string | null) : null,
      paymentId: row.paymentId as string | null,
      status: row.status as Finding['status'],
      severity: row.severity as Severity,
    };
    return [finding];
  });
}

/** A label aggregated as JSON, in its API shape (the time as `toISOString`, like {@link toLabel}). */
function labelOfJson(label: LabelJson): Label {
  return {
    id: label.id,
    name: label.name,
    isSystem: label.isSystem,
    reviewerRead: label.reviewerRead,
    reviewerUse: label.reviewerUse,
    description: label.description,
    archivedAt: label.archivedAt === null ? null : new Date(label.archivedAt).toISOString(),
  };
}

async function loadAssetGroups(db: Db, ids: string[]): Promise<Array<NonNullable<Finding['assetGroup']>>> {
  if (ids.length === 0) return [];
  const top = await db.select().from(assetGroups).where(inArray(assetGroups.id, ids));
  const subs = await db
    .select()
    .from(assetGroups)
    .where(and(isNotNull(assetGroups.parentId), inArray(assetGroups.parentId, ids)))
    .orderBy(asc(assetGroups.position), asc(assetGroups.name));
  const allIds = [...top.map((g) => g.id), ...subs.map((g) => g.id)];
  const assetRows = await db
    .select()
    .from(assets)
    .where(inArray(assets.assetGroupId, allIds))
    .orderBy(asc(assets.name));
  const assetsBy = groupBy(assetRows, (a) => a.assetGroupId);
  const toAsset = (a: typeof assets.$inferSelect) => ({
    id: a.id,
    name: a.name,
    description: a.description,
    reference: a.reference,
  });
  const subsBy = groupBy(subs, (s) => s.parentId as string);
  return top.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    outOfScope: g.outOfScope,
    rewards: g.rewards,
    assets: (assetsBy.get(g.id) ?? []).map(toAsset),
    subGroups: (subsBy.get(g.id) ?? []).map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      assets: (assetsBy.get(s.id) ?? []).map(toAsset),
    })),
  }));
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
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
