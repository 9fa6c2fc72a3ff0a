import { and, asc, eq, inArray, isNotNull, isNull, or, type SQL, sql } from 'drizzle-orm';
import { visibleCommentsCondition } from '../../access/access.repo.ts';
import type { FindingAccess, PingCandidate } from '../../access/policy.ts';
import type { CommentVisibility } from '../../access/rules.ts';
import type { Db } from '../../db/client.ts';
import type { CommentPingPayload } from '../../db/schema/index.ts';
import {
  commentReads,
  comments,
  companyMembers,
  companyWebhooks,
  findings,
  notificationDeliveries,
  notifications,
  platformPermissions,
  repositories,
  repositoryMembers,
  users,
} from '../../db/schema/index.ts';

export type CommentRow = typeof comments.$inferSelect;

/**
 * Per visibility, the columns of `findings` that keep the last comment of that visibility: its
 * time, its author, and the time of the last one by anyone else (see latestReadableByOthersAt).
 */
const COMMENT_STATE = {
  public: { at: 'last_comment_at', author: 'last_comment_author_id', other: 'last_comment_other_at' },
  private: {
    at: 'last_private_comment_at',
    author: 'last_private_comment_author_id',
    other: 'last_private_comment_other_at',
  },
  internal: {
    at: 'last_internal_comment_at',
    author: 'last_internal_comment_author_id',
    other: 'last_internal_comment_other_at',
  },
  hidden: {
    at: 'last_hidden_comment_at',
    author: 'last_hidden_comment_author_id',
    other: 'last_hidden_comment_other_at',
  },
} as const;

/**
 * Recomputes the comment columns of findings from their comments that are not deleted: of the
 * findings matching `scope` (SQL over `f`), every one. The migration that added the columns runs
 * the same statement over all findings.
 */
export function refreshCommentStateSql(scope: SQL): SQL {
  const visibilities = Object.keys(COMMENT_STATE) as CommentVisibility[];
  const sets = visibilities.flatMap((v) => {
    const c = COMMENT_STATE[v];
    return [
      sql.raw(`${c.at} = p.${v}_at`),
      sql.raw(`${c.author} = p.${v}_author`),
      sql.raw(`${c.other} = p.${v}_other`),
    ];
  });
  const pivots = visibilities.flatMap((v) => [
    sql.raw(`max(o.last_at) filter (where o.visibility = '${v}') as ${v}_at`),
    sql.raw(`(array_agg(o.last_author) filter (where o.visibility = '${v}'))[1] as ${v}_author`),
    sql.raw(`max(o.other_at) filter (where o.visibility = '${v}') as ${v}_other`),
  ]);
  return sql`update findings f set ${sql.join(sets, sql`, `)}
    from (select t.id, ${sql.join(pivots, sql`, `)}
      from (select f.id from findings f where ${scope}) t
      left join (
        select l.finding_id, l.visibility, l.last_at, l.last_author,
          (select max(c.created_at) from comments c where c.finding_id = l.finding_id and c.visibility = l.visibility
             and c.deleted_at is null and c.author_id is distinct from l.last_author) as other_at
        from (select c.finding_id, c.visibility, max(c.created_at) as last_at,
                (array_agg(c.author_id order by c.created_at desc, c.id desc))[1] as last_author
              from comments c where c.deleted_at is null and c.finding_id in (select f.id from findings f where ${scope})
              group by c.finding_id, c.visibility) l
      ) o on o.finding_id = t.id
      group by t.id) p
    where f.id = p.id`;
}

/** SQL of comments, their read markers and the notifications pings cause. */
export function commentsRepo(db: Db) {
  /**
   * FOR SHARE on the finding: waits for comment writers holding the finding lock and keeps new
   * ones out until the transaction ends, so what is read next is exactly what a marker covers.
   */
  async function lockFindingForRead(findingId: string): Promise<void> {
    await db.select({ id: findings.id }).from(findings).where(eq(findings.id, findingId)).for('share');
  }

  /** Moves the user's read marker of the finding to now (never backwards). */
  async function writeReadMarker(userId: string, findingId: string): Promise<void> {
    await db
      .insert(commentReads)
      .values({ userId, findingId, readAt: sql`clock_timestamp()` })
      .onConflictDoUpdate({
        target: [commentReads.userId, commentReads.findingId],
        set: { readAt: sql`greatest(${commentReads.readAt}, clock_timestamp())` },
      });
  }

  return {
    /**
     * Locks the finding row against other comment writers and readers that mark read (FOR NO KEY
     * UPDATE: inserts of rows referencing the finding are not blocked). Comments of one finding are
     * written one at a time, so their `created_at` (taken after this lock) follows commit order,
     * which is what makes "read up to T" exact.
     */
    async lockFindingForComment(findingId: string): Promise<void> {
      await db
        .select({ id: findings.id })
        .from(findings)
        .where(eq(findings.id, findingId))
        .for('no key update');
    },

    /** Inserts a comment stamped with the clock after the finding lock; bumps the finding's column. */
    async insertComment(values: {
      findingId: string;
      parentId: string | null;
      authorId: string;
      content: string;
      visibility: CommentVisibility;
    }): Promise<CommentRow> {
      const [row] = await db
        .insert(comments)
        .values({ ...values, createdAt: sql`clock_timestamp()` })
        .returning();
      const comment = row as CommentRow;
      // Under the finding lock, so the old values read here are those of every earlier comment:
      // the last one by someone other than this author is the previous last one, unless that was
      // this author too. The time is read back in SQL: a JavaScript Date would drop its microseconds.
      const c = COMMENT_STATE[values.visibility];
      await db.execute(sql`update findings set
          ${sql.raw(c.other)} = case when ${sql.raw(c.author)} is distinct from ${values.authorId}::uuid
            then ${sql.raw(c.at)} else ${sql.raw(c.other)} end,
          ${sql.raw(c.author)} = ${values.authorId}::uuid,
          ${sql.raw(c.at)} = (select created_at from comments where id = ${comment.id}::uuid)
        where id = ${values.findingId}`);
      return comment;
    },

    async findComment(id: string): Promise<CommentRow | null> {
      const [row] = await db.select().from(comments).where(eq(comments.id, id));
      return row ?? null;
    },

    /**
     * The comments of a finding the user may read, oldest first, with their authors and whether
     * each is unread for the user (the rule of the findings' `unreadCommentsNumber`: written by
     * someone else after the user's read marker, not deleted).
     */
    async listReadable(access: FindingAccess, findingId: string) {
      return db
        .select({
          comment: comments,
          unread: sql<boolean>`(${comments.authorId} is distinct from ${access.userId}
            and ${comments.deletedAt} is null
            and ${comments.createdAt} > coalesce((select ${commentReads.readAt} from ${commentReads}
              where ${commentReads.userId} = ${access.userId} and ${commentReads.findingId} = ${comments.findingId}),
              '-infinity'::timestamptz))`,
          author: {
            id: users.id,
            name: users.name,
            username: users.username,
            avatar: users.avatar,
            disabledAt: users.disabledAt,
          },
        })
        .from(comments)
        .innerJoin(findings, eq(findings.id, comments.findingId))
        .leftJoin(users, eq(users.id, comments.authorId))
        .where(and(eq(comments.findingId, findingId), visibleCommentsCondition(access)))
        .orderBy(asc(comments.createdAt), asc(comments.id));
    },

    async updateContent(id: string, content: string): Promise<void> {
      await db.update(comments).set({ content, editedAt: sql`now()` }).where(eq(comments.id, id));
    },

    /**
     * Soft delete: the row stays (replies keep their thread), its content is blanked, and the
     * finding's comment columns are recomputed without it. Call under the finding lock.
     */
    async softDelete(id: string, findingId: string): Promise<void> {
      await db.update(comments).set({ content: '', deletedAt: sql`now()` }).where(eq(comments.id, id));
      await db.execute(refreshCommentStateSql(sql`f.id = ${findingId}::uuid`));
    },

    /** Recomputes the comment columns of the given findings (see {@link refreshCommentStateSql}). */
    async refreshCommentState(findingIds: string[]): Promise<void> {
      if (findingIds.length === 0) return;
      await db.execute(refreshCommentStateSql(inArray(sql`f.id`, findingIds)));
    },

    /**
     * Marks the finding's comments read for the user as of now. FOR SHARE waits for comment
     * writers holding the finding lock, so every comment committed before is older than the
     * marker and every later one newer: the unread count stays exact under concurrency.
     */
    async markRead(userId: string, findingId: string): Promise<void> {
      await lockFindingForRead(findingId);
      await writeReadMarker(userId, findingId);
    },

    lockFindingForRead,
    writeReadMarker,

    /**
     * Spends one of the user's pings on the repository. The conditional decrement is atomic
     * under the row lock, so concurrent spenders never take it below zero.
     */
    async spendPing(repositoryId: string, userId: string): Promise<boolean> {
      const rows = await db
        .update(repositoryMembers)
        .set({ pingsLeft: sql`${repositoryMembers.pingsLeft} - 1` })
        .where(
          and(
            eq(repositoryMembers.repositoryId, repositoryId),
            eq(repositoryMembers.userId, userId),
            sql`${repositoryMembers.pingsLeft} > 0`,
          ),
        )
        .returning({ left: repositoryMembers.pingsLeft });
      return rows.length > 0;
    },

    /**
     * Who `@project` and the named usernames could reach, with everything the access policy needs
     * to decide (company membership, repository role, platform permissions, account state).
     */
    async pingCandidates(
      repository: { id: string; companyId: string },
      finding: { createdBy: string | null },
      options: { project: boolean; usernames: string[] },
    ): Promise<Array<PingCandidate & { username: string }>> {
      const isCompanyUser = sql<boolean>`exists (select 1 from ${companyMembers}
        where ${companyMembers.userId} = ${users.id} and ${companyMembers.companyId} = ${repository.companyId}
          and ${companyMembers.joinedAt} is not null and ${companyMembers.disabledAt} is null)`;
      const selectors = [];
      if (options.project) selectors.push(isCompanyUser);
      if (options.usernames.length > 0)
        selectors.push(inArray(sql`lower(${users.username})`, options.usernames));
      if (selectors.length === 0) return [];
      const rows = await db
        .select({
          userId: users.id,
          username: users.username,
          companyUser: isCompanyUser,
          repositoryRole: repositoryMembers.role,
          showAllFindings: repositories.showAllFindings,
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
        .leftJoin(repositories, eq(repositories.id, repositoryMembers.repositoryId))
        .where(selectors.length === 1 ? selectors[0] : or(...selectors))
        .orderBy(asc(users.id));
      return rows.map((r) => ({
        ...r,
        showAllFindings: r.showAllFindings ?? false,
        isFindingAuthor: finding.createdBy === r.userId,
      }));
    },

    /** Inserts the notifications; one per user per comment (a repeated pair is skipped). */
    async insertNotifications(
      rows: Array<{ userId: string; commentId: string; payload: CommentPingPayload }>,
    ) {
      if (rows.length === 0) return [];
      return db
        .insert(notifications)
        .values(rows.map((r) => ({ ...r, kind: 'comment_ping' as const })))
        .onConflictDoNothing()
        .returning({ id: notifications.id, userId: notifications.userId });
    },

    /** The e-mail addresses of users, by id (users without one are absent). */
    async emailsOf(userIds: string[]): Promise<Map<string, string>> {
      if (userIds.length === 0) return new Map();
      const rows = await db
        .select({ id: users.id, email: users.email })
        .from(users)
        .where(and(inArray(users.id, userIds), isNotNull(users.email)));
      return new Map(rows.map((r) => [r.id, r.email as string]));
    },

    async hasActiveWebhook(companyId: string): Promise<boolean> {
      const [row] = await db
        .select({ id: companyWebhooks.companyId })
        .from(companyWebhooks)
        .where(and(eq(companyWebhooks.companyId, companyId), eq(companyWebhooks.active, true)));
      return row !== undefined;
    },

    /** Creates the delivery rows (unique per notification and channel) and returns their ids. */
    async insertDeliveries(
      rows: Array<{ notificationId: string; companyId: string; channel: 'email' | 'webhook' }>,
    ) {
      if (rows.length === 0) return [];
      return db
        .insert(notificationDeliveries)
        .values(rows)
        .onConflictDoNothing()
        .returning({ id: notificationDeliveries.id });
    },
  };
}
