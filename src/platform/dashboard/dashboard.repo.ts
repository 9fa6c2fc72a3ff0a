import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { findings, repositories } from '../../db/schema/index.ts';
import { OPEN_STATUSES } from './dashboard.schemas.ts';

/** The findings a dashboard counts: published ones of the company's repositories (no workspace drafts). */
const visibleOf = (companyId: string) =>
  sql`${findings.companyId} = ${companyId} and ${findings.published} and ${findings.repositoryId} is not null`;

const openList = sql.raw(OPEN_STATUSES.map((s) => `'${s}'`).join(','));

function rowsOf<T>(result: { rows: unknown[] }): T[] {
  return result.rows as T[];
}

/** The aggregates of the company dashboard, each one statement over the company's findings. */
export function dashboardRepo(db: Db) {
  return {
    /** Counts per (status, severity): an index-only scan of findings_visible_company_status_idx. */
    async countsByStatusAndSeverity(companyId: string) {
      return rowsOf<{ status: string; severity: string; count: number }>(
        await db.execute(sql`select ${findings.status} as status, ${findings.severity} as severity,
          count(*)::int as count from ${findings} where ${visibleOf(companyId)} group by 1, 2 order by 1, 2`),
      );
    },

    /**
     * Findings created and findings fixed per ISO week (Monday 00:00 UTC) since `since`, which is
     * the start of the oldest week; weeks with neither are absent.
     */
    async weekly(companyId: string, since: Date) {
      return rowsOf<{ week: string; new: number; fixed: number }>(
        await db.execute(sql`with created as (
            select date_trunc('week', ${findings.createdAt} at time zone 'UTC') as week, count(*)::int as n
            from ${findings} where ${visibleOf(companyId)} and ${findings.createdAt} >= ${since.toISOString()}
            group by 1),
          fixed as (
            select date_trunc('week', ${findings.fixedAt} at time zone 'UTC') as week, count(*)::int as n
            from ${findings} where ${visibleOf(companyId)} and ${findings.status} = 'fixed'
              and ${findings.fixedAt} >= ${since.toISOString()}
            group by 1)
          select to_char(coalesce(c.week, f.week), 'YYYY-MM-DD') as week,
            coalesce(c.n, 0) as new, coalesce(f.n, 0) as fixed
          from created c full join fixed f on f.week = c.week order by 1`),
      );
    },

    /** The number of fixed findings with a fixing time, and the median of their time to fix. */
    async timeToFix(companyId: string) {
      const [row] = rowsOf<{ fixed_count: number; median_seconds: number | null }>(
        await db.execute(sql`select count(*)::int as fixed_count,
            percentile_cont(0.5) within group (order by extract(epoch from ${findings.fixedAt} - ${findings.createdAt}))::float8
              as median_seconds
          from ${findings} where ${visibleOf(companyId)} and ${findings.status} = 'fixed'
            and ${findings.fixedAt} is not null`),
      );
      return { fixedCount: row?.fixed_count ?? 0, medianSeconds: row?.median_seconds ?? null };
    },

    /** Every repository of the company with its total, open and fixed findings. */
    async perRepository(companyId: string) {
      return rowsOf<{ id: string; name: string; total: number; open: number; fixed: number }>(
        await db.execute(sql`select r.id, r.name,
            coalesce(c.total, 0)::int as total, coalesce(c.open, 0)::int as open, coalesce(c.fixed, 0)::int as fixed
          from ${repositories} r
          left join (
            select ${findings.repositoryId} as repository_id, count(*) as total,
              count(*) filter (where ${findings.status} in (${openList})) as open,
              count(*) filter (where ${findings.status} = 'fixed') as fixed
            from ${findings} where ${visibleOf(companyId)} group by 1
          ) c on c.repository_id = r.id
          where r.company_id = ${companyId}
          order by open desc, total desc, r.name, r.id`),
      );
    },
  };
}
