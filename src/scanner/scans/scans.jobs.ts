import { Type } from '@sinclair/typebox';
import { defineJob, type JobContext } from '../../jobs/queue.ts';

const ScanJobPayloadSchema = Type.Object({ scanId: Type.String({ minLength: 36, maxLength: 36 }) });

/**
 * What the scan jobs need of the scans service. Declared here rather than imported, so that the
 * service can enqueue these jobs without an import cycle.
 */
export interface ScanJobDeps {
  services: {
    scans: {
      prepareScan(scanId: string, context: JobContext): Promise<void>;
      runScan(scanId: string, context: JobContext): Promise<void>;
    };
    idempotency: { deleteExpired(): Promise<number> };
  };
}

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
  handler:
    ({ services }: ScanJobDeps) =>
    (payload, context) =>
      services.scans.prepareScan(payload.scanId, context),
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
  handler:
    ({ services }: ScanJobDeps) =>
    (payload, context) =>
      services.scans.runScan(payload.scanId, context),
});

/** Deletes expired Idempotency-Key records (they already count as absent once expired). */
export const idempotencyCleanupJob = defineJob({
  name: 'idempotency.cleanup',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '23 * * * *',
  handler:
    ({ services }: ScanJobDeps) =>
    async (_payload, context) => {
      const deleted = await services.idempotency.deleteExpired();
      if (deleted > 0) context.log.info({ deleted }, 'expired idempotency records deleted');
    },
});
