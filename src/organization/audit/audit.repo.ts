import type { Db } from '../../db/client.ts';
import { auditActions, auditLog } from '../../db/schema/index.ts';
import type { JsonObject } from '../../json.ts';

/**
 * The company audit log's writing side: company state both APIs change (members of API v0,
 * integrations of the organization) is audited here; API v0 reads the log (`platform/audit`).
 */

/** The actions an audit entry records. */
export { auditActions };
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
    details?: JsonObject;
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
