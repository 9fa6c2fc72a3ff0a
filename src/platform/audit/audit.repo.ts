import type { Db } from '../../db/client.ts';
import { type auditActions, auditLog } from '../../db/schema/index.ts';

export type AuditAction = (typeof auditActions)[number];

/** Appends one company audit-log entry (inside the caller's transaction). */
export async function appendAuditEntry(
  db: Db,
  entry: {
    companyId: string;
    action: AuditAction;
    targetUserId?: string | null;
    performedBy?: string | null;
    sourcehostAccountName?: string | null;
    details?: Record<string, unknown>;
  },
): Promise<void> {
  await db.insert(auditLog).values({
    companyId: entry.companyId,
    action: entry.action,
    targetUserId: entry.targetUserId ?? null,
    performedBy: entry.performedBy ?? null,
    sourcehostAccountName: entry.sourcehostAccountName ?? null,
    details: entry.details ?? {},
  });
}
