import type { ScanRow, ScanStatusRow } from './scans.repo.ts';
import type { ScanStatus } from './scans.schemas.ts';

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
export function scanStatusOf(row: ScanStatusRow): ScanStatus {
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
