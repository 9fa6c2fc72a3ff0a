import { accessRepo } from '../../access/access.repo.ts';
import { loadFindingAccessForRead, requireVisibleRepository } from '../../access/access.service.ts';
import { can } from '../../access/policy.ts';
import type { Actor, ServiceActor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { fileFinding, requireFinding } from '../../platform/findings/findings.service.ts';
import { draftsRepo } from './drafts.repo.ts';
import type { FindingScanTimeline, PublishDraftsRequest, PublishedDraft } from './drafts.schemas.ts';

const short = (commit: string | null) => (commit ? commit.slice(0, 12) : 'an unknown commit');

/** The words of a scan timeline entry. */
export function scanEventText(kind: string, scanId: string, commit: string | null): string {
  switch (kind) {
    case 'published':
      return `Published from scan ${scanId} at commit ${short(commit)}`;
    case 'present':
      return `Still present in scan ${scanId} at commit ${short(commit)}`;
    case 'not_reproduced':
      return `Not reproduced since scan ${scanId} at commit ${short(commit)}`;
    default:
      return `Marked fixed: not reproduced by scan ${scanId} at commit ${short(commit)}`;
  }
}

/**
 * Publishing drafts as repository findings (through the same filing path as createFinding), and
 * the scan timeline of a published finding.
 */
export function createDraftPublishing(deps: { database: Database; publicUrl?: string | undefined }) {
  const { database } = deps;
  return {
    /**
     * publishDrafts: files each draft as a finding of the repository, once. The drafts are locked
     * in id order: a second publisher of the same draft waits, then finds it published and gets
     * the same finding back (`created: false`).
     */
    async publishDrafts(
      actor: ServiceActor,
      body: PublishDraftsRequest,
    ): Promise<{ items: PublishedDraft[] }> {
      const companyId = actor.organizationId;
      const ids = [...new Set(body.drafts.map((d) => d.draftId.toLowerCase()))];
      if (ids.length !== body.drafts.length) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'A draft appears twice in drafts.',
          details: { field: 'drafts' },
        });
      }
      return database.transaction(async (tx) => {
        const repo = draftsRepo(tx.db);
        const settings = await repo.settings(companyId);
        if (!can(actor, 'draft.publish', { triagerUserIds: settings.triagerUserIds })) {
          throw new AppError('FORBIDDEN', {
            message:
              'Only company managers, and the members a manager allows, publish drafts, with a console session or a user token and X-Vigil-Company (a published finding has an author; service keys do not publish).',
          });
        }
        const userId = actor.sessionUserId!;
        const repository = await accessRepo(tx.db).findRepository(body.repositoryId);
        if (!repository || repository.companyId !== companyId) {
          throw new AppError('NOT_FOUND', {
            message: 'Repository not found.',
            details: { repositoryId: body.repositoryId },
          });
        }
        const locked = await repo.lock(companyId, ids);
        const missing = ids.filter((id) => !locked.some((d) => d.id === id));
        if (missing.length > 0)
          throw new AppError('NOT_FOUND', { message: 'Draft not found.', details: { draftIds: missing } });
        const byId = new Map(locked.map((d) => [d.id, d]));
        const items: PublishedDraft[] = [];
        for (const choice of body.drafts) {
          const draft = byId.get(choice.draftId.toLowerCase())!;
          if (draft.publishedFindingId) {
            const [existing] = await repo.byIds(companyId, [draft.id]);
            items.push({
              draftId: draft.id,
              findingId: draft.publishedFindingId,
              repositoryId: existing?.publishedRepositoryId ?? body.repositoryId,
              number: existing?.publishedNumber ?? 0,
              created: false,
            });
            continue;
          }
          const severity = choice.severity ?? draft.severity;
          if (!repository.allowedSeverities.includes(severity)) {
            throw new AppError('VALIDATION_FAILED', {
              message: `Severity '${severity}' is not allowed on this repository (allowed: ${repository.allowedSeverities.join(', ')}).`,
              details: { field: 'severity', draftId: draft.id },
            });
          }
          const scan = await repo.latestScanOf(draft.id);
          const location = draft.location;
          const link = scan
            ? `\n\nPublished from Vigil scan ${scan.id}${scan.commit ? ` at commit ${scan.commit}` : ''}${deps.publicUrl ? ` (${deps.publicUrl}/app/companies/${repository.companyId}/scans/${scan.id})` : ''}; rule ${draft.ruleId ?? 'unknown'}.`
            : '';
          const filed = await fileFinding(tx.db, repository, userId, {
            title: choice.title ?? draft.title,
            description: `${choice.description ?? draft.description}${link}`,
            severity,
            category: draft.ruleId,
            sourceScanId: scan?.id ?? null,
            relatedFiles: location
              ? [
                  {
                    path: location.file,
                    lines: { start: location.startLine, end: Math.max(location.endLine, location.startLine) },
                    language: 'solidity',
                    ...(draft.details.snippet ? { relevantContent: draft.details.snippet } : {}),
                  },
                ]
              : [],
          });
          await repo.markPublished(draft.id, filed.id, userId);
          if (scan)
            await repo.addScanEvent({
              findingId: filed.id,
              scanId: scan.id,
              kind: 'published',
              commit: scan.commit,
            });
          await appendAuditEntry(tx.db, {
            companyId,
            action: 'draft_published',
            performedBy: userId,
            details: {
              draftId: draft.id,
              findingId: filed.id,
              repositoryId: repository.id,
              number: filed.number,
              severity,
            },
          });
          items.push({
            draftId: draft.id,
            findingId: filed.id,
            repositoryId: repository.id,
            number: filed.number,
            created: true,
          });
        }
        return { items };
      });
    },

    /** getFindingScanTimeline: what later scans said of a published finding (visible to the caller). */
    async getTimeline(actor: Actor, repositoryId: string, ref: string): Promise<FindingScanTimeline> {
      const access = await loadFindingAccessForRead(database.db, actor);
      await requireVisibleRepository(database.db, access, repositoryId);
      const finding = await requireFinding(database.db, access, repositoryId, ref);
      const repo = draftsRepo(database.db);
      const events = await repo.scanEvents(finding.id);
      return {
        draftId: (await repo.draftOf(finding.id)) ?? null,
        sourceScanId: finding.sourceScanId,
        events: events.map((e) => ({ ...e, text: scanEventText(e.kind, e.scanId, e.commit) })),
      };
    },
  };
}

export type DraftPublishing = ReturnType<typeof createDraftPublishing>;
