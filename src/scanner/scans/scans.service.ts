import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServiceActor } from '../../auth/actor.ts';
import { type Database, isConnectionError, type Tx } from '../../db/client.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import type { EngineVulnerability } from '../../engine/types.ts';
import { AppError, isAppError } from '../../errors.ts';
import { normalizeCommitId } from '../../integrations/sourcehost/repository-ref.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';
import {
  createLinked,
  findActiveLinked,
  getWorkspace,
  normalizePrefix,
  parseRepository,
  type Workspace,
} from '../../organization/workspaces/workspaces.service.ts';
import type { IdempotencyService, IdempotentOutcome } from '../idempotency/idempotency.service.ts';
import { validateLocalSources } from '../sources/scan-sources.ts';
import type { ScanWork } from '../sources/scan-work.ts';
import { scanRunJob, scanThreatModelJob } from './scans.jobs.ts';
import type { OpenScanSources, ScanEngine, ThreatModel } from './scans.ports.ts';
import { type DraftFindingInput, type ScanRow, type ScanStatusRow, scansRepo } from './scans.repo.ts';
import { buildSarifReport, buildSastReport, type ReportFinding, type ReportScan } from './scans.report.ts';
import type { AcceptedScan, CreateScanRequest, ScanSource, ScanStatus } from './scans.schemas.ts';

/** The path createScan's idempotency fingerprint is computed over. */
export const CREATE_SCAN_PATH = '/api/scanner/v1/scans';

/** How often a running scan re-reads its status to notice a cancel. */
const CANCEL_POLL_MS = 500;
/** Progress is written at most this often (and once at the end). */
const PROGRESS_WRITE_MS = 500;
/** Findings written per transaction when a scan completes. */
const FINDINGS_BATCH = 500;

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

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The API shape of a scan. */
export function toScanStatus(row: ScanRow): ScanStatus {
  return scanStatusOf({
    ...row,
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
    cancelledAt: iso(row.cancelledAt),
  });
}

/** The API shape of a scan from its status columns (timestamps already in the API's format). */
function scanStatusOf(row: ScanStatusRow): ScanStatus {
  return {
    id: row.id,
    status: row.status,
    type: row.type,
    workspaceId: row.workspaceId,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    completedAt: row.completedAt,
    cancelledAt: row.cancelledAt,
    progress: { filesTotal: row.filesTotal, filesDone: row.filesDone },
    findingsCount: row.findingsCount,
    ...(row.status === 'failed' && row.errorCode
      ? { error: { code: row.errorCode, message: row.errorMessage ?? 'The scan failed.' } }
      : {}),
    ...(row.status === 'completed' ? { analysis: { filesOverBudget: row.filesOverBudget ?? [] } } : {}),
  };
}

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
 */
export function createScansService(deps: ScansServiceDeps) {
  const { database, queue, credits, idempotency, engine, openSources } = deps;
  const { scanWork, log } = deps;

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

  /** Checks the source combination; returns the sourcehost repository (if any) and the local sources. */
  function checkSources(body: CreateScanRequest) {
    const kinds = new Set(body.scanSources.map((s) => s.kind));
    if (kinds.size > 1) {
      throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
        message: 'A scan reads either sourcehost commits or local archives, not both.',
      });
    }
    const hosted = body.scanSources.filter(
      (s): s is Extract<ScanSource, { kind: 'sourcehost' }> => s.kind === 'sourcehost',
    );
    const local = body.scanSources.filter(
      (s): s is Extract<ScanSource, { kind: 'local' }> => s.kind === 'local',
    );
    if (local.length > 0 && body.type !== 'standard') {
      throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
        message: `Local-source archives support standard scans only, not ${body.type}.`,
        details: { type: body.type },
      });
    }
    if (hosted.length > 1) {
      throw new AppError('VALIDATION_FAILED', {
        message: 'A scan reads one sourcehost commit.',
        details: { field: 'scanSources' },
      });
    }
    let repository: string | null = null;
    for (const [i, source] of hosted.entries()) {
      if (normalizeCommitId(source.commit) === null) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'A sourcehost commit must be a full 40-hex commit id (not a branch, tag or short id).',
          details: { field: `scanSources.${i}.commit` },
        });
      }
      const name = parseRepository(source.repository).fullName;
      if (repository !== null && name !== repository) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'All sourcehost sources of one scan must name the same repository.',
          details: { field: 'scanSources' },
        });
      }
      repository = name;
    }
    return { repository, hosted, local };
  }

  async function resolveWorkspace(
    tx: Tx,
    companyId: string,
    body: CreateScanRequest,
    repository: string | null,
    archiveWorkspaceIds: string[],
  ): Promise<Workspace> {
    if (body.workspaceId) {
      const workspace = await getWorkspace(tx.db, companyId, body.workspaceId);
      if (!workspace.active) {
        throw new AppError('NOT_FOUND', {
          message: 'Workspace not found.',
          details: { workspaceId: body.workspaceId },
        });
      }
      if (repository !== null && workspace.repository !== null && workspace.repository !== repository) {
        throw new AppError('CONFLICT', {
          message: `Workspace ${workspace.id} is linked to ${workspace.repository}, not ${repository}.`,
          details: { workspaceId: workspace.id },
        });
      }
      return workspace;
    }
    if (repository !== null) {
      const matches = await findActiveLinked(tx.db, companyId, repository, body.prefix);
      if (matches.length > 1) {
        throw new AppError('AMBIGUOUS_WORKSPACE', {
          details: { workspaces: matches.map((w) => ({ id: w.id, prefix: w.prefix, name: w.name })) },
        });
      }
      const [only] = matches;
      if (only) return only;
      // createLinked serializes concurrent creations for one repository and prefix.
      return createLinked(tx, companyId, {
        repository,
        ...(body.prefix !== undefined ? { prefix: body.prefix } : {}),
      });
    }
    const distinct = [...new Set(archiveWorkspaceIds)];
    if (distinct.length !== 1 || distinct[0] === undefined) {
      throw new AppError('VALIDATION_FAILED', {
        message: 'The archives belong to different workspaces; pass workspaceId.',
        details: { field: 'workspaceId' },
      });
    }
    return getWorkspace(tx.db, companyId, distinct[0]);
  }

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

  async function requireScan(companyId: string, scanId: string): Promise<ScanRow> {
    const scan = await scansRepo(database.db).findForCompany(companyId, scanId);
    if (!scan) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
    return scan;
  }

  const service = {
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

    /**
     * createScan: validates, resolves the workspace, checks local archives, reserves credits,
     * stores the scan `preparing` and enqueues the threat-model job — in one transaction with the
     * idempotency record, so that a retry with the same key replays instead of creating again.
     */
    async createScan(
      actor: ServiceActor,
      key: string,
      body: CreateScanRequest,
    ): Promise<IdempotentOutcome<AcceptedScan>> {
      return service.createScanFor(
        // A console session has no service key to record.
        { companyId: actor.organizationId, createdByKey: actor.sessionUserId ? null : actor.credentialId },
        key,
        body,
      );
    },

    /**
     * createScan for an organization, by a service key or (`createdByKey: null`) by the service
     * itself (scans a source-host webhook triggers): the same validation, credits and idempotency.
     */
    async createScanFor(
      origin: { companyId: string; createdByKey: string | null },
      key: string,
      body: CreateScanRequest,
    ): Promise<IdempotentOutcome<AcceptedScan>> {
      const { companyId } = origin;
      return idempotency.execute<AcceptedScan>(
        { companyId, key, method: 'POST', path: CREATE_SCAN_PATH, body },
        async (claim) => {
          const { repository, hosted, local } = checkSources(body);
          const prefix = body.prefix === undefined ? undefined : normalizePrefix(body.prefix);
          if (hosted.length > 0 && !(await scansRepo(database.db).hasSourcehostIntegration(companyId))) {
            throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
              message: 'The sourcehost integration is not connected for this organization.',
            });
          }
          // A lost database surfaces as 503 through the error handler, after the claim is released.
          return await database.transaction(async (tx) => {
            await claim.lockInTx(tx);
            const repo = scansRepo(tx.db);
            // Completed archives of this organization with the sha256 given (404 otherwise).
            const archives = await validateLocalSources(tx.db, companyId, local);
            const workspace = await resolveWorkspace(
              tx,
              companyId,
              body,
              repository,
              archives.map((a) => a.workspaceId),
            );
            // A scan's sources are all local or all sourcehost (checkSources), so for local
            // sources `archives` is in the order of `body.scanSources`.
            const sources: ScanSource[] = body.scanSources.map((s, i) =>
              s.kind === 'local'
                ? {
                    kind: 'local',
                    archiveId: s.archiveId,
                    sha256: s.sha256.toLowerCase(),
                    path: archives[i]?.mountPath ?? '',
                  }
                : {
                    kind: 'sourcehost',
                    repository: parseRepository(s.repository).fullName,
                    commit: s.commit,
                  },
            );
            const scanId = randomUUID();
            const cost = credits.costOf(body.type);
            const scan = await repo.insert({
              id: scanId,
              companyId,
              workspaceId: workspace.id,
              type: body.type,
              status: 'preparing',
              sources,
              prefix: prefix ?? workspace.prefix,
              cost,
              createdByKey: origin.createdByKey,
            });
            await repo.insertArchives(
              archives.map((archive, position) => ({
                scanId,
                archiveId: archive.archiveId,
                mountPath: archive.mountPath,
                position,
              })),
            );
            // The balance check and the reservation are one statement (see credits.repo).
            await credits.reserveInTx(tx, companyId, scanId, cost);
            await enqueueInTx(tx, scanThreatModelJob, scanId);
            const accepted: AcceptedScan = {
              id: scan.id,
              status: 'preparing',
              type: scan.type,
              workspaceId: scan.workspaceId,
              createdAt: scan.createdAt.toISOString(),
            };
            return claim.completeInTx(tx, { status: 202, body: accepted });
          });
        },
      );
    },

    /** listScans (extension): the organization's scans, newest first. */
    async listScans(
      actor: ServiceActor,
      options: { status?: ScanStatus['status']; limit?: number },
    ): Promise<{ scans: ScanStatus[] }> {
      const rows = await scansRepo(database.db).listForCompany(actor.organizationId, {
        ...(options.status ? { status: options.status } : {}),
        limit: options.limit ?? 20,
      });
      return { scans: rows.map(scanStatusOf) };
    },

    /** getScan. */
    async getScan(actor: ServiceActor, scanId: string): Promise<ScanStatus> {
      const row = await scansRepo(database.db).findStatusForCompany(actor.organizationId, scanId);
      if (!row) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
      return scanStatusOf(row);
    },

    /**
     * cancelScan: `queued`/`running` → `cancelled`; `cancelled` → unchanged (200);
     * `completed`/`failed` → 409 SCAN_NOT_CANCELLABLE; `preparing` → 409 SCAN_NOT_STARTED.
     * Credits: a scan cancelled while `queued` (no file analysed yet) is refunded; a scan
     * cancelled while `running` keeps the credits it consumed.
     */
    async cancelScan(actor: ServiceActor, scanId: string): Promise<ScanStatus> {
      const companyId = actor.organizationId;
      const row = await database.transaction(async (tx) => {
        const repo = scansRepo(tx.db);
        // The row lock orders this cancel against the job's start, completion and failure.
        const locked = await repo.lockForCompany(companyId, scanId);
        if (!locked) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
        switch (locked.status) {
          case 'cancelled':
            return locked;
          case 'completed':
          case 'failed':
            throw new AppError('SCAN_NOT_CANCELLABLE', { details: { status: locked.status } });
          case 'preparing':
            throw new AppError('SCAN_NOT_STARTED');
        }
        const cancelled = (await repo.update(scanId, { status: 'cancelled', cancelledAt: new Date() }))!;
        if (locked.status === 'queued') await credits.returnInTx(tx, companyId, scanId);
        await deps.afterScanFinished?.(tx, scanId);
        return cancelled;
      });
      // A running job has its own copy of the sources by now (or stops at its next check).
      await dropScanWork(scanId);
      return toScanStatus(row);
    },

    /** getScanFindings: the report of a completed scan, drafts included. */
    async getScanFindings(actor: ServiceActor, scanId: string, format: 'sast' | 'sarif' = 'sast') {
      const scan = await requireScan(actor.organizationId, scanId);
      if (scan.status !== 'completed') {
        throw new AppError('SCAN_NOT_COMPLETED', { details: { status: scan.status } });
      }
      const rows: ReportFinding[] = await scansRepo(database.db).listScanFindings(scanId);
      const meta: ReportScan = {
        startedAt: scan.startedAt,
        completedAt: scan.completedAt,
        messages: scan.report?.messages ?? [],
        ...(deps.rulesUrl ? { rulesUrl: deps.rulesUrl } : {}),
      };
      return format === 'sarif' ? buildSarifReport(meta, rows) : buildSastReport(meta, rows);
    },

    /** The threat model as JSON, or rendered as Markdown. */
    async getThreatModel(actor: ServiceActor, scanId: string, as: 'json' | 'markdown') {
      const scan = await scansRepo(database.db).findThreatModel(actor.organizationId, scanId);
      if (!scan) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
      if (!scan.threatModel)
        throw new AppError('THREAT_MODEL_NOT_READY', { details: { status: scan.status } });
      const model = scan.threatModel;
      return as === 'markdown' ? engine.renderThreatModelMarkdown(model) : model;
    },

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
  return service;
}

export type ScansService = ReturnType<typeof createScansService>;
