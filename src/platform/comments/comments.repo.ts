import { and, asc, eq, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
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
import {
  type CommentVisibility,
  type PingCandidate,
  visibleCommentsCondition,
} from '../access/comment-access.ts';
import type { FindingAccess } from '../access/repository-access.ts';

export type CommentRow = typeof comments.$inferSelect;

/** Per-visibility column of `findings` holding the time of the last comment of that visibility. */
const LAST_COMMENT_COLUMN = {
  public: 'lastCommentAt',
  private: 'lastPrivateCommentAt',
  internal: 'lastInternalCommentAt',
  hidden: 'lastHiddenCommentAt',
} as const;

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
      await db
        .update(findings)
        .set({ [LAST_COMMENT_COLUMN[values.visibility]]: comment.createdAt })
        .where(eq(findings.id, values.findingId));
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

    /** Soft delete: the row stays (replies keep their thread), its content is blanked. */
    async softDelete(id: string): Promise<void> {
      await db.update(comments).set({ content: '', deletedAt: sql`now()` }).where(eq(comments.id, id));
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
      rows: Array<{ userId: string; commentId: string; payload: Record<string, unknown> }>,
    ) {
      if (rows.length === 0) return [];
      return db
        .insert(notifications)
        .values(rows.map((r) => ({ ...r, kind: 'comment_ping' })))
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
    async insertDeliveries(rows: Array<{ notificationId: string; channel: 'email' | 'webhook' }>) {
      if (rows.length === 0) return [];
      return db
        .insert(notificationDeliveries)
        .values(rows)
        .onConflictDoNothing()
        .returning({ id: notificationDeliveries.id });
    },
  };
}
