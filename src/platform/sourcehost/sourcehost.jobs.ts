import { Type } from '@sinclair/typebox';
import { defineJob, handleJob, type JobRegistration } from '../../jobs/queue.ts';
import type { SourcehostService } from './sourcehost.service.ts';

/** Posts a finished scan's commit status to the source host (retried with backoff). */
export const sourcehostCommitStatusJob = defineJob({
  name: 'sourcehost.commit-status',
  version: 1,
  payload: Type.Object({ scanId: Type.String({ minLength: 36, maxLength: 36 }) }),
  retryLimit: 5,
  retryDelaySeconds: 10,
});

/** Deletes webhook deliveries past their 7-day retention, daily. */
export const sourcehostDeliveriesCleanupJob = defineJob({
  name: 'sourcehost.deliveries-cleanup',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '41 3 * * *',
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
});

export function sourcehostJobDefinitions() {
  return [sourcehostCommitStatusJob, sourcehostDeliveriesCleanupJob, sourcehostStatusSweepJob];
}

export function sourcehostJobRegistrations(deps: { sourcehost: SourcehostService }): JobRegistration[] {
  return [
    handleJob(sourcehostCommitStatusJob, (payload, context) =>
      deps.sourcehost.postStatus(payload.scanId, {
        finalAttempt: context.retryCount >= (sourcehostCommitStatusJob.retryLimit ?? 0),
      }),
    ),
    handleJob(sourcehostStatusSweepJob, async (_payload, context) => {
      const enqueued = await deps.sourcehost.sweepCommitStatuses();
      if (enqueued > 0) context.log.info({ enqueued }, 'commit statuses of finished scans enqueued');
    }),
    handleJob(sourcehostDeliveriesCleanupJob, async (_payload, context) => {
      const removed = await deps.sourcehost.purgeDeliveries();
      if (removed > 0) context.log.info({ removed }, 'old source-host webhook deliveries removed');
    }),
  ];
}
