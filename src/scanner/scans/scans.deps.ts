/** What the scans service and its parts are given, and how a job run was started. */
import type { Logger } from 'pino';
import type { Database, Tx } from '../../db/client.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';
import type { CursorCodec } from '../../platform/pagination/cursor.ts';
import type { IdempotencyService } from '../idempotency/idempotency.service.ts';
import type { ScanWork } from '../sources/scan-work.ts';
import type { OpenScanSources, ScanEngine } from './scans.ports.ts';

export interface ScansServiceDeps {
  database: Database;
  /** The job queue, read when a job is enqueued. */
  queue: () => Pick<JobQueue, 'enqueue'>;
  credits: Pick<CreditsService, 'costOf' | 'reserveInTx' | 'consumeInTx' | 'returnInTx'>;
  idempotency: Pick<IdempotencyService, 'execute'>;
  engine: ScanEngine;
  openSources: OpenScanSources;
  /**
   * What a scan's first job keeps for its later jobs on any worker: a sourcehost scan's fetched
   * sources (fetched once per scan) and the engine's pass (each file parsed once per scan).
   */
  scanWork: Pick<
    ScanWork,
    'saveSources' | 'openSources' | 'saveAnalysis' | 'openAnalysis' | 'remove' | 'scanIds'
  >;
  log: Logger;
  /** Signs and checks the cursors of the scan list. */
  cursors: Pick<CursorCodec, 'decode' | 'pageOf'>;
  /**
   * Base of the rule pages linked from reports (`…/docs/rules` at this server's public address);
   * without one, reports link the repository's rule catalogue.
   */
  rulesUrl?: string;
  /** Called in the transaction that moves a scan to `completed`, `failed` or `cancelled`. */
  afterScanFinished?: (tx: Tx, scanId: string) => Promise<void>;
}

/** How a job run was started: its abort signal (worker shutdown) and whether it is the last attempt. */
export interface JobRunContext {
  signal: AbortSignal;
  finalAttempt: boolean;
  log: Logger;
}

/**
 * Scans, composed of their parts: creation (idempotent, reserving credits; scans.create.ts), what
 * callers read and cancel (scans.reads.ts), the lifecycle jobs (threat model, then the paid scan;
 * scans.run.ts) and the work kept between jobs (scans.work.ts).
 */
