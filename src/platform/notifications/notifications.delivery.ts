import type { Logger } from 'pino';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database } from '../../db/client.ts';
import { SendRefusedError } from '../../integrations/notify/send-errors.ts';
import type { Mailer } from '../../integrations/notify/smtp-mailer.ts';
import { type Fetch, sendWebhook } from '../../integrations/notify/webhook-sender.ts';
import { notificationsRepo } from './notifications.repo.ts';

/** Attempts after which a refused delivery is given up (the job's retries plus the first run). */
export const MAX_DELIVERY_ATTEMPTS = 7;

export interface NotificationDeliveryDeps {
  database: Database;
  secretBox: SecretBox;
  /** The SMTP mailer, or null when `VIGIL_SMTP_URL` is not set. */
  mailer: Mailer | null;
  /** The outbound `fetch` of the container (one injection point for the outbound policy). */
  fetch: Fetch;
  webhookTimeoutMs: number;
  /** Public base URL, for links in messages. */
  publicUrl: string | null;
  log: Logger;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'skipped' | 'retry';

/** Thrown to make the job retry a refused delivery later (with the queue's backoff). */
export class DeliveryRetryError extends Error {
  override name = 'DeliveryRetryError';
}

/**
 * Sends notifications over e-mail and company webhooks, at most once per notification and
 * channel: a delivery is claimed before anything is sent, and only a refusal (the receiver said
 * no, or was not reachable) gives the claim back for a retry. An unknown outcome (a timeout, a
 * connection lost mid-send, a worker that died) is never sent again.
 */
export function createNotificationDelivery(deps: NotificationDeliveryDeps) {
  const { database, log } = deps;

  function message(payload: Record<string, unknown>) {
    const author = typeof payload.authorUsername === 'string' ? `@${payload.authorUsername}` : 'Someone';
    const finding = `#${payload.findingNumber ?? '?'} ${String(payload.findingTitle ?? '')}`.trim();
    const repository = String(payload.repositoryName ?? 'a repository');
    const link = deps.publicUrl
      ? `${deps.publicUrl}/api/v0/repositories/${payload.repositoryId}/findings/${payload.findingId}/comments`
      : null;
    return {
      subject: `${author} mentioned you on ${repository} ${finding}`,
      text: [
        `${author} mentioned you in a comment on ${repository}, finding ${finding}:`,
        '',
        String(payload.excerpt ?? ''),
        ...(link ? ['', link] : []),
      ].join('\n'),
    };
  }

  return {
    /** Delivers one delivery row; see the outcome meanings of {@link DeliveryOutcome}. */
    async deliver(deliveryId: string): Promise<DeliveryOutcome> {
      const repo = notificationsRepo(database.db);
      const claimed = await repo.claim(deliveryId);
      if (!claimed) {
        const current = await repo.find(deliveryId);
        log.info({ deliveryId, status: current?.status ?? 'missing' }, 'delivery not pending; not sent');
        return 'skipped';
      }
      const context = await repo.deliveryContext(claimed.notificationId);
      try {
        if (!context) throw new SendRefusedError('the notification no longer exists', true);
        if (claimed.channel === 'email') {
          if (!deps.mailer) throw new SendRefusedError('e-mail is not configured', true);
          if (!context.recipient.email)
            throw new SendRefusedError('the recipient has no e-mail address', true);
          await deps.mailer.send({
            to: context.recipient.email,
            ...message(context.notification.payload),
            messageId: `<${deliveryId}@vigil.notifications>`,
          });
        } else {
          if (!context.webhook) throw new SendRefusedError('the company has no active webhook', true);
          const body = JSON.stringify({
            type: 'notification.created',
            deliveryId,
            notification: {
              id: context.notification.id,
              kind: context.notification.kind,
              createdAt: context.notification.createdAt.toISOString(),
              recipient: { userId: context.recipient.id, username: context.recipient.username },
              ...context.notification.payload,
            },
          });
          await sendWebhook(
            deps.fetch,
            {
              url: context.webhook.url,
              secret: deps.secretBox.open(context.webhook.secretEnc),
              deliveryId,
              body,
            },
            { timeoutMs: deps.webhookTimeoutMs },
          );
        }
      } catch (err) {
        if (err instanceof SendRefusedError) {
          if (err.permanent || claimed.attempts >= MAX_DELIVERY_ATTEMPTS) {
            await repo.finish(deliveryId, { status: 'failed', error: err.message });
            return 'failed';
          }
          await repo.release(deliveryId, err.message);
          throw new DeliveryRetryError(`delivery ${deliveryId} refused (${err.message}); retried later`);
        }
        // Unknown whether it arrived: never send it again.
        await repo.finish(deliveryId, {
          status: 'failed',
          error: `outcome unknown: ${(err as Error).message}`,
        });
        return 'failed';
      }
      await repo.finish(deliveryId, { status: 'delivered' });
      return 'delivered';
    },
  };
}

export type NotificationDelivery = ReturnType<typeof createNotificationDelivery>;
