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

/**
 * Records a sign-in (`session_signed_in`) in the audit log of every company the user belongs to:
 * one call where a session is opened, in its own statement (a sign-in changes nothing else).
 */
export async function appendSignInEntries(
  db: Db,
  signIn: { userId: string; companyIds: Iterable<string>; via: 'console' },
): Promise<void> {
  const rows = [...signIn.companyIds].map((companyId) => ({
    companyId,
    action: 'session_signed_in' as const,
    targetUserId: signIn.userId,
    performedBy: signIn.userId,
    details: { via: signIn.via },
  }));
  if (rows.length > 0) await db.insert(auditLog).values(rows);
}
