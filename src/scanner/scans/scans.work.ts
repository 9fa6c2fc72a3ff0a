import type { Tx } from '../../db/client.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import { AppError } from '../../errors.ts';
import type { ScansServiceDeps } from './scans.deps.ts';
import type { scanRunJob, scanThreatModelJob } from './scans.jobs.ts';
import type { ScanRow } from './scans.repo.ts';
import { scansRepo } from './scans.repo.ts';

/**
 * What every part of the scan lifecycle shares: the scan's sources (fetched once per scan and
 * kept for its later jobs), the removal of what was kept, and enqueueing in a transaction.
 */
export function createScanWorkAccess(deps: ScansServiceDeps) {
  const { database, queue, openSources, scanWork, log } = deps;

  const fetchesSources = (scan: Pick<ScanRow, 'sources'>): boolean =>
    scan.sources.some((s) => s.kind === 'sourcehost');

  /**
   * The scan's sources as a tree (the caller closes it). Local archives are read from the object
   * store. A sourcehost commit is fetched by the first job of the scan that needs it and kept in
   * the scan's work (src/scanner/sources/scan-work.ts); later jobs, on any worker, read it from
   * there. Sources that cannot be kept are not an error: the next job fetches them again.
   */
  async function openScanTree(scan: ScanRow, signal: AbortSignal): Promise<SourceTree> {
    if (!fetchesSources(scan)) {
      return openSources({ companyId: scan.companyId, prefix: scan.prefix, sources: scan.sources, signal });
    }
    const kept = await scanWork.openSources(scan.id, signal);
    if (kept) return kept;
    const tree = await openSources({
      companyId: scan.companyId,
      prefix: scan.prefix,
      sources: scan.sources,
      signal,
    });
    try {
      await scanWork.saveSources(scan.id, tree, signal);
    } catch (err) {
      if (signal.aborted) {
        await tree.close();
        throw signal.reason;
      }
      log.warn({ err, scanId: scan.id }, 'sources not kept; a later job fetches them again');
    }
    return tree;
  }

  /** Removes what was kept for a finished scan; anything left behind is removed by the sweep. */
  async function dropScanWork(scanId: string): Promise<void> {
    await scanWork
      .remove(scanId)
      .catch((err: unknown) => log.warn({ err, scanId }, 'scan work not removed; the sweep removes it'));
  }

  /** Enqueues in the transaction; a queue that cannot take the job is a retryable 503. */
  async function enqueueInTx(
    tx: Tx,
    definition: typeof scanThreatModelJob | typeof scanRunJob,
    scanId: string,
  ): Promise<void> {
    try {
      await queue().enqueue(definition, { scanId }, { tx });
    } catch (err) {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: 'The job queue is unavailable; retry the identical request.',
        headers: { 'retry-after': '5' },
        cause: err,
      });
    }
  }

  return {
    openScanTree,
    dropScanWork,
    enqueueInTx,

    /**
     * Removes what was kept for scans that are no longer active (completed, failed, cancelled,
     * abandoned or gone): what a process could not remove itself because it died. Returns how
     * many scans' work it removed.
     */
    async sweepScanWork(): Promise<number> {
      let removed = 0;
      let batch: string[] = [];
      const flush = async () => {
        const active = await scansRepo(database.db).activeIds(batch);
        for (const scanId of batch) {
          if (active.has(scanId)) continue;
          await scanWork.remove(scanId);
          removed++;
        }
        batch = [];
      };
      for await (const scanId of scanWork.scanIds()) {
        batch.push(scanId);
        if (batch.length >= 500) await flush();
      }
      if (batch.length > 0) await flush();
      return removed;
    },
  };
}

export type ScanWorkAccess = ReturnType<typeof createScanWorkAccess>;
