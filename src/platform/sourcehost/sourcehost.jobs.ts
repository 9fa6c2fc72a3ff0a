import { Type } from '@sinclair/typebox';
import { defineJob } from '../../jobs/queue.ts';

/**
 * What the source-host jobs need of the sourcehost service. Declared here rather than imported,
 * so that the service can enqueue these jobs without an import cycle.
 */
export interface SourcehostJobDeps {
  services: {
    sourcehost: {
      postStatus(scanId: string, context: { finalAttempt: boolean }): Promise<void>;
      sweepCommitStatuses(): Promise<number>;
      purgeDeliveries(): Promise<number>;
    };
  };
}

/** Posts a finished scan's commit status to the source host (retried with backoff). */
export const sourcehostCommitStatusJob = defineJob({
  name: 'sourcehost.commit-status',
  version: 1,
  payload: Type.Object({ scanId: Type.String({ minLength: 36, maxLength: 36 }) }),
  retryLimit: 5,
  retryDelaySeconds: 10,
  handler:
    ({ services }: SourcehostJobDeps) =>
    (payload, context) =>
      services.sourcehost.postStatus(payload.scanId, context),
});

/** Deletes webhook deliveries past their 7-day retention, daily. */
export const sourcehostDeliveriesCleanupJob = defineJob({
  name: 'sourcehost.deliveries-cleanup',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '41 3 * * *',
  handler:
    ({ services }: SourcehostJobDeps) =>
    async (_payload, context) => {
      const removed = await services.sourcehost.purgeDeliveries();
      if (removed > 0) context.log.info({ removed }, 'old source-host webhook deliveries removed');
    },
});

/**
 * Every minute: enqueues the commit status of scans that ended without their hook (a scan failed
 * by the abandoned-scan sweep, or one that ended before its status row was written).
 */
export const sourcehostStatusSweepJob = defineJob({
  name: 'sourcehost.status-sweep',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '* * * * *',
  handler:
    ({ services }: SourcehostJobDeps) =>
    async (_payload, context) => {
      const enqueued = await services.sourcehost.sweepCommitStatuses();
      if (enqueued > 0) context.log.info({ enqueued }, 'commit statuses of finished scans enqueued');
    },
});
