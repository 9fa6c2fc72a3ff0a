import { and, asc, eq, gt, inArray, isNotNull, notInArray, or, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import {
  draftSettings,
  findingScanEvents,
  findings,
  scanFindings,
  scanFixedDrafts,
  scans,
  users,
} from '../../db/schema/index.ts';
import { isoMillis } from '../../db/sql.ts';
import type { BaselineState, DismissalReason, DraftState } from './drafts.schemas.ts';

/** Severity order of listings (and of the cursor's first key): critical first. */
export const SEVERITY_RANK_SQL = sql<number>`(case ${findings.severity} when 'critical' then 0 when 'high' then 1 when 'medium' then 2 when 'low' then 3 when 'informational' then 4 else 5 end)`;

const dismisser = alias(users, 'dismisser');
const publisher = alias(users, 'publisher');
const published = alias(findings, 'published_finding');

/** The columns a draft is shown with (see drafts.service.ts toDraft). */
const draftColumns = {
  id: findings.id,
  workspaceId: findings.workspaceId,
  fingerprint: findings.fingerprint,
  ruleId: findings.ruleId,
  title: findings.title,
  description: findings.description,
  severity: findings.severity,
  confidence: findings.confidence,
  category: findings.category,
  location: findings.location,
  details: findings.details,
  triageState: findings.triageState,
  dismissedReason: findings.dismissedReason,
  dismissedComment: findings.dismissedComment,
  dismissedBy: findings.dismissedBy,
  dismissedByUsername: dismisser.username,
  dismissedAt: isoMillis(findings.dismissedAt),
  publishedFindingId: findings.publishedFindingId,
  publishedRepositoryId: published.repositoryId,
  publishedNumber: published.number,
  publishedBy: findings.publishedBy,
  publishedByUsername: publisher.username,
  publishedAt: isoMillis(findings.publishedAt),
  createdAt: isoMillis<string>(findings.createdAt),
  rank: SEVERITY_RANK_SQL,
};

/** A draft row as read (before its API shape). */
export interface DraftRow {
  id: string;
  workspaceId: string | null;
  fingerprint: string | null;
  ruleId: string | null;
  title: string;
  description: string;
  severity: (typeof findings.$inferSelect)['severity'];
  confidence: string | null;
  category: string | null;
  location: { file: string; startLine: number; endLine: number } | null;
  details: (typeof findings.$inferSelect)['details'];
  triageState: DraftState | null;
  dismissedReason: DismissalReason | null;
  dismissedComment: string | null;
  dismissedBy: string | null;
  dismissedByUsername: string | null;
  dismissedAt: string | null;
  publishedFindingId: string | null;
  publishedRepositoryId: string | null;
  publishedNumber: number | null;
  publishedBy: string | null;
  publishedByUsername: string | null;
  publishedAt: string | null;
  createdAt: string;
  rank: number;
  baselineState?: BaselineState | null;
}

/** Filters common to the draft listings. */
export interface DraftFilters {
  state?: DraftState | undefined;
  severity?: DraftRow['severity'] | undefined;
  rule?: string | undefined;
  path?: string | undefined;
}

function filterSql(filters: DraftFilters, file: SQL): SQL[] {
  const where: SQL[] = [];
  if (filters.state) where.push(eq(findings.triageState, filters.state));
  if (filters.severity) where.push(eq(findings.severity, filters.severity));
  if (filters.rule) where.push(eq(findings.ruleId, filters.rule));
  if (filters.path) {
    where.push(
      filters.path.endsWith('/')
        ? sql`starts_with(${file}, ${filters.path})`
        : sql`${file} = ${filters.path}`,
    );
  }
  return where;
}

function afterSql(after: { rank: number; id: string } | undefined): SQL | undefined {
  if (!after) return undefined;
  return or(
    sql`${SEVERITY_RANK_SQL} > ${after.rank}`,
    and(sql`${SEVERITY_RANK_SQL} = ${after.rank}`, gt(findings.id, after.id)),
  );
}

/** SQL of drafts: listings, triage, publication links and scan comparisons. */
export function draftsRepo(db: Db) {
  const base = () =>
    db
      .select(draftColumns)
      .from(findings)
      .leftJoin(dismisser, eq(dismisser.id, findings.dismissedBy))
      .leftJoin(publisher, eq(publisher.id, findings.publishedBy))
      .leftJoin(published, eq(published.id, findings.publishedFindingId));

  return {
    /** A page of a workspace's drafts, critical first. */
    async listWorkspace(
      companyId: string,
      workspaceId: string,
      filters: DraftFilters & { newInScan?: string | undefined },
      after: { rank: number; id: string } | undefined,
      limit: number,
    ): Promise<DraftRow[]> {
      const where = [
        eq(findings.companyId, companyId),
        eq(findings.workspaceId, workspaceId),
        isNotNull(findings.triageState),
        ...filterSql(filters, sql`(${findings.location}->>'file')`),
        afterSql(after),
      ];
      if (filters.newInScan) {
        where.push(
          sql`exists (select 1 from ${scanFindings} sf where sf.finding_id = ${findings.id} and sf.scan_id = ${filters.newInScan} and sf.baseline_state in ('new', 'reopened'))`,
        );
      }
      return (await base()
        .where(and(...where))
        .orderBy(SEVERITY_RANK_SQL, asc(findings.id))
        .limit(limit + 1)) as DraftRow[];
    },

    /**
     * A page of a scan's drafts with the location the scan saw (`fixed`: the drafts of its
     * baseline it did not find, where the baseline saw them), critical first.
     */
    async listScan(
      scanId: string,
      filters: DraftFilters & { baselineState?: BaselineState | undefined },
      after: { rank: number; id: string } | undefined,
      limit: number,
    ): Promise<DraftRow[]> {
      if (filters.baselineState === 'fixed') {
        const rows = await base()
          .innerJoin(scanFixedDrafts, eq(scanFixedDrafts.findingId, findings.id))
          .where(
            and(
              eq(scanFixedDrafts.scanId, scanId),
              ...filterSql(filters, sql`(${scanFixedDrafts.location}->>'file')`),
              afterSql(after),
            ),
          )
          .orderBy(SEVERITY_RANK_SQL, asc(findings.id))
          .limit(limit + 1);
        return rows.map((r) => ({ ...r, baselineState: 'fixed' as const })) as DraftRow[];
      }
      const rows = await db
        .select({
          ...draftColumns,
          location: scanFindings.location,
          baselineState: scanFindings.baselineState,
        })
        .from(scanFindings)
        .innerJoin(findings, eq(findings.id, scanFindings.findingId))
        .leftJoin(dismisser, eq(dismisser.id, findings.dismissedBy))
        .leftJoin(publisher, eq(publisher.id, findings.publishedBy))
        .leftJoin(published, eq(published.id, findings.publishedFindingId))
        .where(
          and(
            eq(scanFindings.scanId, scanId),
            filters.baselineState ? eq(scanFindings.baselineState, filters.baselineState) : undefined,
            ...filterSql(filters, sql`(${scanFindings.location}->>'file')`),
            afterSql(after),
          ),
        )
        .orderBy(SEVERITY_RANK_SQL, asc(findings.id))
        .limit(limit + 1);
      return rows as DraftRow[];
    },

    /** Drafts by id (of the company, drafts only), in id order. */
    async byIds(companyId: string, ids: readonly string[]): Promise<DraftRow[]> {
      if (ids.length === 0) return [];
      return (await base()
        .where(
          and(
            eq(findings.companyId, companyId),
            inArray(findings.id, [...ids]),
            isNotNull(findings.triageState),
          ),
        )
        .orderBy(asc(findings.id))) as DraftRow[];
    },

    /**
     * Locks the company's drafts among `ids` (in id order, so that two triagers of overlapping
     * sets never deadlock) and returns their triage columns.
     */
    async lock(companyId: string, ids: readonly string[]) {
      if (ids.length === 0) return [];
      return db
        .select({
          id: findings.id,
          workspaceId: findings.workspaceId,
          triageState: findings.triageState,
          publishedFindingId: findings.publishedFindingId,
          title: findings.title,
          description: findings.description,
          severity: findings.severity,
          ruleId: findings.ruleId,
          category: findings.category,
          location: findings.location,
          details: findings.details,
          fingerprint: findings.fingerprint,
        })
        .from(findings)
        .where(
          and(
            eq(findings.companyId, companyId),
            inArray(findings.id, [...ids]),
            isNotNull(findings.triageState),
          ),
        )
        .orderBy(asc(findings.id))
        .for('update');
    },

    /** Dismisses drafts that are neither dismissed already nor published. */
    async dismiss(
      ids: readonly string[],
      values: { reason: DismissalReason; comment: string | null; by: string | null },
    ): Promise<void> {
      if (ids.length === 0) return;
      await db
        .update(findings)
        .set({
          triageState: 'dismissed',
          dismissedReason: values.reason,
          dismissedComment: values.comment,
          dismissedBy: values.by,
          dismissedAt: new Date(),
          lastUpdatedAt: new Date(),
        })
        .where(
          and(inArray(findings.id, [...ids]), notInArray(findings.triageState, ['dismissed', 'published'])),
        );
    },

    /** Reopens dismissed drafts: back to open (a later scan marks them fixed or keeps them open). */
    async reopen(ids: readonly string[]): Promise<void> {
      if (ids.length === 0) return;
      await db
        .update(findings)
        .set({
          triageState: 'open',
          dismissedReason: null,
          dismissedComment: null,
          dismissedBy: null,
          dismissedAt: null,
          lastUpdatedAt: new Date(),
        })
        .where(and(inArray(findings.id, [...ids]), eq(findings.triageState, 'dismissed')));
    },

    async markPublished(id: string, findingId: string, by: string): Promise<void> {
      await db
        .update(findings)
        .set({
          triageState: 'published',
          publishedFindingId: findingId,
          publishedBy: by,
          publishedAt: new Date(),
          lastUpdatedAt: new Date(),
        })
        .where(eq(findings.id, id));
    },

    /** The newest scan of the workspace that found the draft (the scan a publication links back to). */
    async latestScanOf(findingId: string): Promise<{ id: string; commit: string | null } | undefined> {
      const [row] = await db
        .select({ id: scans.id, commit: scans.commit })
        .from(scanFindings)
        .innerJoin(scans, eq(scans.id, scanFindings.scanId))
        .where(and(eq(scanFindings.findingId, findingId), eq(scans.status, 'completed')))
        .orderBy(sql`${scans.completedAt} desc nulls last`, sql`${scans.id} desc`)
        .limit(1);
      return row;
    },

    async addScanEvent(values: typeof findingScanEvents.$inferInsert): Promise<void> {
      await db.insert(findingScanEvents).values(values).onConflictDoNothing();
    },

    /** A finding's scan timeline, oldest first. */
    async scanEvents(findingId: string) {
      return db
        .select({
          kind: findingScanEvents.kind,
          scanId: findingScanEvents.scanId,
          commit: findingScanEvents.commit,
          at: isoMillis<string>(findingScanEvents.createdAt),
        })
        .from(findingScanEvents)
        .where(eq(findingScanEvents.findingId, findingId))
        .orderBy(asc(findingScanEvents.createdAt), asc(findingScanEvents.id));
    },

    /** The draft a finding was published from. */
    async draftOf(findingId: string): Promise<string | undefined> {
      const [row] = await db
        .select({ id: findings.id })
        .from(findings)
        .where(eq(findings.publishedFindingId, findingId));
      return row?.id;
    },

    async settings(companyId: string): Promise<{ triagerUserIds: string[]; autoMarkFixed: boolean }> {
      const [row] = await db
        .select({ triagerUserIds: draftSettings.triagerUserIds, autoMarkFixed: draftSettings.autoMarkFixed })
        .from(draftSettings)
        .where(eq(draftSettings.companyId, companyId));
      return row ?? { triagerUserIds: [], autoMarkFixed: false };
    },

    async saveSettings(
      companyId: string,
      values: { triagerUserIds: string[]; autoMarkFixed: boolean; updatedBy: string },
    ): Promise<void> {
      await db
        .insert(draftSettings)
        .values({ companyId, ...values })
        .onConflictDoUpdate({
          target: draftSettings.companyId,
          set: { ...values, updatedAt: new Date() },
        });
    },

    /** Counts of a scan against its baseline, live (dismissals made since count). */
    async comparisonCounts(scanId: string) {
      const found = await db
        .select({
          baselineState: scanFindings.baselineState,
          severity: findings.severity,
          dismissed: sql<boolean>`${findings.triageState} = 'dismissed'`,
          n: sql<number>`count(*)::int`,
        })
        .from(scanFindings)
        .innerJoin(findings, eq(findings.id, scanFindings.findingId))
        .where(eq(scanFindings.scanId, scanId))
        .groupBy(scanFindings.baselineState, findings.severity, sql`3`);
      const [fixed] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(scanFixedDrafts)
        .where(eq(scanFixedDrafts.scanId, scanId));
      return { found, fixed: fixed?.n ?? 0 };
    },
  };
}
