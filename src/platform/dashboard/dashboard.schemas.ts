import { type Static, Type } from '@sinclair/typebox';
import { findingStatuses, severities } from '../../db/schema/index.ts';
import { DateTimeSchema, Nullable, UuidSchema } from '../../http/schemas.ts';

const SeverityValue = Type.Union(severities.map((s) => Type.Literal(s)));
const StatusValue = Type.Union(findingStatuses.map((s) => Type.Literal(s)));

/**
 * Statuses of an open finding: one that still asks for work. Fixed, rejected, spam, duplicate and
 * withdrawn findings are closed.
 */
export const OPEN_STATUSES = ['new', 'in_review', 'disputed', 'confirmed', 'acknowledged'] as const;

export const DashboardQuerySchema = Type.Object(
  {
    weeks: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 104,
        default: 12,
        description:
          'how many weeks (ISO weeks, Monday 00:00 UTC, the current one last) the weekly series covers',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DashboardQuery = Static<typeof DashboardQuerySchema>;

/** The company dashboard: what is open, what came in and was fixed, how fast, and where. */
export const CompanyDashboardSchema = Type.Object(
  {
    companyId: UuidSchema,
    generatedAt: DateTimeSchema,
    openStatuses: Type.Array(StatusValue, { description: 'the statuses counted as open' }),
    totals: Type.Object({
      findings: Type.Integer({ description: 'published findings of the company’s repositories' }),
      open: Type.Integer(),
      fixed: Type.Integer(),
    }),
    byStatusAndSeverity: Type.Array(
      Type.Object({ status: StatusValue, severity: SeverityValue, count: Type.Integer() }),
      {
        description:
          'every non-zero (status, severity) pair; open findings by severity are the open statuses’ rows',
      },
    ),
    weekly: Type.Array(
      Type.Object({
        weekStart: DateTimeSchema,
        new: Type.Integer({ description: 'findings created in the week' }),
        fixed: Type.Integer({ description: 'findings that became fixed in the week and are still fixed' }),
      }),
      { description: 'oldest week first, one entry per week, weeks with nothing included' },
    ),
    timeToFix: Type.Object({
      fixedCount: Type.Integer({ description: 'fixed findings with a known fixing time' }),
      medianSeconds: Nullable(Type.Number({ description: 'median of fixedAt − createdAt; null when none' })),
    }),
    repositories: Type.Array(
      Type.Object({
        id: UuidSchema,
        name: Type.String(),
        total: Type.Integer(),
        open: Type.Integer(),
        fixed: Type.Integer(),
      }),
      { description: 'every repository of the company, most open findings first' },
    ),
  },
  { $id: 'CompanyDashboard' },
);
export type CompanyDashboard = Static<typeof CompanyDashboardSchema>;
