import { isConnectionError } from '../../db/client.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import type { EngineVulnerability } from '../../engine/types.ts';
import { isAppError } from '../../errors.ts';
import { compareScanInTx } from '../drafts/drafts.compare.ts';
import type { JobRunContext, ScansServiceDeps } from './scans.deps.ts';
import { scanRunJob } from './scans.jobs.ts';
import type { ScanEngine, ThreatModel } from './scans.ports.ts';
import { type DraftFindingInput, type ScanRow, scansRepo } from './scans.repo.ts';
import type { ScanWorkAccess } from './scans.work.ts';

/** How often a running scan re-reads its status to notice a cancel. */
const CANCEL_POLL_MS = 500;
/** Progress is written at most this often (and once at the end). */
const PROGRESS_WRITE_MS = 500;
/** Findings written per transaction when a scan completes. */
const FINDINGS_BATCH = 500;

function toDraft(v: EngineVulnerability): DraftFindingInput {
  const identifiers = [{ type: 'vigil_rule', name: v.ruleId, value: v.ruleId }];
  if (v.swc) identifiers.push({ type: 'swc', name: v.swc, value: v.swc.replace(/^SWC-/, '') });
  if (v.cwe) identifiers.push({ type: 'cwe', name: v.cwe, value: v.cwe.replace(/^CWE-/, '') });
  return {
    fingerprint: v.fingerprint,
    ruleId: v.ruleId,
    title: v.title,
    description: v.description,
    severity: v.severity,
    category: v.category,
    confidence: v.confidence,
    identifiers,
    location: v.location,
    details: {
      remediation: v.remediation,
      ruleTitle: v.title,
      ...(v.snippet !== undefined ? { snippet: v.snippet } : {}),
      ...(v.contract !== undefined ? { contract: v.contract } : {}),
      ...(v.function !== undefined ? { function: v.function } : {}),
      ...(v.swc !== undefined ? { swc: v.swc } : {}),
      ...(v.cwe !== undefined ? { cwe: v.cwe } : {}),
    },
  };
}

/** Whether a job failure is worth another attempt rather than failing the scan now. */
function isTransient(err: unknown, context: JobRunContext): boolean {
  if (context.signal.aborted) return true; // worker shutdown: another worker takes the job over
  if (isConnectionError(err)) return true;
  if (isAppError(err)) return err.code === 'SERVICE_UNAVAILABLE' && !context.finalAttempt;
  return !context.finalAttempt;
}

function failureOf(err: unknown, fallbackCode: string): { code: string; message: string } {
  if (isAppError(err)) return { code: err.code, message: err.message };
  return { code: fallbackCode, message: 'The scan engine failed on these sources.' };
}

/**
 * Scans: creation (idempotent, reserving credits), the lifecycle jobs (threat model, then the
 * paid scan), status, cancel, report and threat model. Every status change after creation takes
 * the scan row's lock and checks the state it expects, so racing changes end in one final state.

/**
 * The lifecycle jobs: the threat model (which starts the paid scan) and the scan itself. Every
 * status change takes the scan row's lock and checks the state it expects.
 */
export function createScanJobs(deps: ScansServiceDeps, work: ScanWorkAccess) {
  const { database, credits, engine, scanWork } = deps;
  const { openScanTree, dropScanWork, enqueueInTx } = work;

  async function failScan(
    scanId: string,
    from: ScanRow['status'][],
    failure: { code: string; message: string },
  ) {
    const failed = await database.transaction(async (tx) => {
      const repo = scansRepo(tx.db);
      const scan = await repo.lock(scanId);
      if (!scan || !from.includes(scan.status)) return undefined;
      await repo.update(scanId, { status: 'failed', errorCode: failure.code, errorMessage: failure.message });
      await credits.returnInTx(tx, scan.companyId, scanId);
      await deps.afterScanFinished?.(tx, scanId);
      return scan;
    });
    if (failed) await dropScanWork(scanId);
  }

  return {
    /**
     * The threat-model job. Idempotent: a scan past `preparing` is left alone; the start
     * (consume, `queued`, enqueue `scan.run`) is one transaction under the scan's row lock.
     */
    async prepareScan(scanId: string, context: JobRunContext): Promise<void> {
      const scan = await scansRepo(database.db).findById(scanId);
      if (scan?.status !== 'preparing') return;
      let threatModel: ThreatModel;
      let tree: SourceTree | undefined;
      try {
        tree = await openScanTree(scan, context.signal);
        // One pass: the threat model, and the rule results the scan job takes over.
        const pass = await engine.analyzeTree(tree, { type: scan.type, signal: context.signal });
        threatModel = pass.threatModel;
        await scanWork.saveAnalysis(scanId, pass.prepared).catch((err: unknown) => {
          context.signal.throwIfAborted();
          context.log.warn({ err, scanId }, 'analysis not kept; the scan job analyses the sources again');
        });
      } catch (err) {
        if (isTransient(err, context)) throw err;
        context.log.warn({ err, scanId }, 'threat model failed; the scan fails and its credits are returned');
        await failScan(scanId, ['preparing'], failureOf(err, 'THREAT_MODEL_FAILED'));
        return;
      } finally {
        await tree?.close();
      }
      await database.transaction(async (tx) => {
        const repo = scansRepo(tx.db);
        const locked = await repo.lock(scanId);
        if (locked?.status !== 'preparing') return;
        await credits.consumeInTx(tx, locked.companyId, scanId);
        await repo.update(scanId, { threatModel, status: 'queued', startedAt: new Date() });
        await enqueueInTx(tx, scanRunJob, scanId);
      });
    },

    /**
     * The scan job. Idempotent: findings are upserted by fingerprint and linked once, and the
     * completion is one transaction that happens only if the scan is still `running`. Cancels
     * are noticed between files by re-reading the status; the engine stops through the signal.
     */
    async runScan(scanId: string, context: JobRunContext): Promise<void> {
      const repo = scansRepo(database.db);
      const scan = await repo.findById(scanId);
      if (!scan || (scan.status !== 'queued' && scan.status !== 'running')) return;
      // `running` → `running` too: a retried job (the previous worker died) starts over.
      if (!(await repo.transition(scanId, ['queued', 'running'], { status: 'running', filesDone: 0 })))
        return;

      const controller = new AbortController();
      let cancelled = false;
      const onShutdown = () => controller.abort(context.signal.reason);
      context.signal.addEventListener('abort', onShutdown, { once: true });
      const poll = setInterval(() => {
        repo
          .statusOf(scanId)
          .then((status) => {
            if (status !== 'running') {
              cancelled = true;
              controller.abort(new Error(`scan is ${status ?? 'gone'}`));
            }
          })
          .catch(() => {}); // a missed poll is retried on the next tick
      }, CANCEL_POLL_MS);
      let lastWrite = 0;
      let pending: Promise<void> = Promise.resolve();
      let last: { filesDone: number; filesTotal: number } | undefined;
      const onProgress = (p: { filesDone: number; filesTotal: number }) => {
        last = p;
        const now = Date.now();
        if (now - lastWrite < PROGRESS_WRITE_MS && p.filesDone < p.filesTotal) return;
        lastWrite = now;
        // Progress writes are chained so that an older count never lands after a newer one.
        pending = pending.then(() => repo.writeProgress(scanId, p.filesDone, p.filesTotal)).catch(() => {});
      };

      let result: Awaited<ReturnType<ScanEngine['scanTree']>>;
      try {
        const tree = await openScanTree(scan, controller.signal);
        try {
          const threatModel = (await repo.findThreatModel(scan.companyId, scanId))?.threatModel;
          // The threat-model job's pass over the same sources: its files are not parsed again.
          const prepared = threatModel
            ? await scanWork.openAnalysis(scanId).catch((err: unknown) => {
                context.log.warn({ err, scanId }, 'kept analysis unreadable; the sources are analysed again');
                return null;
              })
            : null;
          result = await engine.scanTree(tree, {
            type: scan.type,
            ...(threatModel ? { threatModel } : {}),
            ...(prepared ? { prepared } : {}),
            signal: controller.signal,
            onProgress,
          });
        } finally {
          await tree.close();
        }
      } catch (err) {
        if (cancelled) return;
        if (isTransient(err, context)) throw err;
        context.log.warn({ err, scanId }, 'scan failed; its credits are refunded');
        await failScan(scanId, ['running'], failureOf(err, 'SCAN_ENGINE_ERROR'));
        return;
      } finally {
        clearInterval(poll);
        context.signal.removeEventListener('abort', onShutdown);
        await pending;
      }
      if (cancelled) return;

      // Findings are written in bounded batches, each its own short transaction under the scan's
      // row lock, so that no request waits behind one long completion. A cancel (or sweep) that
      // wins the lock between batches stops the writing, and what this run stored is removed.
      const drafts = result.vulnerabilities.map(toDraft);
      for (let i = 0; i < drafts.length; i += FINDINGS_BATCH) {
        const batch = drafts.slice(i, i + FINDINGS_BATCH);
        const written = await database.transaction(async (tx) => {
          const txRepo = scansRepo(tx.db);
          const locked = await txRepo.lock(scanId);
          if (locked?.status !== 'running') return false;
          await txRepo.upsertFindings(locked, batch);
          return true;
        });
        if (!written) {
          await database.transaction((tx) => scansRepo(tx.db).removeRunFindings(scanId));
          return;
        }
      }
      await database.transaction(async (tx) => {
        const txRepo = scansRepo(tx.db);
        const locked = await txRepo.lock(scanId);
        // A cancel that won the lock keeps the scan cancelled; nothing of this run is stored.
        if (locked?.status !== 'running') {
          await txRepo.removeRunFindings(scanId);
          return;
        }
        const findingsCount = await txRepo.countScanFindings(scanId);
        // The drafts against the baseline, before anything that reads the scan as completed.
        await compareScanInTx(tx.db, locked);
        await txRepo.update(scanId, {
          status: 'completed',
          completedAt: new Date(),
          findingsCount,
          filesDone: last?.filesTotal ?? result.stats.files,
          filesTotal: last?.filesTotal ?? result.stats.files,
          report: { messages: result.messages, stats: result.stats },
          filesOverBudget: result.filesOverBudget ?? [],
        });
        await deps.afterScanFinished?.(tx, scanId);
      });
      await dropScanWork(scanId);
    },
  };
}
