import {
  loadFindingAccess,
  loadFindingAccessForRead,
  requireVisibleRepository,
} from '../../access/access.service.ts';
import {
  can,
  type FindingAccess,
  type ReportReader,
  type ReportSubject,
  reportReadScope,
  requireUser,
} from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { isUuid } from '../../strings.ts';
import { resolveGuild } from '../guilds/guilds.service.ts';
import { type CursorCodec, hashFilters, invalidCursor } from '../pagination/cursor.ts';
import { isIsoMicros } from '../pagination/list-params.ts';
import { repositoriesRepo } from '../repositories/repositories.repo.ts';
import { usersRepo } from '../users/users.repo.ts';
import { toAuditorPublicProfile } from '../users/users.views.ts';
import { type ReportRow, type ReportSnapshot, reportsRepo, type Severity } from './reports.repo.ts';
import type {
  CreateReportRequest,
  FindingStat,
  ListReportsQuery,
  Report,
  ReportFinding,
  UpdateReportRequest,
} from './reports.schemas.ts';

/** The reports page size when `limit` is not given. */
const DEFAULT_LIMIT = 100;

function reportNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Report not found.' });
}

/** 403 for a caller who sees the repository or the report but may not make or change its reports. */
function mayNotManage(): AppError {
  return new AppError('FORBIDDEN', {
    message: 'Only the company’s managers and the repository’s admins make and publish its reports.',
  });
}

/** Throws unless the user may make, change and publish the report (`report.manage`). */
function requireReportManager(access: FindingAccess, report: ReportSubject): void {
  if (!can(access, 'report.manage', { report })) throw mayNotManage();
}

function dateOrNull(value: string | null | undefined): Date | null | undefined {
  return value === undefined ? undefined : value === null ? null : new Date(value);
}

/**
 * The chosen findings among the reportable ones, in the report's order (by number); an id that is
 * not a reportable finding of the repository is a client mistake, named in the error.
 */
function chosenFindings<T extends { id: string }>(reportable: T[], findingIds: string[]): T[] {
  const chosen = new Set(findingIds);
  const known = new Set(reportable.map((f) => f.id));
  const unknown = findingIds.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'A report lists published confirmed, acknowledged or fixed findings of its repository only.',
      details: { field: 'findingIds', findingIds: unknown.slice(0, 20) },
    });
  }
  return reportable.filter((f) => chosen.has(f.id));
}

/** The fields of a report, its timestamps formatted, and its snapshot. */
type ReportFields = Omit<Report, 'teamMembers' | 'findingStats' | 'findings'> & { snapshot: ReportSnapshot };

/** The `Report` of its fields: the team, findings and statistics come from the snapshot. */
function withSnapshot(fields: ReportFields): Report {
  const { snapshot } = fields;
  return {
    id: fields.id,
    isPrivate: fields.isPrivate,
    projectTitle: fields.projectTitle,
    companyHandle: fields.companyHandle,
    clientName: fields.clientName,
    clientLogo: fields.clientLogo,
    clientWebsite: fields.clientWebsite,
    seoTitle: fields.seoTitle,
    seoDescription: fields.seoDescription,
    description: fields.description,
    reportPdfLink: fields.reportPdfLink,
    companyId: fields.companyId,
    engagementId: fields.engagementId,
    repositoryId: fields.repositoryId,
    guildId: fields.guildId,
    createdBy: fields.createdBy,
    engagementStartDate: fields.engagementStartDate,
    engagementEndDate: fields.engagementEndDate,
    createdAt: fields.createdAt,
    publishedAt: fields.publishedAt,
    repositoryLinks: fields.repositoryLinks,
    commitHashes: fields.commitHashes,
    typeOfProject: fields.typeOfProject,
    teamMembers: snapshot.teamMembers.map((p) => ({ reportId: fields.id, auditorPublicProfile: p })),
    findingStats: snapshot.findingStats,
    findings: snapshot.findings,
  };
}

/** One page of the reports list. */
export interface ReportPage {
  reports: Report[];
  nextValue: string | null;
}

/** Reports of finished engagements: the public/private listing, creation from a repository, publishing. */
export function createReportsService(deps: { database: Database; cursors: CursorCodec; now?: () => Date }) {
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  async function render(db: Db, rows: ReportRow[]): Promise<Report[]> {
    const companies = await reportsRepo(db).companiesById(rows.map((r) => r.companyId));
    return rows.map((row) =>
      withSnapshot({
        ...row,
        companyHandle: companies.get(row.companyId)?.handle ?? '',
        engagementStartDate: row.engagementStartDate?.toISOString() ?? null,
        engagementEndDate: row.engagementEndDate?.toISOString() ?? null,
        createdAt: row.createdAt.toISOString(),
        publishedAt: row.publishedAt?.toISOString() ?? null,
      }),
    );
  }

  /**
   * Who reads reports: the user's repository access (memberships read once per credential), or
   * null for anonymous callers and service keys.
   */
  async function readerOf(actor: Actor): Promise<ReportReader> {
    return actor.kind === 'user' ? loadFindingAccessForRead(database.db, actor) : null;
  }

  /**
   * The team (active reviewers and judges with their public profiles), the published valid
   * findings the maker sees (`finding.read`) and their statistics per allowed severity, as they
   * are now.
   */
  async function takeSnapshot(
    db: Db,
    access: FindingAccess,
    repository: { id: string; companyId: string; allowedSeverities: string[] },
    findingIds?: string[],
  ): Promise<ReportSnapshot> {
    const repo = reportsRepo(db);
    // One after another: `db` is a transaction, one connection.
    const team = await repo.teamOf(repository.id);
    const reportable = (await repo.reportedFindings(repository.id)).filter((finding) =>
      can(access, 'finding.read', { repository, finding }),
    );
    const companies = await repo.companiesById([repository.companyId]);
    const findingRows = findingIds ? chosenFindings(reportable, findingIds) : reportable;
    const company = companies.get(repository.companyId)!;
    const files = await repo.relatedFiles(findingRows.map((f) => f.id));
    const authors = await usersRepo(db).shortSummaries(findingRows.map((f) => f.createdBy));
    const findings: ReportFinding[] = findingRows.map((f) => ({
      id: f.id,
      number: f.number,
      attributedTo: f.attributedTo,
      title: f.title,
      description: f.description,
      createdBy: (f.createdBy && authors.get(f.createdBy)) || null,
      createdAt: f.createdAt.toISOString(),
      fixedBy: f.fixedBy,
      relatedFiles: files
        .filter((file) => file.findingId === f.id)
        .map((file) => ({
          id: file.id,
          path: file.path,
          lines: { start: file.startLine, end: file.endLine },
          language: file.language,
          relevantContent: file.relevantContent,
        })),
      companyName: company.name,
      companyLogo: company.logo,
      severity: f.severity,
      status: f.status,
    }));
    const findingStats: FindingStat[] = (repository.allowedSeverities as Severity[]).map((severity) => {
      const ofSeverity = findingRows.filter((f) => f.severity === severity);
      return {
        severity,
        totalCount: ofSeverity.length,
        fixedCount: ofSeverity.filter((f) => f.status === 'fixed').length,
      };
    });
    return { teamMembers: team.map((t) => toAuditorPublicProfile(t.user)), findings, findingStats };
  }

  /**
   * The report and the caller's access, for those who may change it (`report.manage`): 404 for
   * anyone who cannot read it, 403 for a reader who may not change it.
   */
  async function loadForManager(db: Db, actor: Actor, reportId: string) {
    const access = await loadFindingAccess(db, actor);
    const row = await reportsRepo(db).findById(reportId, reportReadScope(access));
    if (!row) throw reportNotFound();
    requireReportManager(access, row);
    return { access, row };
  }

  /** Columns an input sets, with the guild resolved by name (created on demand by platform admins). */
  async function columnsOf(db: Db, actor: Actor, input: Omit<UpdateReportRequest, 'findingIds'>) {
    const { guild, engagementStartDate, engagementEndDate, ...rest } = input;
    const values: Partial<ReportRow> = { ...rest };
    const start = dateOrNull(engagementStartDate);
    const end = dateOrNull(engagementEndDate);
    if (start !== undefined) values.engagementStartDate = start;
    if (end !== undefined) values.engagementEndDate = end;
    if (guild !== undefined)
      values.guildId =
        guild === null ? null : (await resolveGuild(db, guild, can(actor, 'platform.administer', null))).id;
    return values;
  }

  /** A page of visible reports (see `listReports`), read from the database. */
  async function listReportsPage(actor: Actor, query: ListReportsQuery): Promise<ReportPage> {
    const q = query.q?.trim() || undefined;
    const guild = query.guild?.trim() || undefined;
    const filterHash = hashFilters({ q: q?.toLowerCase(), guild: guild?.toLowerCase() });
    const keys = query.next === undefined ? [] : deps.cursors.decode(query.next, filterHash);
    let after: { publishedAt: string | null; id: string } | undefined;
    if (keys.length > 0) {
      const [publishedAt, id] = keys;
      if (
        keys.length !== 2 ||
        !(publishedAt === null || isIsoMicros(publishedAt)) ||
        typeof id !== 'string' ||
        !isUuid(id)
      ) {
        throw invalidCursor();
      }
      after = { publishedAt, id };
    }
    const rows = await reportsRepo(database.db).listPage({
      visibility: reportReadScope(await readerOf(actor)),
      q,
      guild,
      after,
      limit: query.limit ?? DEFAULT_LIMIT,
    });
    const page = deps.cursors.pageOf(rows, {
      limit: query.limit ?? DEFAULT_LIMIT,
      filterHash,
      given: query.next,
      keyOf: (r) => [r.publishedAtKey, r.id],
    });
    return {
      // The page's rows carry their company's handle (one statement for the page).
      reports: page.items.map(withSnapshot),
      nextValue: page.nextValue,
    };
  }

  return {
    /**
     * A page of visible reports: drafts first (for those who may see them), then newest published.
     * `q` searches the title and the client name, `guild` filters by guild name. Keyset cursor
     * over (publishedAt, id) with a hash of `q` and `guild`; `limit=0` returns no reports and a
     * cursor at the same position (null when none follows).
     */
    async listReports(actor: Actor, query: ListReportsQuery): Promise<ReportPage> {
      return listReportsPage(actor, query);
    },

    async getReport(actor: Actor, reportId: string): Promise<Report> {
      const row = await reportsRepo(database.db).findById(reportId, reportReadScope(await readerOf(actor)));
      if (!row) throw reportNotFound();
      const [report] = await render(database.db, [row]);
      return report!;
    },

    /**
     * Makes a report of a finished repository (its company's managers, its repository admins,
     * platform admins; `report.manage`): a snapshot of the team, the published valid findings and
     * their statistics. Private and unpublished until published. 404 for a repository the caller
     * does not see, 403 for one they see but may not report on.
     */
    async createReport(actor: Actor, input: CreateReportRequest): Promise<Report> {
      const user = requireUser(actor);
      return database.transaction(async (tx) => {
        const access = await loadFindingAccess(tx.db, user);
        const repository = await requireVisibleRepository(tx.db, access, input.repositoryId);
        requireReportManager(access, { companyId: repository.companyId, repositoryId: repository.id });
        if (!repository.finishedAt) {
          throw new AppError('CONFLICT', {
            message: 'The repository is not finished; finish it before making its report.',
          });
        }
        const company = (await reportsRepo(tx.db).companiesById([repository.companyId])).get(
          repository.companyId,
        )!;
        const { repositoryId, findingIds, ...fields } = input;
        const row = await reportsRepo(tx.db).insert({
          companyId: repository.companyId,
          repositoryId,
          projectTitle: repository.name,
          clientName: company.name,
          clientLogo: company.logo ?? '',
          clientWebsite: company.website ?? '',
          engagementStartDate: repository.timeframeStart,
          engagementEndDate: repository.timeframeEnd,
          ...(await columnsOf(tx.db, user, fields)),
          snapshot: await takeSnapshot(tx.db, access, repository, findingIds),
          createdBy: user.userId,
        });
        const [report] = await render(tx.db, [row]);
        return report!;
      });
    },

    /**
     * Changes the given fields (privacy, guild, texts …) of a report (`report.manage`: company
     * managers, repository admins, platform admins); `findingIds` takes the snapshot again with
     * those findings.
     */
    async updateReport(actor: Actor, reportId: string, input: UpdateReportRequest): Promise<Report> {
      return database.transaction(async (tx) => {
        const { access, row: existing } = await loadForManager(tx.db, actor, reportId);
        const { findingIds, ...fields } = input;
        const values = await columnsOf(tx.db, actor, fields);
        if (findingIds !== undefined) {
          const repository = existing.repositoryId
            ? await repositoriesRepo(tx.db).findById(existing.repositoryId)
            : null;
          if (!repository) {
            throw new AppError('CONFLICT', {
              message: 'The report has no repository to choose findings from.',
            });
          }
          values.snapshot = await takeSnapshot(tx.db, access, repository, findingIds);
        }
        const row = await reportsRepo(tx.db).update(reportId, values);
        const [report] = await render(tx.db, [row]);
        return report!;
      });
    },

    /**
     * Publishes a report (`report.manage`): `publishedAt` is set the first time (publishing again
     * keeps it); `isPrivate: false` makes it public, `true` keeps it to its readers (the company's
     * users, the repository's admins, cross-company readers).
     */
    async publishReport(actor: Actor, reportId: string, input: { isPrivate?: boolean }): Promise<Report> {
      return database.transaction(async (tx) => {
        const { row: existing } = await loadForManager(tx.db, actor, reportId);
        const row = await reportsRepo(tx.db).update(reportId, {
          publishedAt: existing.publishedAt ?? now(),
          ...(input.isPrivate !== undefined ? { isPrivate: input.isPrivate } : {}),
        });
        const [report] = await render(tx.db, [row]);
        return report!;
      });
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
