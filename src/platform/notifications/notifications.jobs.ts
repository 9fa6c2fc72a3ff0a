import { Type } from '@sinclair/typebox';
import { defineJob } from '../../jobs/queue.ts';

/**
 * What the notification jobs need of the delivery service. Declared here rather than imported,
 * so that the service can enqueue these jobs without an import cycle.
 */
export interface NotificationJobDeps {
  services: {
    notificationDelivery: {
      deliver(deliveryId: string): Promise<string>;
      sweepStaleClaims(): Promise<{ resent: string[]; unknown: string[] }>;
      requeueOrphans(): Promise<string[]>;
    };
  };
}

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
  handler:
    ({ services }: NotificationJobDeps) =>
    async ({ deliveryId }, context) => {
      const outcome = await services.notificationDelivery.deliver(deliveryId);
      context.log.info({ deliveryId, outcome }, 'notification delivery');
    },
});

/**
 * Every minute: settles deliveries whose claim expired because their sender stopped (see
 * `sweepStaleClaims`), so that none stays `sending` forever, and queues a job again for pending
 * deliveries that lost theirs (`requeueOrphans`), so that none stays `pending` forever.
 */
export const deliverySweepJob = defineJob({
  name: 'notification.delivery-sweep',
  version: 1,
  payload: Type.Object({}),
  schedule: '* * * * *',
  retryLimit: 0,
  handler:
    ({ services }: NotificationJobDeps) =>
    async (_payload, context) => {
      const { resent, unknown } = await services.notificationDelivery.sweepStaleClaims();
      if (resent.length + unknown.length > 0)
        context.log.info({ resent: resent.length, unknown: unknown.length }, 'stale delivery claims settled');
      const requeued = await services.notificationDelivery.requeueOrphans();
      if (requeued.length > 0)
        context.log.info({ requeued: requeued.length }, 'pending deliveries queued again');
    },
});
