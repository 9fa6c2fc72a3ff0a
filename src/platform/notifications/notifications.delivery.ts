import type { Logger } from 'pino';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database } from '../../db/client.ts';
import { SendRefusedError } from '../../integrations/notify/send-errors.ts';
import type { Mailer } from '../../integrations/notify/smtp-mailer.ts';
import { type Fetch, sendWebhook } from '../../integrations/notify/webhook-sender.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { deliverNotificationJob } from './notifications.jobs.ts';
import {
  type CommentPingPayload,
  type DeliveryAttemptOutcome,
  type DeliveryRow,
  notificationsRepo,
} from './notifications.repo.ts';

/** Attempts after which a refused delivery is given up (the job's retries plus the first run). */
export const MAX_DELIVERY_ATTEMPTS = 7;

/** Stale claims settled per sweep run; the next run takes the rest. */
const SWEEP_BATCH = 100;

/**
 * A pending delivery idle this long (no claim, no job queued) has lost its job: longer than the
 * delivery job's whole retry schedule (6 retries from 15 s, doubling: about 16 minutes).
 */
export const ORPHANED_AFTER_SECONDS = 3600;

/** Time kept between the end of a webhook call and the end of its claim. */
const LEASE_MARGIN_MS = 2000;

export interface NotificationDeliveryDeps {
  database: Database;
  secretBox: SecretBox;
  /** The SMTP mailer, or null when `VIGIL_SMTP_URL` is not set. */
  mailer: Mailer | null;
  /** The outbound `fetch` of the container (one injection point for the outbound policy). */
  fetch: Fetch;
  webhookTimeoutMs: number;
  /**
   * How long a claim lasts (default: the webhook timeout plus 60 s). A live sender gives up its
   * webhook call before its claim ends, so a claim past its end belongs to a sender that stopped.
   */
  claimLeaseSeconds?: number;
  /** The job queue, for the resends the sweep enqueues (absent: the sweep only reports). */
  queue?: () => JobQueue;
  /** Public base URL, for links in messages. */
  publicUrl: string | null;
  log: Logger;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'unknown' | 'skipped' | 'retry';

/** Thrown to make the job retry a refused delivery later (with the queue's backoff). */
export class DeliveryRetryError extends Error {
  override name = 'DeliveryRetryError';
}

/**
 * Sends notifications over e-mail and company webhooks, never twice to one channel: a delivery is
 * claimed (with a lease) before anything is sent, and each attempt is recorded when it ends. A
 * destination the outbound policy refuses, a redirect, or nothing to send to fails the delivery
 * for good. Another refusal (the receiver said no, or was not reachable) gives the claim back for
 * a retry, with the job's bounded exponential backoff, up to {@link MAX_DELIVERY_ATTEMPTS}. An unknown outcome (a timeout, a connection lost
 * mid-send, a sender that stopped and left its claim to expire) is final for e-mail (`unknown`,
 * reported, never sent again); a webhook is sent again with the same `X-Vigil-Delivery` id, which
 * receivers use to drop a message they already have.
 */
export function createNotificationDelivery(deps: NotificationDeliveryDeps) {
  const { database, log } = deps;
  const leaseSeconds = deps.claimLeaseSeconds ?? Math.ceil(deps.webhookTimeoutMs / 1000) + 60;

  function message(payload: CommentPingPayload) {
    const author = payload.authorUsername === null ? 'Someone' : `@${payload.authorUsername}`;
    const finding = `#${payload.findingNumber ?? '?'} ${payload.findingTitle}`.trim();
    const repository = payload.repositoryName;
    const link = deps.publicUrl
      ? `${deps.publicUrl}/api/v0/repositories/${payload.repositoryId}/findings/${payload.findingId}/comments`
      : null;
    return {
      subject: `${author} mentioned you on ${repository} ${finding}`,
      text: [
        `${author} mentioned you in a comment on ${repository}, finding ${finding}:`,
        '',
        payload.excerpt,
        ...(link ? ['', link] : []),
      ].join('\n'),
    };
  }

  return {
    /** Delivers one delivery row; see the outcome meanings of {@link DeliveryOutcome}. */
    async deliver(deliveryId: string): Promise<DeliveryOutcome> {
      const repo = notificationsRepo(database.db);
      const claimed = await repo.claim(deliveryId, leaseSeconds);
      // Local deadline of the claim: the webhook call is aborted before the lease ends.
      const claimDeadline = Date.now() + leaseSeconds * 1000 - LEASE_MARGIN_MS;
      if (!claimed) {
        const current = await repo.find(deliveryId);
        log.info({ deliveryId, status: current?.status ?? 'missing' }, 'delivery not pending; not sent');
        return 'skipped';
      }
      const context = await repo.deliveryContext(claimed.notificationId);
      const attempt = claimed.attempts;
      const startedAt = claimed.claimedAt ?? new Date();
      /** Ends the claim of this attempt and records how it ended, in one transaction. */
      const settle = (
        end: { status: 'pending' | 'delivered' | 'failed' | 'unknown'; error?: string },
        outcome: DeliveryAttemptOutcome,
        statusCode: number | null,
      ) =>
        database.transaction(async (tx) => {
          const r = notificationsRepo(tx.db);
          const ended =
            end.status === 'pending'
              ? await r.release(deliveryId, attempt, end.error ?? '')
              : await r.finish(deliveryId, attempt, {
                  status: end.status,
                  ...(end.error ? { error: end.error } : {}),
                });
          if (ended) {
            await r.recordAttempt({
              deliveryId,
              attempt,
              startedAt,
              statusCode,
              error: end.error ?? null,
              outcome,
            });
          }
        });
      let statusCode: number | null = null;
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
          ({ statusCode } = await sendWebhook(
            deps.fetch,
            {
              url: context.webhook.url,
              secret: deps.secretBox.open(context.webhook.secretEnc),
              deliveryId,
              body,
            },
            { timeoutMs: Math.max(1, Math.min(deps.webhookTimeoutMs, claimDeadline - Date.now())) },
          ));
        }
      } catch (err) {
        if (err instanceof SendRefusedError) {
          if (err.permanent || attempt >= MAX_DELIVERY_ATTEMPTS) {
            const outcome = err.permanent ? 'failed_permanently' : 'gave_up';
            await settle({ status: 'failed', error: err.message }, outcome, err.statusCode);
            log.info(
              { deliveryId, channel: claimed.channel, attempt, outcome, error: err.message },
              'notification delivery failed',
            );
            return 'failed';
          }
          await settle({ status: 'pending', error: err.message }, 'retrying', err.statusCode);
          throw new DeliveryRetryError(`delivery ${deliveryId} refused (${err.message}); retried later`);
        }
        const error = `outcome unknown: ${(err as Error).message}`;
        if (claimed.channel === 'webhook' && attempt < MAX_DELIVERY_ATTEMPTS) {
          // Safe to resend: the receiver recognises the delivery id it may already have.
          await settle({ status: 'pending', error }, 'retrying', null);
          throw new DeliveryRetryError(`delivery ${deliveryId}: ${error}; resent later with the same id`);
        }
        // E-mail has no such id on the receiving side: it may have arrived, so never again.
        await settle({ status: 'unknown', error }, 'unknown', null);
        log.warn({ deliveryId, channel: claimed.channel, error }, 'notification delivery outcome unknown');
        return 'unknown';
      }
      await settle({ status: 'delivered' }, 'delivered', statusCode);
      return 'delivered';
    },

    /**
     * Settles the claims whose lease ran out (their sender stopped: a crash, a kill, a lost
     * host). A webhook goes back to pending with a new delivery job, in one transaction, and is
     * resent with the same delivery id; an e-mail, or a webhook out of attempts, becomes
     * `unknown` and is reported. Two sweepers never settle one claim (locked rows are skipped,
     * and the update is fenced by the attempt number).
     */
    async sweepStaleClaims(): Promise<{ resent: string[]; unknown: string[] }> {
      return database.transaction(async (tx) => {
        const repo = notificationsRepo(tx.db);
        const resent: string[] = [];
        const unknown: string[] = [];
        for (const row of await repo.staleClaims(SWEEP_BATCH)) {
          const stopped = `the sender stopped during attempt ${row.attempts} (its claim expired)`;
          if (row.channel === 'webhook' && row.attempts < MAX_DELIVERY_ATTEMPTS && deps.queue) {
            const error = `${stopped}; resent with the same delivery id`;
            if (await repo.settleStale(row.id, row.attempts, { status: 'pending', error })) {
              await repo.recordAttempt({ ...attemptOf(row), error, outcome: 'retrying' });
              await deps.queue().enqueue(deliverNotificationJob, { deliveryId: row.id }, { tx });
              resent.push(row.id);
            }
          } else {
            const error = `outcome unknown: ${stopped}`;
            if (await repo.settleStale(row.id, row.attempts, { status: 'unknown', error })) {
              await repo.recordAttempt({ ...attemptOf(row), error, outcome: 'unknown' });
              unknown.push(row.id);
            }
          }
        }
        if (resent.length > 0) log.warn({ deliveries: resent }, 'stale webhook deliveries resent');
        if (unknown.length > 0)
          log.warn({ deliveries: unknown }, 'notification deliveries of a stopped sender: outcome unknown');
        return { resent, unknown };
      });
    },

    /**
     * Queues a delivery job again for pending deliveries that have had neither a claim nor a
     * queued job for {@link ORPHANED_AFTER_SECONDS} (a job whose retries ran out before it could
     * claim, or a job lost): without it they would stay pending for ever. The job and the mark
     * are written in one transaction; a second job for a delivery that still has one sends
     * nothing, since a delivery is sent only by the run that claims it.
     */
    async requeueOrphans(): Promise<string[]> {
      if (!deps.queue) return [];
      const queue = deps.queue;
      return database.transaction(async (tx) => {
        const repo = notificationsRepo(tx.db);
        const requeued: string[] = [];
        for (const row of await repo.orphanedPending(ORPHANED_AFTER_SECONDS, SWEEP_BATCH)) {
          await queue().enqueue(deliverNotificationJob, { deliveryId: row.id }, { tx });
          await repo.markEnqueued(
            row.id,
            `${row.lastError ? `${row.lastError}; ` : ''}no delivery job was left for it: queued again`,
          );
          requeued.push(row.id);
        }
        if (requeued.length > 0)
          log.warn({ deliveries: requeued }, 'pending deliveries without a job queued again');
        return requeued;
      });
    },
  };
}

export type NotificationDelivery = ReturnType<typeof createNotificationDelivery>;

/** The attempt a stale claim was: its number and when it was claimed. */
function attemptOf(row: DeliveryRow) {
  return {
    deliveryId: row.id,
    attempt: row.attempts,
    startedAt: row.claimedAt ?? row.createdAt,
    statusCode: null,
  };
}
