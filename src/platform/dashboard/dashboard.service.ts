import { requireCompanyReader } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { dashboardRepo } from './dashboard.repo.ts';
import { type CompanyDashboard, type DashboardQuery, OPEN_STATUSES } from './dashboard.schemas.ts';

type Count = CompanyDashboard['byStatusAndSeverity'][number];
type Status = Count['status'];
type Severity = Count['severity'];

const DAY_MS = 86_400_000;

/** Monday 00:00 UTC of the week that holds `date`. */
export function weekStartOf(date: Date): Date {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  return new Date(day.getTime() - sinceMonday * DAY_MS);
}

/** The company dashboard (an extension of the console): aggregates over a company's findings. */
export function createDashboardService(deps: { database: Database; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  return {
    /**
     * The dashboard of a company for its users and cross-company readers (404 for anyone else,
     * so that other companies' ids reveal nothing). Counts cover the published findings of the
     * company's repositories, which every company user sees. All four reads run in one
     * repeatable-read transaction, so that the figures agree with each other.
     */
    async companyDashboard(
      actor: Actor,
      companyId: string,
      query: DashboardQuery,
    ): Promise<CompanyDashboard> {
      requireCompanyReader(actor, companyId);
      const weeks = query.weeks ?? 12;
      const at = now();
      const firstWeek = new Date(weekStartOf(at).getTime() - (weeks - 1) * 7 * DAY_MS);
      const { counts, weekly, timeToFix, perRepository } = await deps.database.transaction(
        async (tx) => {
          const repo = dashboardRepo(tx.db);
          // Sequential: one transaction is one connection.
          const counts = await repo.countsByStatusAndSeverity(companyId);
          const weekly = await repo.weekly(companyId, firstWeek);
          const timeToFix = await repo.timeToFix(companyId);
          const perRepository = await repo.perRepository(companyId);
          return { counts, weekly, timeToFix, perRepository };
        },
        { isolation: 'repeatable read' },
      );
      const byWeek = new Map(weekly.map((w) => [w.week, w]));
      const open = new Set<string>(OPEN_STATUSES);
      return {
        companyId,
        generatedAt: at.toISOString(),
        openStatuses: [...OPEN_STATUSES],
        totals: {
          findings: counts.reduce((n, c) => n + c.count, 0),
          open: counts.filter((c) => open.has(c.status)).reduce((n, c) => n + c.count, 0),
          fixed: counts.filter((c) => c.status === 'fixed').reduce((n, c) => n + c.count, 0),
        },
        byStatusAndSeverity: counts.map((c) => ({
          status: c.status as Status,
          severity: c.severity as Severity,
          count: c.count,
        })),
        weekly: Array.from({ length: weeks }, (_, i) => {
          const start = new Date(firstWeek.getTime() + i * 7 * DAY_MS);
          const found = byWeek.get(start.toISOString().slice(0, 10));
          return { weekStart: start.toISOString(), new: found?.new ?? 0, fixed: found?.fixed ?? 0 };
        }),
        timeToFix,
        repositories: perRepository,
      };
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
