import { and, asc, desc, eq, getTableColumns, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import {
  type FindingDetails,
  findings,
  integrations,
  scanArchives,
  scanFindings,
  scans,
} from '../../db/schema/index.ts';
import { isoMillis, keptStatements, plainRows } from '../../db/sql.ts';
import { ISO_MICROS_FORMAT } from '../../platform/pagination/list-params.ts';

export type { FindingDetails };

/**
 * A scan without its threat model: the model of a large tree runs to megabytes, and status reads,
 * lists and row locks (a scan's status is polled every few hundred milliseconds) must not carry it.
 * It is read on its own where it is used.
 */
const { threatModel: _threatModel, ...scanColumns } = getTableColumns(scans);

export type ScanRow = Omit<typeof scans.$inferSelect, 'threatModel'>;

/** A scan of one company by id, built once per database handle. */
const scanReads = keptStatements<ReturnType<typeof prepareScanRead>>();
function prepareScanRead(db: Db) {
  return db
    .select(scanColumns)
    .from(scans)
    .where(and(eq(scans.companyId, sql.placeholder('companyId')), eq(scans.id, sql.placeholder('id'))))
    .prepare('scan_for_company');
}

/**
 * What the status of a scan shows (getScan, polled while the scan runs, and listScans): no
 * sources, report or bookkeeping columns, and the timestamps formatted by PostgreSQL as the API
 * writes them, so that a row needs no mapping.
 */
const scanStatusColumns = {
  id: scans.id,
  status: scans.status,
  type: scans.type,
  workspaceId: scans.workspaceId,
  createdAt: isoMillis<string>(scans.createdAt),
  startedAt: isoMillis(scans.startedAt),
  completedAt: isoMillis(scans.completedAt),
  cancelledAt: isoMillis(scans.cancelledAt),
  filesTotal: scans.filesTotal,
  filesDone: scans.filesDone,
  findingsCount: scans.findingsCount,
  filesOverBudget: scans.filesOverBudget,
  errorCode: scans.errorCode,
  errorMessage: scans.errorMessage,
};

/** The status columns and the created_at key of the scan list's cursor. */
const scanListColumns = {
  ...scanStatusColumns,
  createdAtKey: sql<string>`to_char(${scans.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
};

/** The status of a scan of one company by id, built once per database handle. */
const scanStatusReads = keptStatements<ReturnType<typeof prepareScanStatusRead>>();
function prepareScanStatusRead(db: Db) {
  return db
    .select(scanStatusColumns)
    .from(scans)
    .where(and(eq(scans.companyId, sql.placeholder('companyId')), eq(scans.id, sql.placeholder('id'))));
}
export type ScanStatusRow = Awaited<ReturnType<typeof prepareScanStatusRead>>[number];
export type ScanStatusValue = ScanRow['status'];

/** A draft finding as the scan job writes it. */
export interface DraftFindingInput {
  fingerprint: string;
  ruleId: string;
  title: string;
  description: string;
  severity: (typeof findings.$inferInsert)['severity'];
  category: string | null;
  confidence: string | null;
  identifiers: Array<{ type: string; name: string; value: string }>;
  location: { file: string; startLine: number; endLine: number };
  details: FindingDetails;
}

/** SQL of scans, their archives and their findings. Queries are scoped by organization where a caller names a scan. */
export function scansRepo(db: Db) {
  return {
    async insert(values: typeof scans.$inferInsert): Promise<ScanRow> {
      const [row] = await db.insert(scans).values(values).returning(scanColumns);
      return row!;
    },

    async insertArchives(rows: Array<typeof scanArchives.$inferInsert>): Promise<void> {
      if (rows.length > 0) await db.insert(scanArchives).values(rows).onConflictDoNothing();
    },

    /** The status columns of a scan of the company (getScan); undefined when there is none. */
    async findStatusForCompany(companyId: string, id: string): Promise<ScanStatusRow | undefined> {
      const read = scanStatusReads(db, '', () => prepareScanStatusRead(db));
      const [row] = await plainRows(db, scanStatusColumns, read, { companyId, id });
      return row;
    },

    async findForCompany(companyId: string, id: string): Promise<ScanRow | undefined> {
      const read = scanReads(db, '', () => prepareScanRead(db));
      const [row] = await read.execute({ companyId, id });
      return row;
    },

    /** The scan's threat model (null until built); undefined when no such scan of the company. */
    async findThreatModel(
      companyId: string,
      id: string,
    ): Promise<
      { status: ScanStatusValue; threatModel: (typeof scans.$inferSelect)['threatModel'] } | undefined
    > {
      const [row] = await db
        .select({ status: scans.status, threatModel: scans.threatModel })
        .from(scans)
        .where(and(eq(scans.companyId, companyId), eq(scans.id, id)));
      return row;
    },

    /** The organization's scans, newest first (optionally in one status). */
    /**
     * One page of the company's scans (of one workspace, in one status), newest first: reads
     * `limit + 1` rows after the keyset position `after` (created_at as microsecond text, id);
     * `createdAtKey` is each row's created_at as that text, for the next cursor.
     */
    async listForCompany(
      companyId: string,
      options: {
        status?: ScanStatusValue;
        workspaceId?: string;
        after?: { at: string; id: string };
        limit: number;
      },
    ): Promise<Array<ScanStatusRow & { createdAtKey: string }>> {
      const query = db
        .select(scanListColumns)
        .from(scans)
        .where(
          and(
            eq(scans.companyId, companyId),
            options.workspaceId ? eq(scans.workspaceId, options.workspaceId) : undefined,
            options.status ? eq(scans.status, options.status) : undefined,
            options.after
              ? sql`(${scans.createdAt}, ${scans.id}) < (${options.after.at}::timestamptz, ${options.after.id}::uuid)`
              : undefined,
          ),
        )
        .orderBy(desc(scans.createdAt), desc(scans.id))
        .limit(options.limit + 1);
      return plainRows(db, scanListColumns, query);
    },

    async findById(id: string): Promise<ScanRow | undefined> {
      const [row] = await db.select(scanColumns).from(scans).where(eq(scans.id, id));
      return row;
    },

    /**
     * Locks the scan row for the rest of the transaction. Every status change of a scan after
     * creation (start, run, complete, fail, cancel) takes this lock first, so that exactly one
     * of two racing changes (say, cancel and completion) sees the state it expects.
     */
    async lock(id: string): Promise<ScanRow | undefined> {
      const [row] = await db.select(scanColumns).from(scans).where(eq(scans.id, id)).for('update');
      return row;
    },

    /** lock, for a scan of one company only (undefined for another company's scan). */
    async lockForCompany(companyId: string, id: string): Promise<ScanRow | undefined> {
      const [row] = await db
        .select(scanColumns)
        .from(scans)
        .where(and(eq(scans.id, id), eq(scans.companyId, companyId)))
        .for('update');
      return row;
    },

    /** Updates the scan and returns it as it now is. */
    async update(id: string, values: Partial<typeof scans.$inferInsert>): Promise<ScanRow | undefined> {
      const [row] = await db
        .update(scans)
        .set({ ...values, updatedAt: new Date() })
        .where(eq(scans.id, id))
        .returning(scanColumns);
      return row;
    },

    /** A status change that happens only from one of `from`; true when it happened. */
    async transition(
      id: string,
      from: ScanStatusValue[],
      values: Partial<typeof scans.$inferInsert>,
    ): Promise<boolean> {
      const rows = await db
        .update(scans)
        .set({ ...values, updatedAt: new Date() })
        .where(and(eq(scans.id, id), inArray(scans.status, from)))
        .returning({ id: scans.id });
      return rows.length === 1;
    },

    /** Progress is only written while the scan runs (a late write never revives a cancelled scan). */
    async writeProgress(id: string, filesDone: number, filesTotal: number): Promise<void> {
      await db
        .update(scans)
        .set({ filesDone, filesTotal, updatedAt: new Date() })
        .where(and(eq(scans.id, id), eq(scans.status, 'running')));
    },

    /** Which of `ids` are scans still `preparing`, `queued` or `running`. */
    async activeIds(ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .select({ id: scans.id })
        .from(scans)
        .where(and(inArray(scans.id, [...ids]), inArray(scans.status, ['preparing', 'queued', 'running'])));
      return new Set(rows.map((r) => r.id));
    },

    async statusOf(id: string): Promise<ScanStatusValue | undefined> {
      const [row] = await db.select({ status: scans.status }).from(scans).where(eq(scans.id, id));
      return row?.status;
    },

    /** Whether the organization has connected a sourcehost integration. */
    async hasSourcehostIntegration(companyId: string): Promise<boolean> {
      const rows = await db
        .select({ id: integrations.id })
        .from(integrations)
        .where(and(eq(integrations.companyId, companyId), eq(integrations.provider, 'sourcehost')))
        .limit(1);
      return rows.length === 1;
    },

    /**
     * Upserts draft findings by (workspace, fingerprint) and links them to the scan. A finding
     * found again keeps its id, status and publication; only its location moves. Running this
     * twice for one scan (a retried job) changes nothing the second time.
     */
    async upsertFindings(
      scan: { id: string; companyId: string; workspaceId: string },
      drafts: DraftFindingInput[],
    ) {
      const unique = new Map<string, DraftFindingInput>();
      // One statement may not touch a row twice (ON CONFLICT DO UPDATE would fail): dedupe first.
      for (const d of drafts) if (!unique.has(d.fingerprint)) unique.set(d.fingerprint, d);
      const all = [...unique.values()];
      for (let i = 0; i < all.length; i += 200) {
        const chunk = all.slice(i, i + 200);
        const rows = await db
          .insert(findings)
          .values(
            chunk.map((d) => ({
              companyId: scan.companyId,
              workspaceId: scan.workspaceId,
              fingerprint: d.fingerprint,
              ruleId: d.ruleId,
              published: false,
              triageState: 'open' as const,
              title: d.title,
              description: d.description,
              severity: d.severity,
              category: d.category,
              confidence: d.confidence,
              identifiers: d.identifiers,
              location: d.location,
              details: d.details,
            })),
          )
          .onConflictDoUpdate({
            target: [findings.workspaceId, findings.fingerprint],
            targetWhere: sql`${findings.fingerprint} is not null`,
            set: { location: sql`excluded.location`, lastUpdatedAt: sql`now()` },
          })
          .returning({ id: findings.id, fingerprint: findings.fingerprint });
        const byFingerprint = new Map(rows.map((r) => [r.fingerprint, r.id]));
        const links = chunk
          .map((d) => ({
            scanId: scan.id,
            findingId: byFingerprint.get(d.fingerprint),
            location: d.location,
          }))
          .filter((l): l is { scanId: string; findingId: string; location: DraftFindingInput['location'] } =>
            Boolean(l.findingId),
          );
        if (links.length > 0) await db.insert(scanFindings).values(links).onConflictDoNothing();
      }
      return all.length;
    },

    /**
     * Removes what a run that did not complete stored: the scan's finding links, and the drafts
     * no other scan found, nobody published and nobody sent to a tracker.
     */
    async removeRunFindings(scanId: string): Promise<void> {
      await db.execute(sql`
        with gone as (delete from scan_findings where scan_id = ${scanId} returning finding_id)
        delete from findings f
         where f.id in (select finding_id from gone)
           and f.published = false
           and not exists (select 1 from scan_findings o where o.finding_id = f.id and o.scan_id <> ${scanId})
           -- A draft someone already sent to or linked with a tracker is kept: deleting it would
           -- drop the ticket and the export with it.
           and not exists (select 1 from finding_tickets k where k.finding_id = f.id)
           and not exists (select 1 from finding_exports e where e.finding_id = f.id)`);
    },

    /** The scan's findings (drafts included), with the location the scan saw. */
    async listScanFindings(scanId: string) {
      return db
        .select({
          id: findings.id,
          fingerprint: findings.fingerprint,
          ruleId: findings.ruleId,
          title: findings.title,
          description: findings.description,
          severity: findings.severity,
          status: findings.status,
          published: findings.published,
          category: findings.category,
          confidence: findings.confidence,
          identifiers: findings.identifiers,
          details: findings.details,
          location: scanFindings.location,
          triageState: findings.triageState,
          baselineState: scanFindings.baselineState,
        })
        .from(scanFindings)
        .innerJoin(findings, eq(findings.id, scanFindings.findingId))
        .where(eq(scanFindings.scanId, scanId))
        .orderBy(
          asc(sql`${scanFindings.location}->>'file'`),
          asc(sql`(${scanFindings.location}->>'startLine')::int`),
          asc(findings.ruleId),
          asc(findings.id),
        );
    },

    async countScanFindings(scanId: string): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(scanFindings)
        .where(eq(scanFindings.scanId, scanId));
      return row?.n ?? 0;
    },
  };
}

export type ScansRepo = ReturnType<typeof scansRepo>;
