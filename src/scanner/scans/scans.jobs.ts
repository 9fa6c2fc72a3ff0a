import { Type } from '@sinclair/typebox';
import { defineJob, handleJob, type JobContext, type JobRegistration } from '../../jobs/queue.ts';
import type { IdempotencyService } from '../idempotency/idempotency.service.ts';
import type { ScansService } from './scans.service.ts';

const ScanJobPayloadSchema = Type.Object({ scanId: Type.String({ minLength: 36, maxLength: 36 }) });

/**
 * The unattended step after createScan: materialize the sources, build and store the threat
 * model, then start the paid scan (consume the reservation, status `queued`, enqueue `scan.run`).
 * A running job is watched by its heartbeat (see src/jobs/queue.ts), as for `scan.run`.
 */
export const scanThreatModelJob = defineJob({
  name: 'scan.threat-model',
  version: 1,
  payload: ScanJobPayloadSchema,
  retryLimit: 3,
  retryDelaySeconds: 5,
});

/**
 * The paid scan: run the engine, store draft findings and the report, complete the scan.
 * While it runs its worker writes a heartbeat; when the heartbeat is older than
 * VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS the worker is taken for dead and the job is run again by
 * another worker (the result stays correct: completion is guarded by the scan's status and
 * findings are upserted). A live worker's scan is never taken over, however long it runs.
 */
export const scanRunJob = defineJob({
  name: 'scan.run',
  version: 1,
  payload: ScanJobPayloadSchema,
  retryLimit: 3,
  retryDelaySeconds: 5,
});

/** Deletes expired Idempotency-Key records (they already count as absent once expired). */
export const idempotencyCleanupJob = defineJob({
  name: 'idempotency.cleanup',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '23 * * * *',
});

/** The job definitions of the scan lifecycle, for the queue to create. */
export function scanJobDefinitions() {
  return [scanThreatModelJob, scanRunJob, idempotencyCleanupJob];
}

/** Whether this run is the job's last attempt (then a transient failure fails the scan). */
function isFinalAttempt(context: JobContext, retryLimit: number | undefined): boolean {
  return context.retryCount >= (retryLimit ?? 3);
}

/** The handlers of the scan lifecycle jobs. */
export function scanJobRegistrations(deps: {
  scans: ScansService;
  idempotency: IdempotencyService;
}): JobRegistration[] {
  return [
    handleJob(scanThreatModelJob, (payload, context) =>
      deps.scans.prepareScan(payload.scanId, {
        signal: context.signal,
        finalAttempt: isFinalAttempt(context, scanThreatModelJob.retryLimit),
        log: context.log,
      }),
    ),
    handleJob(scanRunJob, (payload, context) =>
      deps.scans.runScan(payload.scanId, {
        signal: context.signal,
        finalAttempt: isFinalAttempt(context, scanRunJob.retryLimit),
        log: context.log,
      }),
    ),
    handleJob(idempotencyCleanupJob, async (_payload, context) => {
      const deleted = await deps.idempotency.deleteExpired();
      if (deleted > 0) context.log.info({ deleted }, 'expired idempotency records deleted');
    }),
  ];
}
