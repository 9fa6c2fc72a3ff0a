import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import {
  type CommentPingPayload,
  companyWebhooks,
  type DeliveryAttemptOutcome,
  notificationDeliveries,
  notificationDeliveryAttempts,
  notifications,
  users,
} from '../../db/schema/index.ts';
import { ISO_MICROS_FORMAT } from '../pagination/list-params.ts';

export type { CommentPingPayload };

export type NotificationRow = typeof notifications.$inferSelect;
export type DeliveryRow = typeof notificationDeliveries.$inferSelect;
export type DeliveryAttemptRow = typeof notificationDeliveryAttempts.$inferSelect;
export type { DeliveryAttemptOutcome };

/** SQL of notifications, their deliveries and company webhooks. */
export function notificationsRepo(db: Db) {
  return {
    /** One page of the user's notifications, newest first, `limit + 1` rows read. */
    async list(
      userId: string,
      options: { unread?: boolean; after?: { createdAt: string; id: string }; limit: number },
    ) {
      const conditions = [eq(notifications.userId, userId)];
      if (options.unread === true) conditions.push(isNull(notifications.readAt));
      if (options.unread === false) conditions.push(sql`${notifications.readAt} is not null`);
      if (options.after) {
        conditions.push(
          sql`(${notifications.createdAt}, ${notifications.id}) < (${options.after.createdAt}::timestamptz, ${options.after.id}::uuid)`,
        );
      }
      return db
        .select({
          notification: notifications,
          createdAtKey: sql<string>`to_char(${notifications.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
        })
        .from(notifications)
        .where(and(...conditions))
        .orderBy(desc(notifications.createdAt), desc(notifications.id))
        .limit(options.limit + 1);
    },

    /** Marks one of the user's notifications read; false when the user has no such notification. */
    async markRead(userId: string, id: string): Promise<boolean> {
      const rows = await db
        .update(notifications)
        .set({ readAt: sql`coalesce(${notifications.readAt}, now())` })
        .where(and(eq(notifications.id, id), eq(notifications.userId, userId)))
        .returning({ id: notifications.id });
      return rows.length > 0;
    },

    /** Marks every unread notification of the user read; returns how many. */
    async markAllRead(userId: string): Promise<number> {
      const rows = await db
        .update(notifications)
        .set({ readAt: sql`now()` })
        .where(and(eq(notifications.userId, userId), isNull(notifications.readAt)))
        .returning({ id: notifications.id });
      return rows.length;
    },

    /**
     * Claims a pending delivery for sending (pending → sending) for `leaseSeconds`, and counts the
     * attempt. Only one caller wins the conditional update, so a delivery is sent by at most one
     * worker at a time; a claim whose lease ran out (its worker stopped) is settled by
     * {@link staleClaims} and the delivery sweep, never claimed again here.
     */
    async claim(id: string, leaseSeconds: number): Promise<DeliveryRow | null> {
      const [row] = await db
        .update(notificationDeliveries)
        .set({
          status: 'sending',
          claimedAt: sql`now()`,
          claimedUntil: sql`now() + make_interval(secs => ${leaseSeconds})`,
          attempts: sql`${notificationDeliveries.attempts} + 1`,
        })
        .where(and(eq(notificationDeliveries.id, id), eq(notificationDeliveries.status, 'pending')))
        .returning();
      return row ?? null;
    },

    /**
     * Claims whose lease ran out, locked for the caller's transaction (skipping those another
     * sweeper holds), oldest first.
     */
    async staleClaims(limit: number): Promise<DeliveryRow[]> {
      return db
        .select()
        .from(notificationDeliveries)
        .where(
          and(
            eq(notificationDeliveries.status, 'sending'),
            sql`${notificationDeliveries.claimedUntil} < now()`,
          ),
        )
        .orderBy(notificationDeliveries.claimedUntil)
        .limit(limit)
        .for('update', { skipLocked: true });
    },

    /**
     * Pending deliveries with neither a claim nor a queued job for `idleSeconds` (their job's
     * retries ran out, or its job was lost), locked for the caller's transaction (skipping those
     * another sweeper holds), oldest first.
     */
    async orphanedPending(idleSeconds: number, limit: number): Promise<DeliveryRow[]> {
      const idleSince = sql`now() - make_interval(secs => ${idleSeconds})`;
      return db
        .select()
        .from(notificationDeliveries)
        .where(
          and(
            eq(notificationDeliveries.status, 'pending'),
            sql`${notificationDeliveries.enqueuedAt} < ${idleSince}`,
            sql`coalesce(${notificationDeliveries.claimedAt}, ${notificationDeliveries.enqueuedAt}) < ${idleSince}`,
          ),
        )
        .orderBy(notificationDeliveries.enqueuedAt)
        .limit(limit)
        .for('update', { skipLocked: true });
    },

    /** Records that a delivery job was queued for a pending delivery now. */
    async markEnqueued(id: string, note: string): Promise<void> {
      await db
        .update(notificationDeliveries)
        .set({ enqueuedAt: sql`now()`, lastError: note })
        .where(and(eq(notificationDeliveries.id, id), eq(notificationDeliveries.status, 'pending')));
    },

    /** Settles a stale claim of the given attempt: back to pending (resend) or `unknown`. */
    async settleStale(
      id: string,
      attempt: number,
      outcome: { status: 'pending' | 'unknown'; error: string },
    ): Promise<boolean> {
      const rows = await db
        .update(notificationDeliveries)
        .set({
          status: outcome.status,
          lastError: outcome.error,
          claimedUntil: null,
          // Back to pending goes with a new job (the sweep queues it in the same transaction).
          ...(outcome.status === 'pending' ? { enqueuedAt: sql`now()` } : {}),
        })
        .where(
          and(
            eq(notificationDeliveries.id, id),
            eq(notificationDeliveries.status, 'sending'),
            eq(notificationDeliveries.attempts, attempt),
          ),
        )
        .returning({ id: notificationDeliveries.id });
      return rows.length > 0;
    },

    async find(id: string): Promise<DeliveryRow | null> {
      const [row] = await db.select().from(notificationDeliveries).where(eq(notificationDeliveries.id, id));
      return row ?? null;
    },

    /** The notification of a delivery, its recipient and the webhook of the company concerned. */
    async deliveryContext(notificationId: string) {
      const [row] = await db
        .select({
          notification: notifications,
          recipient: { id: users.id, username: users.username, name: users.name, email: users.email },
        })
        .from(notifications)
        .innerJoin(users, eq(users.id, notifications.userId))
        .where(eq(notifications.id, notificationId));
      if (!row) return null;
      const [webhook] = await db
        .select()
        .from(companyWebhooks)
        .where(
          and(
            eq(companyWebhooks.companyId, row.notification.payload.companyId),
            eq(companyWebhooks.active, true),
          ),
        );
      return { ...row, webhook: webhook ?? null };
    },

    /**
     * Records the outcome of the attempt that holds the claim. The attempt number fences it: a
     * sender whose stale claim was settled (and maybe claimed again) changes nothing.
     */
    async finish(
      id: string,
      attempt: number,
      outcome: { status: 'delivered' | 'failed' | 'unknown'; error?: string },
    ): Promise<boolean> {
      const rows = await db
        .update(notificationDeliveries)
        .set({
          status: outcome.status,
          deliveredAt: outcome.status === 'delivered' ? sql`now()` : null,
          lastError: outcome.error ?? null,
          claimedUntil: null,
        })
        .where(
          and(
            eq(notificationDeliveries.id, id),
            eq(notificationDeliveries.status, 'sending'),
            eq(notificationDeliveries.attempts, attempt),
          ),
        )
        .returning({ id: notificationDeliveries.id });
      return rows.length > 0;
    },

    /**
     * Gives an attempt back (sending → pending) so that the job's retry claims it again; false
     * when the claim was no longer this attempt's.
     */
    async release(id: string, attempt: number, error: string): Promise<boolean> {
      const rows = await db
        .update(notificationDeliveries)
        .set({ status: 'pending', lastError: error, claimedUntil: null })
        .where(
          and(
            eq(notificationDeliveries.id, id),
            eq(notificationDeliveries.status, 'sending'),
            eq(notificationDeliveries.attempts, attempt),
          ),
        )
        .returning({ id: notificationDeliveries.id });
      return rows.length > 0;
    },

    /** Records how one attempt ended (once: a second record of the same attempt is dropped). */
    async recordAttempt(values: {
      deliveryId: string;
      attempt: number;
      startedAt: Date;
      statusCode: number | null;
      error: string | null;
      outcome: DeliveryAttemptOutcome;
    }): Promise<void> {
      await db.insert(notificationDeliveryAttempts).values(values).onConflictDoNothing();
    },

    /** One page of a company's webhook deliveries, newest first, `limit + 1` rows read. */
    async listWebhookDeliveries(
      companyId: string,
      options: { after?: { createdAt: string; id: string }; limit: number },
    ) {
      const conditions = [
        eq(notificationDeliveries.companyId, companyId),
        eq(notificationDeliveries.channel, 'webhook'),
      ];
      if (options.after) {
        conditions.push(
          sql`(${notificationDeliveries.createdAt}, ${notificationDeliveries.id}) < (${options.after.createdAt}::timestamptz, ${options.after.id}::uuid)`,
        );
      }
      return db
        .select({
          delivery: notificationDeliveries,
          createdAtKey: sql<string>`to_char(${notificationDeliveries.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
        })
        .from(notificationDeliveries)
        .where(and(...conditions))
        .orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.id))
        .limit(options.limit + 1);
    },

    /** The attempts of the given deliveries, in order. */
    async attemptsOf(deliveryIds: string[]): Promise<DeliveryAttemptRow[]> {
      if (deliveryIds.length === 0) return [];
      return db
        .select()
        .from(notificationDeliveryAttempts)
        .where(inArray(notificationDeliveryAttempts.deliveryId, deliveryIds))
        .orderBy(asc(notificationDeliveryAttempts.deliveryId), asc(notificationDeliveryAttempts.attempt));
    },

    async upsertWebhook(values: { companyId: string; url: string; secretEnc: string; createdBy: string }) {
      await db
        .insert(companyWebhooks)
        .values({ ...values, active: true })
        .onConflictDoUpdate({
          target: companyWebhooks.companyId,
          set: { url: values.url, secretEnc: values.secretEnc, createdBy: values.createdBy, active: true },
        });
    },

    async deleteWebhook(companyId: string): Promise<boolean> {
      const rows = await db
        .delete(companyWebhooks)
        .where(eq(companyWebhooks.companyId, companyId))
        .returning({ id: companyWebhooks.companyId });
      return rows.length > 0;
    },
  };
}
