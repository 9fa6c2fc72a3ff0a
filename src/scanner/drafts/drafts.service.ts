import { requireManagedCompany } from '../../access/access.service.ts';
import { can } from '../../access/policy.ts';
import type { Actor, ServiceActor } from '../../auth/actor.ts';
import type { Database, Db } from '../../db/client.ts';
import { allRuleMetas } from '../../engine/index.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { type SeverityCounts, scanSummary, zeroCounts } from '../../organization/scan-summary.ts';
import { getWorkspace } from '../../organization/workspaces/workspaces.service.ts';
import type { CursorCodec } from '../../platform/pagination/cursor.ts';
import { hashFilters } from '../../platform/pagination/cursor.ts';
import { scansRepo } from '../scans/scans.repo.ts';
import { type DraftRow, draftsRepo } from './drafts.repo.ts';
import type {
  Draft,
  DraftPage,
  DraftSettings,
  ScanComparison,
  ScanDraftsQuery,
  TriageDraftsRequest,
  WorkspaceDraftsQuery,
} from './drafts.schemas.ts';

/** Registry ids of each rule (`SWC-107`, `CWE-841`), read once from the engine's catalogue. */
let ruleIdentifiers: Map<string, string[]> | null = null;
function identifiersOf(ruleId: string | null): string[] {
  ruleIdentifiers ??= new Map(
    allRuleMetas().map((m) => [m.id, [m.swc, m.cwe].filter((i): i is string => Boolean(i))]),
  );
  return (ruleId && ruleIdentifiers.get(ruleId)) || [];
}

/** The API shape of a draft. */
export function toDraft(row: DraftRow): Draft {
  const details = row.details ?? {};
  return {
    id: row.id,
    workspaceId: row.workspaceId ?? '',
    fingerprint: row.fingerprint ?? row.id,
    ruleId: row.ruleId ?? 'vigil.finding',
    identifiers: identifiersOf(row.ruleId),
    title: row.title,
    description: row.description,
    severity: row.severity,
    confidence: row.confidence,
    category: row.category,
    location: row.location ?? { file: '', startLine: 0, endLine: 0 },
    snippet: details.snippet ?? null,
    contract: details.contract ?? null,
    function: details.function ?? null,
    state: row.triageState ?? 'open',
    dismissal:
      row.triageState === 'dismissed' && row.dismissedReason && row.dismissedAt
        ? {
            reason: row.dismissedReason,
            comment: row.dismissedComment,
            by: { userId: row.dismissedBy, username: row.dismissedByUsername },
            at: row.dismissedAt,
          }
        : null,
    publication:
      row.publishedFindingId && row.publishedAt
        ? {
            findingId: row.publishedFindingId,
            repositoryId: row.publishedRepositoryId,
            number: row.publishedNumber,
            by: { userId: row.publishedBy, username: row.publishedByUsername },
            at: row.publishedAt,
          }
        : null,
    ...(row.baselineState !== undefined ? { baselineState: row.baselineState } : {}),
    firstSeenAt: row.createdAt,
  };
}

/** The cursor keys of a draft listing: severity rank and id, checked before any SQL. */
function positionOf(codec: CursorCodec, next: string | undefined, filterHash: string) {
  if (next === undefined) return undefined;
  const keys = codec.decode(next, filterHash);
  if (keys.length === 0) return undefined;
  const [rank, id] = keys;
  if (
    typeof rank !== 'number' ||
    !Number.isInteger(rank) ||
    rank < 0 ||
    rank > 5 ||
    typeof id !== 'string' ||
    !/^[0-9a-f-]{36}$/.test(id)
  ) {
    throw new AppError('INVALID_CURSOR');
  }
  return { rank, id };
}

/** A person's user id, or null for a service key. */
const personOf = (actor: ServiceActor): string | null => actor.sessionUserId ?? null;

/**
 * Drafts of the organization's scans: listings (a workspace's, a scan's), triage (dismiss,
 * reopen), a scan's comparison with its baseline, and the company's triage settings. Publishing
 * is drafts.publish.ts; the comparison written at completion is drafts.compare.ts.
 */
export function createDraftsService(deps: { database: Database; cursors: CursorCodec }) {
  const { database, cursors } = deps;

  function page(rows: DraftRow[], limit: number, filterHash: string, given: string | undefined): DraftPage {
    const result = cursors.pageOf(rows, {
      limit,
      filterHash,
      ...(given !== undefined ? { given } : {}),
      keyOf: (r) => [r.rank, r.id],
    });
    return { items: result.items.map(toDraft), nextValue: result.nextValue };
  }

  /** Throws FORBIDDEN unless the actor may triage the company's drafts. */
  async function requireTriager(db: Db, actor: ServiceActor, action: 'draft.triage' | 'draft.publish') {
    const settings = await draftsRepo(db).settings(actor.organizationId);
    if (!can(actor, action, { triagerUserIds: settings.triagerUserIds })) {
      throw new AppError('FORBIDDEN', {
        message:
          action === 'draft.publish'
            ? 'Only company managers, and the members a manager allows, publish drafts, with a console session or a user token and X-Vigil-Company (a published finding has an author; service keys do not publish).'
            : 'Triage needs the findings:write scope, or a company manager (or a member a manager allows).',
      });
    }
    return settings;
  }

  return {
    /** listWorkspaceDrafts: a workspace's drafts across its scans, critical first. */
    async listWorkspaceDrafts(
      actor: ServiceActor,
      workspaceId: string,
      query: WorkspaceDraftsQuery,
    ): Promise<DraftPage> {
      await getWorkspace(database.db, actor.organizationId, workspaceId);
      const { limit = 50, next, ...filters } = query;
      const filterHash = hashFilters({ list: 'workspace-drafts', workspaceId, ...filters });
      const after = positionOf(cursors, next, filterHash);
      const rows = await draftsRepo(database.db).listWorkspace(
        actor.organizationId,
        workspaceId,
        filters,
        after,
        limit,
      );
      return page(rows, limit, filterHash, next);
    },

    /** listScanDrafts: the drafts a completed scan found (or, with baselineState=fixed, fixed). */
    async listScanDrafts(actor: ServiceActor, scanId: string, query: ScanDraftsQuery): Promise<DraftPage> {
      const scan = await scansRepo(database.db).findForCompany(actor.organizationId, scanId);
      if (!scan) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
      if (scan.status !== 'completed')
        throw new AppError('SCAN_NOT_COMPLETED', { details: { status: scan.status } });
      const { limit = 50, next, ...filters } = query;
      const filterHash = hashFilters({ list: 'scan-drafts', scanId, ...filters });
      const after = positionOf(cursors, next, filterHash);
      const rows = await draftsRepo(database.db).listScan(scanId, filters, after, limit);
      return page(rows, limit, filterHash, next);
    },

    /**
     * triageDrafts: dismisses (with a reason) or reopens drafts, all or none. The drafts are
     * locked in id order, so that racing triagers apply one after the other; each draft changed
     * writes one audit entry. A draft already dismissed keeps its dismissal (reason, who, when),
     * as a draft not dismissed stays as it is when reopened: two triagers dismissing overlapping
     * sets change each draft once.
     */
    async triageDrafts(actor: ServiceActor, body: TriageDraftsRequest): Promise<{ items: Draft[] }> {
      if (body.action === 'dismiss' && !body.reason) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'A dismissal needs a reason: false_positive, wont_fix or used_in_tests.',
          details: { field: 'reason' },
        });
      }
      const companyId = actor.organizationId;
      const ids = [...new Set(body.draftIds.map((id) => id.toLowerCase()))];
      return database.transaction(async (tx) => {
        await requireTriager(tx.db, actor, 'draft.triage');
        const repo = draftsRepo(tx.db);
        const locked = await repo.lock(companyId, ids);
        const missing = ids.filter((id) => !locked.some((d) => d.id === id));
        if (missing.length > 0)
          throw new AppError('NOT_FOUND', { message: 'Draft not found.', details: { draftIds: missing } });
        const published = locked.filter((d) => d.triageState === 'published');
        if (published.length > 0) {
          throw new AppError('CONFLICT', {
            message: 'A published draft is followed on its finding; its triage no longer changes.',
            details: { draftIds: published.map((d) => d.id) },
          });
        }
        const by = personOf(actor);
        if (body.action === 'dismiss') {
          const reason = body.reason!;
          const changed = locked.filter((d) => d.triageState !== 'dismissed');
          await repo.dismiss(
            changed.map((d) => d.id),
            { reason, comment: body.comment ?? null, by },
          );
          for (const d of changed) {
            await appendAuditEntry(tx.db, {
              companyId,
              action: 'draft_dismissed',
              performedBy: by,
              details: {
                draftId: d.id,
                workspaceId: d.workspaceId,
                reason,
                ...(body.comment ? { comment: body.comment } : {}),
                ...(by ? {} : { serviceKeyId: actor.credentialId }),
              },
            });
          }
        } else {
          const dismissed = locked.filter((d) => d.triageState === 'dismissed').map((d) => d.id);
          await repo.reopen(dismissed);
          for (const id of dismissed) {
            await appendAuditEntry(tx.db, {
              companyId,
              action: 'draft_reopened',
              performedBy: by,
              details: { draftId: id, ...(by ? {} : { serviceKeyId: actor.credentialId }) },
            });
          }
        }
        return { items: (await repo.byIds(companyId, ids)).map(toDraft) };
      });
    },

    /** getScanComparison: a completed scan against its baseline, counted now. */
    async getScanComparison(actor: ServiceActor, scanId: string): Promise<ScanComparison> {
      const scan = await scansRepo(database.db).findForCompany(actor.organizationId, scanId);
      if (!scan) throw new AppError('NOT_FOUND', { message: 'Scan not found.', details: { scanId } });
      if (scan.status !== 'completed')
        throw new AppError('SCAN_NOT_COMPLETED', { details: { status: scan.status } });
      return comparisonOf(database.db, scan);
    },

    /** The company's draft settings (managers). */
    async getSettings(actor: Actor, companyId: string): Promise<DraftSettings> {
      await requireManagedCompany(database.db, actor, companyId);
      return draftsRepo(database.db).settings(companyId);
    },

    /** Replaces the company's draft settings (managers); audited. */
    async updateSettings(actor: Actor, companyId: string, body: DraftSettings): Promise<DraftSettings> {
      const user = await requireManagedCompany(database.db, actor, companyId);
      const triagerUserIds = [...new Set(body.triagerUserIds.map((id) => id.toLowerCase()))];
      return database.transaction(async (tx) => {
        await draftsRepo(tx.db).saveSettings(companyId, {
          triagerUserIds,
          autoMarkFixed: body.autoMarkFixed,
          updatedBy: user.userId,
        });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'draft_settings_changed',
          performedBy: user.userId,
          details: { triagerUserIds, autoMarkFixed: body.autoMarkFixed },
        });
        return { triagerUserIds, autoMarkFixed: body.autoMarkFixed };
      });
    },
  };
}

/** A completed scan's comparison with its baseline (counts read now: later dismissals count). */
export async function comparisonOf(
  db: Db,
  scan: {
    id: string;
    baselineScanId: string | null;
    branch: string | null;
    commit: string | null;
    pullRequest: boolean;
  },
): Promise<ScanComparison> {
  const { found, fixed } = await draftsRepo(db).comparisonCounts(scan.id);
  const counts = { new: 0, unchanged: 0, reopened: 0, dismissed: 0 };
  const newBySeverity: SeverityCounts = zeroCounts();
  const openBySeverity: SeverityCounts = zeroCounts();
  for (const row of found) {
    const state = row.baselineState ?? 'new';
    counts[state] += row.n;
    if (row.dismissed) {
      counts.dismissed += row.n;
      continue;
    }
    openBySeverity[row.severity] += row.n;
    if (state !== 'unchanged') newBySeverity[row.severity] += row.n;
  }
  return {
    scanId: scan.id,
    baselineScanId: scan.baselineScanId,
    branch: scan.branch,
    commit: scan.commit,
    pullRequest: scan.pullRequest,
    ...counts,
    fixed,
    newBySeverity,
    openBySeverity,
    summary: scanSummary(newBySeverity, fixed),
  };
}

export type DraftsService = ReturnType<typeof createDraftsService>;
