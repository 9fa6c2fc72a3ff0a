import { loadFindingAccess, requireVisibleRepository } from '../../access/access.service.ts';
import {
  can,
  mayBePinged,
  projectPingSpendsPing,
  requireCanCreateComment,
  webhookMayCarry,
} from '../../access/policy.ts';
import { type CommentVisibility, replyVisibilityAllowed } from '../../access/rules.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database, Tx } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { requireFinding } from '../findings/findings.service.ts';
import { deliverNotificationJob } from '../notifications/notifications.jobs.ts';
import { toShortUserSummary } from '../users/users.views.ts';
import { type CommentRow, commentsRepo } from './comments.repo.ts';
import type { Comment, CommentThread, CreateComment } from './comments.schemas.ts';
import { parseMentions } from './mentions.ts';

/** Characters of the comment quoted in a notification. */
const EXCERPT_CHARS = 280;

export interface CommentsServiceDeps {
  database: Database;
  /** The job queue (created after the services): deliveries are enqueued with the comment. */
  queue: () => JobQueue;
  /** Whether e-mail delivery is configured (`VIGIL_SMTP_URL`). */
  emailEnabled: boolean;
}

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', { message, details: { field } });
}

/**
 * Comments on findings (v0 §2.5, §4.8): threads, visibility, edits, soft deletes, read markers,
 * and the pings they carry, which become notifications and deliveries in the same transaction.
 */
export function createCommentsService(deps: CommentsServiceDeps) {
  const { database } = deps;

  /** The caller, the repository and the finding, all as the caller may see them (404 otherwise). */
  async function load(tx: Tx, actor: Actor, repositoryId: string, ref: string) {
    const access = await loadFindingAccess(tx.db, actor);
    const repository = await requireVisibleRepository(tx.db, access, repositoryId);
    const finding = await requireFinding(tx.db, access, repositoryId, ref);
    return { access, repository, finding };
  }

  /** A comment of this finding the caller may read, or 404. */
  async function requireReadableComment(
    tx: Tx,
    ctx: Awaited<ReturnType<typeof load>>,
    commentId: string,
  ): Promise<CommentRow> {
    const repo = commentsRepo(tx.db);
    const readable = await repo.listReadable(ctx.access, ctx.finding.id);
    const row = readable.find((r) => r.comment.id === commentId)?.comment;
    if (!row) throw new AppError('NOT_FOUND', { message: 'Comment not found.' });
    return row;
  }

  return {
    /**
     * POST …/findings/{finding_ref}/comment: stores the comment exactly as sent, spends a
     * reviewer's ping on `@project` (none left → 409, nothing stored), and writes one
     * notification per pinged user plus its deliveries and their jobs, all in one transaction.
     */
    async createComment(
      actor: Actor,
      repositoryId: string,
      ref: string,
      input: CreateComment,
    ): Promise<{ id: string }> {
      const visibility: CommentVisibility = input.visibility ?? 'public';
      return database.transaction(async (tx) => {
        const ctx = await load(tx, actor, repositoryId, ref);
        const { access, repository, finding } = ctx;
        requireCanCreateComment(access, repository, finding, visibility);
        const repo = commentsRepo(tx.db);
        let parentId: string | null = null;
        if (input.parent) {
          const parent = await repo.findComment(input.parent);
          const readable =
            parent?.findingId === finding.id
              ? await requireReadableComment(tx, ctx, parent.id).catch(() => null)
              : null;
          if (!parent || !readable) throw invalid('parent', 'parent is not a comment of this finding.');
          if (parent.parentId !== null) {
            throw invalid('parent', 'Threads are one level deep: reply to the thread, not to a reply.');
          }
          if (!replyVisibilityAllowed(parent.visibility, visibility)) {
            throw invalid(
              'visibility',
              `A reply may not be more visible than its ${parent.visibility} thread.`,
            );
          }
          parentId = parent.id;
        }
        const mentions = parseMentions(input.content);
        if (mentions.project && projectPingSpendsPing(access, repository)) {
          if (!(await repo.spendPing(repository.id, access.userId))) throw new AppError('NO_PINGS_LEFT');
        }
        await repo.lockFindingForComment(finding.id);
        const comment = await repo.insertComment({
          findingId: finding.id,
          parentId,
          authorId: access.userId,
          content: input.content,
          visibility,
        });

        const candidates = await repo.pingCandidates(repository, finding, mentions);
        const named = new Set(mentions.usernames);
        const recipients = candidates.filter(
          (c) =>
            (mentions.project && mayBePinged(c, 'project', { authorId: access.userId, visibility })) ||
            (named.has(c.username.toLowerCase()) &&
              mayBePinged(c, 'username', { authorId: access.userId, visibility })),
        );
        const payload = {
          commentId: comment.id,
          findingId: finding.id,
          findingNumber: finding.number,
          findingTitle: finding.title,
          repositoryId: repository.id,
          repositoryName: repository.name,
          companyId: repository.companyId,
          authorId: access.userId,
          authorUsername: actor.kind === 'user' ? actor.username : null,
          visibility,
          excerpt: input.content.slice(0, EXCERPT_CHARS),
        };
        const created = await repo.insertNotifications(
          recipients.map((r) => ({ userId: r.userId, commentId: comment.id, payload })),
        );
        const emails = deps.emailEnabled ? await repo.emailsOf(created.map((n) => n.userId)) : new Map();
        const webhook = webhookMayCarry(visibility) && (await repo.hasActiveWebhook(repository.companyId));
        const deliveries = await repo.insertDeliveries(
          created.flatMap((n) => [
            ...(emails.has(n.userId)
              ? [{ notificationId: n.id, companyId: repository.companyId, channel: 'email' as const }]
              : []),
            ...(webhook
              ? [{ notificationId: n.id, companyId: repository.companyId, channel: 'webhook' as const }]
              : []),
          ]),
        );
        for (const d of deliveries) {
          await deps.queue().enqueue(deliverNotificationJob, { deliveryId: d.id }, { tx });
        }
        return { id: comment.id };
      });
    },

    /**
     * The threads of a finding the caller may read, oldest first, replies under their thread;
     * reading them marks the finding's comments read for the caller.
     */
    async listComments(
      actor: Actor,
      repositoryId: string,
      ref: string,
    ): Promise<{ threads: CommentThread[] }> {
      return database.transaction(async (tx) => {
        const { access, finding } = await load(tx, actor, repositoryId, ref);
        const repo = commentsRepo(tx.db);
        // Lock first: it waits for comment writers and keeps new ones out, so the unread flags
        // listed are computed against the old marker and the new marker covers exactly the list.
        await repo.lockFindingForRead(finding.id);
        const rows = await repo.listReadable(access, finding.id);
        await repo.writeReadMarker(access.userId, finding.id);
        const threads: CommentThread[] = [];
        const byId = new Map<string, CommentThread>();
        for (const { comment, author, unread } of rows) {
          const view = toComment(comment, author, unread);
          if (comment.parentId === null) {
            const thread = { ...view, replies: [] };
            threads.push(thread);
            byId.set(comment.id, thread);
          } else {
            byId.get(comment.parentId)?.replies.push(view);
          }
        }
        return { threads };
      });
    },

    /** Edits the caller's own comment (the author only; deleted comments cannot be edited). */
    async editComment(
      actor: Actor,
      repositoryId: string,
      ref: string,
      commentId: string,
      content: string,
    ): Promise<void> {
      await database.transaction(async (tx) => {
        const ctx = await load(tx, actor, repositoryId, ref);
        const comment = await requireReadableComment(tx, ctx, commentId);
        if (!can(ctx.access, 'comment.edit', { comment })) {
          throw new AppError('FORBIDDEN', { message: 'Only its author may edit a comment.' });
        }
        if (comment.deletedAt) throw new AppError('CONFLICT', { message: 'The comment is deleted.' });
        await commentsRepo(tx.db).updateContent(comment.id, content);
      });
    },

    /** Soft-deletes a comment (its author, or a repository or platform admin); replies stay. */
    async deleteComment(actor: Actor, repositoryId: string, ref: string, commentId: string): Promise<void> {
      await database.transaction(async (tx) => {
        const ctx = await load(tx, actor, repositoryId, ref);
        const comment = await requireReadableComment(tx, ctx, commentId);
        if (!can(ctx.access, 'comment.delete', { repository: ctx.repository, comment })) {
          throw new AppError('FORBIDDEN', { message: 'Only its author or an admin may delete a comment.' });
        }
        if (comment.deletedAt) return;
        const repo = commentsRepo(tx.db);
        await repo.lockFindingForComment(ctx.finding.id);
        await repo.softDelete(comment.id, ctx.finding.id);
      });
    },

    /** Marks every comment of the finding read for the caller, as of now. */
    async markRead(actor: Actor, repositoryId: string, ref: string): Promise<void> {
      await database.transaction(async (tx) => {
        const { access, finding } = await load(tx, actor, repositoryId, ref);
        await commentsRepo(tx.db).markRead(access.userId, finding.id);
      });
    },
  };
}

function toComment(
  comment: CommentRow,
  author: {
    id: string;
    name: string;
    username: string;
    avatar: string | null;
    disabledAt: Date | null;
  } | null,
  unread: boolean,
): Comment {
  return {
    id: comment.id,
    findingId: comment.findingId,
    parent: comment.parentId,
    content: comment.deletedAt ? null : comment.content,
    visibility: comment.visibility,
    author: author ? toShortUserSummary(author) : null,
    createdAt: comment.createdAt.toISOString(),
    editedAt: comment.editedAt?.toISOString() ?? null,
    deletedAt: comment.deletedAt?.toISOString() ?? null,
    unread,
  };
}

export type CommentsService = ReturnType<typeof createCommentsService>;
