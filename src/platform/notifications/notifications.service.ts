import { randomBytes } from 'node:crypto';
import { requireCompany } from '../../access/access.service.ts';
import { can, requireCompanyOverseer, requireCompanyReader, requireUser } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { checkTenantUrl, type TenantUrlChecker } from '../../integrations/outbound/tenant-urls.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { type CursorCodec, hashFilters, timeAndIdAfter } from '../pagination/cursor.ts';
import { type DeliveryAttemptRow, type DeliveryRow, notificationsRepo } from './notifications.repo.ts';
import type {
  ListNotificationsQuery,
  ListWebhookDeliveriesQuery,
  Notification,
  WebhookDelivery,
} from './notifications.schemas.ts';

const DEFAULT_LIMIT = 20;

/**
 * Where a webhook points, as the audit log records it: the origin only. A webhook URL's path or
 * query is often its credential (chat services' incoming-webhook URLs), and user info always is.
 */
function webhookDestination(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}

/** The caller's notifications (read state, paging) and companies' notification webhooks. */
export function createNotificationsService(deps: {
  database: Database;
  secretBox: SecretBox;
  cursors: CursorCodec;
  /** Checks the webhook URL when it is saved (the one check of every tenant URL setting). */
  outbound: TenantUrlChecker;
}) {
  const { database, secretBox } = deps;

  return {
    /** GET /api/v0/notifications: the caller's notifications, newest first, keyset-paged. */
    async list(
      actor: Actor,
      query: ListNotificationsQuery,
    ): Promise<{ notifications: Notification[]; nextValue: string | null }> {
      const user = requireUser(actor);
      const limit = query.limit ?? DEFAULT_LIMIT;
      const filterHash = hashFilters({ user: user.userId, unread: query.unread });
      const position = timeAndIdAfter(deps.cursors, query.next, filterHash);
      const after = position && { createdAt: position.at, id: position.id };
      const rows = await notificationsRepo(database.db).list(user.userId, {
        ...(query.unread === undefined ? {} : { unread: query.unread }),
        ...(after ? { after } : {}),
        limit,
      });
      const page = deps.cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(query.next === undefined ? {} : { given: query.next }),
        keyOf: (r) => [r.createdAtKey, r.notification.id],
      });
      return {
        notifications: page.items.map(({ notification: n }) => ({
          id: n.id,
          kind: n.kind,
          commentId: n.commentId,
          payload: n.payload,
          readAt: n.readAt?.toISOString() ?? null,
          createdAt: n.createdAt.toISOString(),
        })),
        nextValue: page.nextValue,
      };
    },

    /** Marks one of the caller's notifications read (another user's answers 404). */
    async markRead(actor: Actor, id: string): Promise<void> {
      const user = requireUser(actor);
      if (!(await notificationsRepo(database.db).markRead(user.userId, id))) {
        throw new AppError('NOT_FOUND', { message: 'Notification not found.' });
      }
    },

    /** Marks all of the caller's notifications read. */
    async markAllRead(actor: Actor): Promise<{ marked: number }> {
      const user = requireUser(actor);
      return { marked: await notificationsRepo(database.db).markAllRead(user.userId) };
    },

    /**
     * Sets the company's notification webhook (managers and platform admins) and returns a new
     * signing secret, shown once; it replaces any previous webhook and secret.
     */
    async putWebhook(actor: Actor, companyId: string, url: string): Promise<{ url: string; secret: string }> {
      const user = requireCompanyReader(actor, companyId);
      if (!can(user, 'company.manage', { companyId })) {
        throw new AppError('FORBIDDEN', { message: 'Only company managers may configure the webhook.' });
      }
      await requireCompany(database.db, companyId);
      await checkTenantUrl(deps.outbound, 'url', url);
      const secret = `whsec_${randomBytes(32).toString('base64url')}`;
      await database.transaction(async (tx) => {
        await notificationsRepo(tx.db).upsertWebhook({
          companyId,
          url,
          secretEnc: secretBox.seal(secret),
          createdBy: user.userId,
        });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'notification_webhook_set',
          performedBy: user.userId,
          details: { destination: webhookDestination(url) },
        });
      });
      return { url, secret };
    },

    /**
     * The company's webhook deliveries, newest first, each with its attempts (company managers and
     * cross-company readers: the access policy's `company.oversee`).
     */
    async listWebhookDeliveries(
      actor: Actor,
      companyId: string,
      query: ListWebhookDeliveriesQuery,
    ): Promise<{ items: WebhookDelivery[]; nextValue: string | null }> {
      requireCompanyOverseer(actor, companyId);
      await requireCompany(database.db, companyId);
      const limit = query.limit ?? DEFAULT_LIMIT;
      const filterHash = hashFilters({ webhookDeliveriesOf: companyId });
      const position = timeAndIdAfter(deps.cursors, query.next, filterHash);
      const repo = notificationsRepo(database.db);
      const rows = await repo.listWebhookDeliveries(companyId, {
        ...(position ? { after: { createdAt: position.at, id: position.id } } : {}),
        limit,
      });
      const page = deps.cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(query.next === undefined ? {} : { given: query.next }),
        keyOf: (r) => [r.createdAtKey, r.delivery.id],
      });
      const attempts = await repo.attemptsOf(page.items.map((r) => r.delivery.id));
      const byDelivery = new Map<string, DeliveryAttemptRow[]>();
      for (const a of attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
      return {
        items: page.items.map(({ delivery }) =>
          toWebhookDelivery(delivery, byDelivery.get(delivery.id) ?? []),
        ),
        nextValue: page.nextValue,
      };
    },

    /** Removes the company's notification webhook. */
    async deleteWebhook(actor: Actor, companyId: string): Promise<void> {
      const user = requireCompanyReader(actor, companyId);
      if (!can(user, 'company.manage', { companyId })) {
        throw new AppError('FORBIDDEN', { message: 'Only company managers may configure the webhook.' });
      }
      await database.transaction(async (tx) => {
        if (!(await notificationsRepo(tx.db).deleteWebhook(companyId))) {
          throw new AppError('NOT_FOUND', { message: 'No notification webhook is configured.' });
        }
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'notification_webhook_removed',
          performedBy: user.userId,
        });
      });
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;

/** A delivery as its company's managers read it: its state in words, and every attempt. */
function toWebhookDelivery(delivery: DeliveryRow, attempts: DeliveryAttemptRow[]): WebhookDelivery {
  const last = attempts.at(-1);
  return {
    id: delivery.id,
    notificationId: delivery.notificationId,
    status: statusOf(delivery, last),
    createdAt: delivery.createdAt.toISOString(),
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.startedAt.toISOString(),
      finishedAt: a.finishedAt.toISOString(),
      statusCode: a.statusCode,
      error: a.error,
      outcome: a.outcome,
    })),
  };
}

function statusOf(delivery: DeliveryRow, last: DeliveryAttemptRow | undefined): WebhookDelivery['status'] {
  switch (delivery.status) {
    case 'pending':
      return delivery.attempts > 0 ? 'retrying' : 'pending';
    case 'sending':
      return 'sending';
    case 'delivered':
      return 'delivered';
    case 'unknown':
      return 'unknown';
    case 'failed':
      return last?.outcome === 'gave_up' ? 'gave_up' : 'failed_permanently';
  }
}
