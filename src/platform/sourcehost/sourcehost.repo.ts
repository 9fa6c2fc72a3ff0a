import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import {
  findings,
  integrations,
  scanFindings,
  scanFixedDrafts,
  scans,
  sourcehostCommitStatuses,
  sourcehostDeliveries,
  workspaces,
} from '../../db/schema/index.ts';
import { ISO_MICROS_FORMAT } from '../pagination/list-params.ts';

export type DeliveryRow = typeof sourcehostDeliveries.$inferSelect;
export type CommitStatusRow = typeof sourcehostCommitStatuses.$inferSelect;
export type WorkspaceRow = typeof workspaces.$inferSelect;

const FINAL_SCAN_STATUSES = ['completed', 'failed', 'cancelled'] as const;

/** SQL of source-host deliveries, commit statuses and watched workspaces. */
export function sourcehostRepo(db: Db) {
  return {
    async findIntegration(integrationId: string) {
      const [row] = await db
        .select()
        .from(integrations)
        .where(and(eq(integrations.id, integrationId), eq(integrations.provider, 'sourcehost')));
      return row;
    },

    /** Inserts a delivery; `undefined` when (integration, deliveryId) was received before. */
    async insertDelivery(values: typeof sourcehostDeliveries.$inferInsert): Promise<DeliveryRow | undefined> {
      const [row] = await db.insert(sourcehostDeliveries).values(values).onConflictDoNothing().returning();
      return row;
    },

    async findDelivery(integrationId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
      const [row] = await db
        .select()
        .from(sourcehostDeliveries)
        .where(
          and(
            eq(sourcehostDeliveries.integrationId, integrationId),
            eq(sourcehostDeliveries.deliveryId, deliveryId),
          ),
        );
      return row;
    },

    async findDeliveryById(companyId: string, id: string): Promise<DeliveryRow | undefined> {
      const [row] = await db
        .select()
        .from(sourcehostDeliveries)
        .where(and(eq(sourcehostDeliveries.companyId, companyId), eq(sourcehostDeliveries.id, id)));
      return row;
    },

    /**
     * Claims a delivery for one processing run: true when no other run holds it (or its claim has
     * passed, because that process died). Short: no transaction stays open while it is processed.
     */
    async claimDelivery(id: string, seconds: number): Promise<DeliveryRow | undefined> {
      const [row] = await db
        .update(sourcehostDeliveries)
        .set({
          claimedUntil: sql`now() + make_interval(secs => ${seconds})`,
          attempts: sql`${sourcehostDeliveries.attempts} + 1`,
        })
        .where(
          and(
            eq(sourcehostDeliveries.id, id),
            or(isNull(sourcehostDeliveries.claimedUntil), lt(sourcehostDeliveries.claimedUntil, sql`now()`)),
          ),
        )
        .returning();
      return row;
    },

    async releaseClaim(id: string): Promise<void> {
      await db
        .update(sourcehostDeliveries)
        .set({ claimedUntil: null })
        .where(eq(sourcehostDeliveries.id, id));
    },

    /**
     * Records a processing run's outcome and releases the claim. Scans and refusals are merged into
     * what earlier runs recorded (per workspace), never replaced.
     */
    async recordOutcome(
      id: string,
      outcome: {
        outcome: DeliveryRow['outcome'];
        reason: string | null;
        scanWorkspaces: Record<string, string>;
        refusals: Record<string, number>;
      },
    ): Promise<DeliveryRow> {
      const [row] = await db
        .update(sourcehostDeliveries)
        .set({
          outcome: outcome.outcome,
          reason: outcome.reason,
          scanWorkspaces: sql`${sourcehostDeliveries.scanWorkspaces} || ${JSON.stringify(outcome.scanWorkspaces)}::jsonb`,
          refusals: sql`${sourcehostDeliveries.refusals} || ${JSON.stringify(outcome.refusals)}::jsonb`,
          scanIds: sql`array(select distinct v::uuid from jsonb_each_text(${sourcehostDeliveries.scanWorkspaces} || ${JSON.stringify(outcome.scanWorkspaces)}::jsonb) as e(k, v) order by 1)`,
          processedAt: new Date(),
          claimedUntil: null,
        })
        .where(eq(sourcehostDeliveries.id, id))
        .returning();
      return row!;
    },

    /** A page of a company's deliveries, newest first, after the keyset (receivedAt text, id). */
    async listDeliveries(
      companyId: string,
      after: { receivedAt: string; id: string } | undefined,
      limit: number,
    ) {
      return db
        .select({
          delivery: sourcehostDeliveries,
          receivedAtKey: sql<string>`to_char(${sourcehostDeliveries.receivedAt} at time zone 'UTC', ${sql.raw(`'${ISO_MICROS_FORMAT}'`)})`,
        })
        .from(sourcehostDeliveries)
        .where(
          and(
            eq(sourcehostDeliveries.companyId, companyId),
            after
              ? sql`(${sourcehostDeliveries.receivedAt}, ${sourcehostDeliveries.id}) < (${after.receivedAt}::timestamptz, ${after.id}::uuid)`
              : undefined,
          ),
        )
        .orderBy(desc(sourcehostDeliveries.receivedAt), desc(sourcehostDeliveries.id))
        .limit(limit + 1);
    },

    /** Deletes deliveries received before `before`; returns how many. */
    async deleteDeliveriesBefore(before: Date): Promise<number> {
      const rows = await db
        .delete(sourcehostDeliveries)
        .where(lt(sourcehostDeliveries.receivedAt, before))
        .returning({ id: sourcehostDeliveries.id });
      return rows.length;
    },

    async allLinkedWorkspaces(companyId: string): Promise<WorkspaceRow[]> {
      return db
        .select()
        .from(workspaces)
        .where(
          and(
            eq(workspaces.companyId, companyId),
            sql`${workspaces.repository} is not null`,
            eq(workspaces.active, true),
          ),
        )
        .orderBy(workspaces.repository, workspaces.prefix);
    },

    async updateWorkspaceSettings(
      id: string,
      set: Partial<Pick<WorkspaceRow, 'watchBranches' | 'autoScanType' | 'failOn' | 'active'>>,
    ): Promise<WorkspaceRow> {
      if (Object.keys(set).length === 0) {
        const [row] = await db.select().from(workspaces).where(eq(workspaces.id, id));
        return row!;
      }
      const [row] = await db.update(workspaces).set(set).where(eq(workspaces.id, id)).returning();
      return row!;
    },

    /** The scan's status, locked: orders this transaction with the scan's completion. */
    async lockScanStatus(scanId: string): Promise<string | undefined> {
      const [row] = await db
        .select({ status: scans.status })
        .from(scans)
        .where(eq(scans.id, scanId))
        .for('update');
      return row?.status;
    },

    async insertCommitStatus(values: typeof sourcehostCommitStatuses.$inferInsert): Promise<void> {
      await db.insert(sourcehostCommitStatuses).values(values).onConflictDoNothing();
    },

    /**
     * Moves the scan's commit status from `waiting` to `pending`; true when this call did (so that
     * exactly one caller enqueues the job that posts it).
     */
    async markCommitStatusPending(scanId: string): Promise<boolean> {
      const rows = await db
        .update(sourcehostCommitStatuses)
        .set({ state: 'pending' })
        .where(
          and(eq(sourcehostCommitStatuses.scanId, scanId), eq(sourcehostCommitStatuses.state, 'waiting')),
        )
        .returning({ id: sourcehostCommitStatuses.id });
      return rows.length > 0;
    },

    /** Claims a pending commit status for one posting attempt (locked until the transaction ends). */
    async lockCommitStatus(scanId: string): Promise<CommitStatusRow | undefined> {
      const [row] = await db
        .select()
        .from(sourcehostCommitStatuses)
        .where(eq(sourcehostCommitStatuses.scanId, scanId))
        .for('update');
      return row;
    },

    async updateCommitStatus(id: string, set: Partial<CommitStatusRow>): Promise<void> {
      await db.update(sourcehostCommitStatuses).set(set).where(eq(sourcehostCommitStatuses.id, id));
    },

    async scanOutcome(scanId: string) {
      const [scan] = await db
        .select({
          status: scans.status,
          workspaceId: scans.workspaceId,
          errorCode: scans.errorCode,
        })
        .from(scans)
        .where(eq(scans.id, scanId));
      if (!scan) return undefined;
      const [workspace] = await db
        .select({ failOn: workspaces.failOn })
        .from(workspaces)
        .where(eq(workspaces.id, scan.workspaceId));
      // The status counts what the scan brought: new and reopened drafts nobody dismissed.
      const counts = await db
        .select({ severity: findings.severity, count: sql<number>`count(*)::int` })
        .from(scanFindings)
        .innerJoin(findings, eq(findings.id, scanFindings.findingId))
        .where(
          and(
            eq(scanFindings.scanId, scanId),
            sql`coalesce(${scanFindings.baselineState}, 'new') <> 'unchanged'`,
            sql`${findings.triageState} is distinct from 'dismissed'`,
          ),
        )
        .groupBy(findings.severity);
      const [fixed] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(scanFixedDrafts)
        .where(eq(scanFixedDrafts.scanId, scanId));
      return { ...scan, failOn: workspace?.failOn ?? 'high', counts, fixed: fixed?.n ?? 0 };
    },

    /** Scans that ended while their commit status was still `waiting` (a hook that did not run); for the sweep. */
    async waitingForFinishedScans(limit: number): Promise<string[]> {
      const rows = await db
        .select({ scanId: sourcehostCommitStatuses.scanId })
        .from(sourcehostCommitStatuses)
        .innerJoin(scans, eq(scans.id, sourcehostCommitStatuses.scanId))
        .where(
          and(eq(sourcehostCommitStatuses.state, 'waiting'), inArray(scans.status, [...FINAL_SCAN_STATUSES])),
        )
        .limit(limit);
      return rows.map((r) => r.scanId);
    },
  };
}
