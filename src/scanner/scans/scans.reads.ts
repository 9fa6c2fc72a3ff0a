import type { ServiceActor } from '../../auth/actor.ts';
import { AppError } from '../../errors.ts';
import { hashFilters, timeAndIdAfter } from '../../platform/pagination/cursor.ts';
import type { ScansServiceDeps } from './scans.deps.ts';
import { type ScanRow, scansRepo } from './scans.repo.ts';
import { buildSarifReport, buildSastReport, type ReportFinding, type ReportScan } from './scans.report.ts';
import type { ScanStatus } from './scans.schemas.ts';
import { scanStatusOf, toScanStatus } from './scans.status.ts';
import type { ScanWorkAccess } from './scans.work.ts';

/** What callers read and do to a scan they name: list, status, cancel, report and threat model. */
export function createScanReads(deps: ScansServiceDeps, work: ScanWorkAccess) {
  const { database, credits, engine, cursors } = deps;
  const { dropScanWork } = work;

  async function requireScan(companyId: string, scanId: string): Promise<ScanRow> {
    const scan = await scansRepo(database.db).findForCompany(companyId, scanId);
    if (!scan) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
    return scan;
  }

  return {
    /**
     * listScans (extension): the organization's scans, newest first, optionally of one workspace
     * (another organization's workspace lists nothing), in pages of (created_at, id).
     */
    async listScans(
      actor: ServiceActor,
      options: { status?: ScanStatus['status']; workspaceId?: string; limit?: number; next?: string },
    ): Promise<{ scans: ScanStatus[]; nextValue: string | null }> {
      const limit = options.limit ?? 20;
      const workspaceId = options.workspaceId?.toLowerCase();
      const filterHash = hashFilters({ list: 'scans', status: options.status, workspaceId });
      const after = timeAndIdAfter(cursors, options.next, filterHash);
      const rows = await scansRepo(database.db).listForCompany(actor.organizationId, {
        ...(options.status ? { status: options.status } : {}),
        ...(workspaceId ? { workspaceId } : {}),
        ...(after ? { after } : {}),
        limit,
      });
      const page = cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(options.next !== undefined ? { given: options.next } : {}),
        keyOf: (r) => [r.createdAtKey, r.id],
      });
      return { scans: page.items.map(scanStatusOf), nextValue: page.nextValue };
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
  };
}
