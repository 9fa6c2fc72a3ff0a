import { and, asc, desc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { readableReportsCondition } from '../../access/access.repo.ts';
import type { ReportReadScope } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import {
  companies,
  findingRelatedFiles,
  findings,
  guilds,
  reports,
  repositoryMembers,
  type StoredReportSnapshot,
  type severities,
  users,
} from '../../db/schema/index.ts';
import { isoMillis, keptStatements, plainRows, StatementValues } from '../../db/sql.ts';
import { escapeLike } from '../../strings.ts';
import { ISO_MICROS_FORMAT } from '../pagination/list-params.ts';

export type ReportRow = typeof reports.$inferSelect;
export type Severity = (typeof severities)[number];

/** Statuses of the findings a report lists: the valid ones. */
export const REPORTED_STATUSES = ['confirmed', 'acknowledged', 'fixed'] as const;

/** What a report keeps of its engagement as it was when the report was made. */
export type ReportSnapshot = StoredReportSnapshot;

export interface ReportPageQuery {
  visibility: ReportReadScope;
  q?: string;
  guild?: string;
  /** Keyset position: published_at (microsecond text, or null for drafts) and id of the last row. */
  after?: { publishedAt: string | null; id: string };
  limit: number;
}

/**
 * A listed report: the columns of the `Report` shape, with its company's handle and timestamps as
 * the API writes them (a page holds up to a hundred reports: it skips parsing and re-formatting
 * every timestamp), the snapshot, and `publishedAtKey` for the next cursor.
 */
const reportListColumns = {
  id: reports.id,
  isPrivate: reports.isPrivate,
  projectTitle: reports.projectTitle,
  companyHandle: companies.handle,
  clientName: reports.clientName,
  clientLogo: reports.clientLogo,
  clientWebsite: reports.clientWebsite,
  seoTitle: reports.seoTitle,
  seoDescription: reports.seoDescription,
  description: reports.description,
  reportPdfLink: reports.reportPdfLink,
  companyId: reports.companyId,
  engagementId: reports.engagementId,
  repositoryId: reports.repositoryId,
  guildId: reports.guildId,
  createdBy: reports.createdBy,
  engagementStartDate: isoMillis(reports.engagementStartDate),
  engagementEndDate: isoMillis(reports.engagementEndDate),
  createdAt: isoMillis<string>(reports.createdAt),
  publishedAt: isoMillis(reports.publishedAt),
  repositoryLinks: reports.repositoryLinks,
  commitHashes: reports.commitHashes,
  typeOfProject: reports.typeOfProject,
  snapshot: reports.snapshot,
  publishedAtKey: sql<
    string | null
  >`to_char(${reports.publishedAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
};

/** Which parts a reports list statement has besides `report.read`: filters, cursor. */
interface ReportListVariant {
  withPattern: boolean;
  withGuild: boolean;
  /** Past no row, past a draft, or past a published report (the keyset condition differs). */
  after: 'none' | 'draft' | 'published';
}

/**
 * A page of the reports list, built once per database handle and {@link ReportListVariant}
 * (prepared on each connection, run by {@link plainRows}); its values are placeholders: those of
 * `readable` (`report.read` built with `StatementValues`), `pattern` (an escaped `ilike` pattern
 * on the title or the client name), `guild` (a guild name, case-insensitively), `afterPublishedAt`
 * and `afterId` (the cursor), `limit`.
 */
function prepareReportList(db: Db, readable: SQL | undefined, variant: ReportListVariant) {
  const conditions: (SQL | undefined)[] = [readable];
  if (variant.withPattern) {
    const pattern = sql.placeholder('pattern');
    conditions.push(
      sql`(${reports.projectTitle} ilike ${pattern} or ${reports.clientName} ilike ${pattern})`,
    );
  }
  if (variant.withGuild) {
    conditions.push(
      sql`${reports.guildId} in (select ${guilds.id} from ${guilds} where lower(${guilds.name}) = lower(${sql.placeholder('guild')}))`,
    );
  }
  const afterId = sql`${sql.placeholder('afterId')}::uuid`;
  // Past a draft: the drafts with smaller ids, then every published report. Past a published
  // report: older ones, or equally old with smaller ids (drafts came before).
  if (variant.after === 'draft') {
    conditions.push(
      sql`((${reports.publishedAt} is null and ${reports.id} < ${afterId}) or ${reports.publishedAt} is not null)`,
    );
  } else if (variant.after === 'published') {
    conditions.push(
      sql`(${reports.publishedAt}, ${reports.id}) < (${sql.placeholder('afterPublishedAt')}::timestamptz, ${afterId})`,
    );
  }
  return db
    .select(reportListColumns)
    .from(reports)
    .innerJoin(companies, eq(companies.id, reports.companyId))
    .where(and(...conditions))
    .orderBy(sql`${reports.publishedAt} desc nulls first`, desc(reports.id))
    .limit(sql.placeholder('limit'));
}
const reportLists = keptStatements<ReturnType<typeof prepareReportList>>();

/** SQL of reports. */
export function reportsRepo(db: Db) {
  return {
    async insert(values: typeof reports.$inferInsert): Promise<ReportRow> {
      const [row] = await db.insert(reports).values(values).returning();
      return row!;
    },

    async update(reportId: string, values: Partial<typeof reports.$inferInsert>): Promise<ReportRow> {
      const [row] = await db.update(reports).set(values).where(eq(reports.id, reportId)).returning();
      return row!;
    },

    async findById(reportId: string, visibility?: ReportReadScope): Promise<ReportRow | null> {
      const [row] = await db
        .select()
        .from(reports)
        .where(and(eq(reports.id, reportId), visibility ? readableReportsCondition(visibility) : undefined));
      return row ?? null;
    },

    /**
     * One page of visible reports, ordered by `published_at desc nulls first, id desc`: drafts
     * (seen only by their company and platform readers) first, then the most recently published.
     * Reads `limit + 1` rows so that the caller knows whether more follow.
     */
    async listPage(query: ReportPageQuery) {
      const values = new StatementValues();
      const readable = readableReportsCondition(query.visibility, values);
      const variant: ReportListVariant = {
        withPattern: !!query.q,
        withGuild: query.guild !== undefined,
        after: query.after === undefined ? 'none' : query.after.publishedAt === null ? 'draft' : 'published',
      };
      const key = `${values.shape}/${variant.withPattern}/${variant.withGuild}/${variant.after}`;
      const built = reportLists(db, key, () => prepareReportList(db, readable, variant));
      return plainRows(db, reportListColumns, built, {
        ...values.values,
        pattern: query.q ? `%${escapeLike(query.q)}%` : undefined,
        guild: query.guild,
        afterPublishedAt: query.after?.publishedAt ?? undefined,
        afterId: query.after?.id,
        limit: query.limit + 1,
      });
    },

    /** Handles, names and logos of companies, by id. */
    async companiesById(companyIds: string[]) {
      if (companyIds.length === 0) return new Map<string, typeof companies.$inferSelect>();
      const rows = await db
        .select()
        .from(companies)
        .where(inArray(companies.id, [...new Set(companyIds)]));
      return new Map(rows.map((r) => [r.id, r]));
    },

    /** Active reviewers and judges of the repository: the report's team. */
    async teamOf(repositoryId: string) {
      return db
        .select({ user: users })
        .from(repositoryMembers)
        .innerJoin(users, eq(users.id, repositoryMembers.userId))
        .where(
          and(
            eq(repositoryMembers.repositoryId, repositoryId),
            inArray(repositoryMembers.role, ['reviewer', 'judge']),
            isNull(repositoryMembers.deletedAt),
            isNull(users.deletedAt),
          ),
        )
        .orderBy(asc(sql`lower(${users.username})`));
    },

    /** The repository's published, valid findings (confirmed, acknowledged, fixed), by number. */
    async reportedFindings(repositoryId: string) {
      return db
        .select()
        .from(findings)
        .where(
          and(
            eq(findings.repositoryId, repositoryId),
            eq(findings.published, true),
            inArray(findings.status, [...REPORTED_STATUSES]),
          ),
        )
        .orderBy(asc(findings.number), asc(findings.createdAt), asc(findings.id));
    },

    async relatedFiles(findingIds: string[]) {
      if (findingIds.length === 0) return [];
      return db
        .select()
        .from(findingRelatedFiles)
        .where(inArray(findingRelatedFiles.findingId, findingIds))
        .orderBy(
          asc(findingRelatedFiles.path),
          asc(findingRelatedFiles.startLine),
          asc(findingRelatedFiles.id),
        );
    },
  };
}
