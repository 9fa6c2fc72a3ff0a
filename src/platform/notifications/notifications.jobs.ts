import { Type } from '@sinclair/typebox';
import { defineJob, handleJob, type JobRegistration } from '../../jobs/queue.ts';
import type { NotificationDelivery } from './notifications.delivery.ts';

/**
 * Delivers one notification over one channel (e-mail or company webhook). Enqueued in the
 * transaction that creates the notification. A refused attempt is retried with exponential
 * backoff; the delivery row's claim keeps every retry and every worker from sending twice.
 */
export const deliverNotificationJob = defineJob({
  name: 'notification.deliver',
  version: 1,
  payload: Type.Object({ deliveryId: Type.String({ minLength: 36, maxLength: 36 }) }),
  retryLimit: 6,
  retryDelaySeconds: 15,
  leaseSeconds: 120,
});

/** The delivery job's handler. */
export function deliverNotificationRegistration(delivery: NotificationDelivery): JobRegistration {
  return handleJob(deliverNotificationJob, async ({ deliveryId }, context) => {
    const outcome = await delivery.deliver(deliveryId);
    context.log.info({ deliveryId, outcome }, 'notification delivery');
  });
}

/**
 * Every minute: settles deliveries whose claim expired because their sender stopped (see
 * `sweepStaleClaims`), so that none stays `sending` forever.
 */
export const deliverySweepJob = defineJob({
  name: 'notification.delivery-sweep',
  version: 1,
  payload: Type.Object({}),
  schedule: '* * * * *',
  retryLimit: 0,
});

/** The delivery sweep's handler. */
export function deliverySweepRegistration(delivery: NotificationDelivery): JobRegistration {
  return handleJob(deliverySweepJob, async (_payload, context) => {
    const { resent, unknown } = await delivery.sweepStaleClaims();
    if (resent.length + unknown.length > 0)
      context.log.info({ resent: resent.length, unknown: unknown.length }, 'stale delivery claims settled');
  });
}
