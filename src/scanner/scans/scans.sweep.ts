import { Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { Database } from '../../db/client.ts';
import { defineJob } from '../../jobs/queue.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';
import { scanRunJob, scanThreatModelJob } from './scans.jobs.ts';
import { scansRepo } from './scans.repo.ts';

/** The error code of a scan whose job gave up (stored on the scan, shown by getScan). */
export const SCAN_ABANDONED = 'SCAN_ABANDONED';

const ABANDONED_MESSAGE =
  'The scan job exhausted its retries without finishing. Retry the scan, or contact support if it fails again.';

/** At most this many scans are failed per sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 100;

/**
 * Every minute: fails the scans whose job gave up, so that no scan stays `preparing`, `queued`
 * or `running` forever with its credits held, and removes what was kept in the object store for
 * scans that are no longer active (see src/scanner/sources/scan-work.ts). Idempotent; overlapping runs on two workers only
 * share the work.
 */
export const scanSweepJob = defineJob({
  name: 'scan.sweep',
  version: 1,
  payload: Type.Object({}),
  schedule: '* * * * *',
  retryLimit: 0,
  handler: (deps: ScanSweepJobDeps) => async (_payload, context) => {
    const swept = await sweepAbandonedScans({
      database: deps.database,
      credits: deps.services.credits,
      leaseSeconds: deps.config.jobs.leaseSeconds,
      log: context.log,
    });
    if (swept.length > 0) context.log.info({ swept: swept.length }, 'abandoned scans failed');
    // What was kept for scans no longer active: the scans just failed, and any a worker killed
    // before the end of its scan could not clean up.
    const removed = await deps.services.scans.sweepScanWork();
    if (removed > 0) context.log.info({ scans: removed }, 'work of finished scans removed');
  },
});

/** What the sweep job needs of the worker: the database, credits to return and the job lease. */
export interface ScanSweepJobDeps {
  database: Database;
  config: { jobs: { leaseSeconds: number } };
  services: {
    credits: Pick<CreditsService, 'returnInTx'>;
    scans: { sweepScanWork(): Promise<number> };
  };
}

/*
 * SQL over a scan `s` (parameter $1: the lease in seconds). A scan's current step is driven by
 * one job: the threat-model job while `preparing`, the scan job once `queued`/`running`. pg-boss
 * keeps the payload as `{v, scanId}` in pgboss.job.data.
 */
const STEP_JOB_OF_SCAN = `
  j.name in ('${scanThreatModelJob.name}', '${scanRunJob.name}')
  and j.name = case s.status when 'preparing' then '${scanThreatModelJob.name}' else '${scanRunJob.name}' end
  and j.data->>'scanId' = s.id::text`;

/** A job that will still run: waiting, or active within its lease (or past it with a retry left). */
const LIVE_JOB = `(
  j.state in ('created', 'retry')
  or (j.state = 'active' and (j.started_on + j.expire_in > now() or j.retry_count < j.retry_limit)))`;

/** A job that will never run again: failed, or active past its lease on its last attempt. */
const DEAD_JOB = `(
  j.state = 'failed'
  or (j.state = 'active' and j.started_on + j.expire_in <= now() and j.retry_count >= j.retry_limit))`;

/**
 * An unfinished scan with no job that will still run, and either a job that gave up or no job at
 * all (archived or deleted) while the scan has not changed for longer than the lease.
 */
const ABANDONED_SCAN = `
  s.status in ('preparing', 'queued', 'running')
  and not exists (select 1 from pgboss.job j where ${STEP_JOB_OF_SCAN} and ${LIVE_JOB})
  and (
    exists (select 1 from pgboss.job j where ${STEP_JOB_OF_SCAN} and ${DEAD_JOB})
    or s.updated_at < now() - make_interval(secs => $1::int)
  )`;

/** What the sweep needs: the database, credits to return and the job lease. */
export interface ScanSweepDeps {
  database: Database;
  credits: Pick<CreditsService, 'returnInTx'>;
  /** The job lease (`config.jobs.leaseSeconds`): a scan without any job is left alone this long. */
  leaseSeconds: number;
  log: Logger;
}

/** The ids of unfinished scans whose job gave up (see ABANDONED_SCAN), oldest change first. */
export async function findAbandonedScanIds(
  deps: Pick<ScanSweepDeps, 'database' | 'leaseSeconds'>,
  limit = SWEEP_BATCH,
): Promise<string[]> {
  const { rows } = await deps.database.executeSql(
    `select s.id from scans s where ${ABANDONED_SCAN} order by s.updated_at limit $2::int`,
    [deps.leaseSeconds, limit],
  );
  return rows.map((r) => String(r.id));
}

/**
 * Fails one abandoned scan with SCAN_ABANDONED and returns its credits, in one transaction.
 * The abandonment is checked again under the scan's row lock, so a scan that completed,
 * failed, was cancelled or got a new job since it was found is left alone. True when it failed.
 */
export async function abandonScan(deps: Omit<ScanSweepDeps, 'log'>, scanId: string): Promise<boolean> {
  return deps.database.transaction(async (tx) => {
    // The row lock orders this against the job's completion, failure and a cancel: whichever
    // commits first wins, and the conditional UPDATE below sees its result.
    const locked = await scansRepo(tx.db).lock(scanId);
    if (!locked) return false;
    // Read after the lock, so the job states are the ones committed by now; the status
    // condition keeps a late completion (or cancel) from being overwritten.
    const { rows } = await tx.executeSql(
      `update scans s
          set status = 'failed', error_code = $2, error_message = $3, updated_at = now()
        where s.id = $4 and ${ABANDONED_SCAN}
        returning s.company_id`,
      [deps.leaseSeconds, SCAN_ABANDONED, ABANDONED_MESSAGE, scanId],
    );
    const [row] = rows;
    if (!row) return false;
    // Once per scan: returnInTx releases the reservation or refunds the consumed credits once.
    await deps.credits.returnInTx(tx, String(row.company_id), scanId);
    return true;
  });
}

/**
 * The sweep: fails every unfinished scan whose job exhausted its retries (or vanished) with
 * SCAN_ABANDONED and returns its credits. Scans whose job waits or runs within its lease are not
 * touched. Idempotent. Returns the ids of the scans it failed.
 */
export async function sweepAbandonedScans(deps: ScanSweepDeps): Promise<string[]> {
  const swept: string[] = [];
  for (const scanId of await findAbandonedScanIds(deps)) {
    if (await abandonScan(deps, scanId)) {
      deps.log.warn({ scanId }, 'scan abandoned by its job; failed and its credits returned');
      swept.push(scanId);
    }
  }
  return swept;
}
