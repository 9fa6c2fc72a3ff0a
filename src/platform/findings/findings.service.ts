import {
  loadFindingAccess,
  loadFindingAccessForRead,
  requireVisibleRepository,
} from '../../access/access.service.ts';
import { can, effectiveRole, type FindingAccess, findingCompaniesOf } from '../../access/policy.ts';
import type { FindingStatus, RepositoryRole } from '../../access/rules.ts';
import type { Actor } from '../../auth/actor.ts';
import type { KeptReads } from '../../auth/kept-reads.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { canonicalJson, isUuid } from '../../strings.ts';
import { commentsRepo } from '../comments/comments.repo.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import type { RepositoryRow as Repository } from '../repositories/repositories.repo.ts';
import {
  allocateFindingNumber,
  type FindingChange,
  type FindingRef,
  type FindingRow,
  findingsRepo,
  loadFindingPayloads,
} from './findings.repo.ts';
import type { CreateFinding, Finding } from './findings.schemas.ts';
import { type AllFindingsQuery, type AllFindingsResult, listAllFindings } from './findings-listing.ts';

type Severity = Finding['severity'];

/** A `finding_ref` path parameter (uuid or number), parsed. */
function parseRef(ref: string): FindingRef {
  if (isUuid(ref)) return { id: ref.toLowerCase() };
  if (/^[1-9][0-9]{0,8}$/.test(ref)) return { number: Number(ref) };
  throw new AppError('VALIDATION_FAILED', {
    message: "Invalid path parameter 'finding_ref': a finding id (uuid) or number is expected.",
    details: { field: 'finding_ref' },
  });
}

/** A finding of the repository the user may see (404 otherwise), locked for the rest of the transaction when asked. */
export async function requireFinding(
  db: Db,
  access: FindingAccess,
  repositoryId: string,
  ref: string,
  lock = false,
): Promise<FindingRow> {
  const row = await findingsRepo(db).findVisible(access, repositoryId, parseRef(ref), lock);
  if (!row) throw new AppError('NOT_FOUND', { message: 'Finding not found.' });
  return row;
}

/**
 * Files a finding on a repository under its next number, by `userId` (attributed to their team
 * when they have one): every way a finding comes to be (filing, publishing a scan's draft) goes
 * through here, inside the caller's transaction. The caller has checked access and input.
 */
export async function fileFinding(
  db: Db,
  repository: Pick<Repository, 'id' | 'companyId'>,
  userId: string,
  input: CreateFinding & { category?: string | null; sourceScanId?: string | null },
): Promise<{ id: string; number: number }> {
  const repo = findingsRepo(db);
  const team = await repo.memberTeam(repository.id, userId);
  const number = await allocateFindingNumber(db, repository.id);
  const id = await repo.insert(
    {
      companyId: repository.companyId,
      repositoryId: repository.id,
      number,
      published: true,
      title: input.title,
      description: input.description,
      severity: input.severity,
      category: input.category ?? null,
      sourceScanId: input.sourceScanId ?? null,
      createdBy: userId,
      attributedTo: team ?? userId,
      assetGroupId: input.assetGroupId ?? null,
    },
    (input.relatedFiles ?? []).map((file) => ({
      path: file.path,
      startLine: file.lines?.start ?? null,
      endLine: file.lines?.end ?? null,
      language: file.language ?? null,
      relevantContent: file.relevantContent ?? null,
    })),
    input.labels ?? [],
  );
  return { id, number };
}

function forbidden(message: string): AppError {
  return new AppError('FORBIDDEN', { message });
}

/** Checks that every label id is a usable label of the repository (and, for reviewers, reviewer-usable). */
async function requireUsableLabels(
  db: Db,
  repository: Repository,
  ids: string[],
  access: FindingAccess,
): Promise<void> {
  if (ids.length === 0) return;
  const rows = await findingsRepo(db).usableLabels(repository.id, repository.companyId, ids);
  const found = new Map(rows.map((l) => [l.id, l]));
  for (const id of ids) {
    const label = found.get(id);
    if (!label) {
      throw new AppError('VALIDATION_FAILED', {
        message: `Unknown label ${id} for this repository.`,
        details: { field: 'labels' },
      });
    }
    if (label.archivedAt) {
      throw new AppError('VALIDATION_FAILED', {
        message: `Label '${label.name}' is archived.`,
        details: { field: 'labels' },
      });
    }
    if (!can(access, 'label.use', { repository, label }))
      throw forbidden(`Reviewers may not use the label '${label.name}'.`);
  }
}

function requireAllowedSeverity(repository: Repository, severity: Severity): void {
  if (!repository.allowedSeverities.includes(severity)) {
    throw new AppError('VALIDATION_FAILED', {
      message: `Severity '${severity}' is not allowed on this repository (allowed: ${repository.allowedSeverities.join(', ')}).`,
      details: { field: 'severity' },
    });
  }
}

/**
 * Findings of repositories: filing (with per-repository numbers), status, severity, assignee,
 * labels, duplicate marking, read markers, and the all-findings listing.
 */
export function createFindingsService(deps: {
  database: Database;
  cursors: CursorCodec;
  /** All-findings pages kept per caller (see kept-reads.ts); none kept without it. */
  pages?: KeptReads<AllFindingsResult>;
}) {
  const { database } = deps;

  /**
   * Runs a change on one finding in a transaction, the finding locked: `apply` checks it and says
   * what to write (null: nothing changed), which is written once with the last update time.
   * Returns the fresh payload.
   */
  async function change(
    actor: Actor,
    repositoryId: string,
    ref: string,
    apply: (ctx: {
      db: Db;
      access: FindingAccess;
      repository: Repository;
      role: RepositoryRole | null;
      finding: FindingRow;
    }) => Promise<FindingChange | null>,
  ): Promise<Finding> {
    return database.transaction(async (tx) => {
      const access = await loadFindingAccess(tx.db, actor);
      const repository = await requireVisibleRepository(tx.db, access, repositoryId);
      const finding = await requireFinding(tx.db, access, repositoryId, ref, true);
      const role = effectiveRole(access, repository);
      const values = await apply({ db: tx.db, access, repository, role, finding });
      if (values) await findingsRepo(tx.db).writeChange(finding.id, values);
      const [payload] = await loadFindingPayloads(tx.db, access, [finding.id]);
      return payload as Finding;
    });
  }

  return {
    /**
     * Files a finding on a repository (reviewers, judges, triagers, repository and platform
     * admins). Its number is the repository's next one, allocated in the same transaction.
     */
    async createFinding(actor: Actor, repositoryId: string, input: CreateFinding): Promise<Finding> {
      return database.transaction(async (tx) => {
        const access = await loadFindingAccess(tx.db, actor);
        const repository = await requireVisibleRepository(tx.db, access, repositoryId);
        if (!can(access, 'finding.create', { repository }))
          throw forbidden('Only reviewers, judges, triagers and admins may file findings.');
        requireAllowedSeverity(repository, input.severity);
        const labelIds = input.labels ?? [];
        await requireUsableLabels(tx.db, repository, labelIds, access);
        const repo = findingsRepo(tx.db);
        if (input.assetGroupId) {
          if (!(await repo.assetGroupInRepository(input.assetGroupId, repository.id))) {
            throw new AppError('VALIDATION_FAILED', {
              message: 'The asset group is not one of this repository.',
              details: { field: 'assetGroupId' },
            });
          }
        }
        for (const file of input.relatedFiles ?? []) {
          if (file.lines && file.lines.end < file.lines.start) {
            throw new AppError('VALIDATION_FAILED', {
              message: 'relatedFiles lines.end must not be before lines.start.',
              details: { field: 'relatedFiles' },
            });
          }
        }
        const { id } = await fileFinding(tx.db, repository, access.userId, input);
        const [payload] = await loadFindingPayloads(tx.db, access, [id]);
        return payload as Finding;
      });
    },

    /** One finding of a repository by id or number, as the user sees it. */
    async getFinding(actor: Actor, repositoryId: string, ref: string): Promise<Finding> {
      const access = await loadFindingAccess(database.db, actor);
      await requireVisibleRepository(database.db, access, repositoryId);
      const finding = await requireFinding(database.db, access, repositoryId, ref);
      const [payload] = await loadFindingPayloads(database.db, access, [finding.id]);
      return payload as Finding;
    },

    /** Changes the status along the transition table (`src/access/rules.ts`); the same status is a no-op. */
    async changeStatus(
      actor: Actor,
      repositoryId: string,
      ref: string,
      status: FindingStatus,
    ): Promise<Finding> {
      return change(actor, repositoryId, ref, async ({ access, repository, role, finding }) => {
        if (finding.status === status) return null;
        if (role === null) throw forbidden('You may not change the status of this finding.');
        if (status === 'duplicate' || finding.status === 'duplicate') {
          throw new AppError('TRANSITION_NOT_ALLOWED', {
            message: 'Use duplicate marking (PUT …/duplicate-of) to mark or unmark a duplicate.',
          });
        }
        if (!can(access, 'finding.transition', { repository, finding, from: finding.status, to: status })) {
          throw new AppError('TRANSITION_NOT_ALLOWED', {
            message: `A ${role} may not change a finding from ${finding.status} to ${status}.`,
          });
        }
        return { status };
      });
    },

    /** Changes the severity (judges, triagers, admins); it must be one the repository allows. */
    async changeSeverity(
      actor: Actor,
      repositoryId: string,
      ref: string,
      severity: Severity,
    ): Promise<Finding> {
      return change(actor, repositoryId, ref, async ({ access, repository, finding }) => {
        if (!can(access, 'finding.judge', { repository }))
          throw forbidden('Only judges, triagers and admins may change the severity.');
        requireAllowedSeverity(repository, severity);
        return finding.severity === severity ? null : { severity };
      });
    },

    /**
     * Assigns the finding to a user (by username) or unassigns it (null). Judges, triagers,
     * admins and the client side may assign; the assignee must be an active member of the
     * repository or a user of its company.
     */
    async assign(actor: Actor, repositoryId: string, ref: string, username: string | null): Promise<Finding> {
      return change(actor, repositoryId, ref, async ({ db, access, repository, finding }) => {
        if (!can(access, 'finding.assign', { repository }))
          throw forbidden('Reviewers may not assign findings.');
        let assigneeId: string | null = null;
        if (username !== null) {
          const user = await findingsRepo(db).assignee(repository.id, repository.companyId, username);
          if (!user?.member) {
            throw new AppError('VALIDATION_FAILED', {
              message: `'${username}' is not a member of this repository or its company.`,
              details: { field: 'assignee' },
            });
          }
          assigneeId = user.id;
        }
        return finding.assignedTo === assigneeId ? null : { assignedTo: assigneeId };
      });
    },

    /**
     * Adds and removes labels. Reviewers may only touch labels with `reviewerUse`; everyone else
     * who may change the finding may use every label of the repository. Adding a present label or
     * removing an absent one is a no-op.
     */
    async updateLabels(
      actor: Actor,
      repositoryId: string,
      ref: string,
      input: { add?: string[]; remove?: string[] },
    ): Promise<Finding> {
      return change(actor, repositoryId, ref, async ({ db, access, repository, finding }) => {
        if (!can(access, 'finding.label', { repository })) throw forbidden('You may not label this finding.');
        const add = [...new Set(input.add ?? [])];
        const remove = [...new Set(input.remove ?? [])];
        if (add.some((id) => remove.includes(id))) {
          throw new AppError('VALIDATION_FAILED', {
            message: 'A label cannot be both added and removed.',
            details: { field: 'add' },
          });
        }
        await requireUsableLabels(db, repository, add, access);
        const repo = findingsRepo(db);
        if (remove.length > 0) {
          const rows = await repo.labelsByIds(remove);
          const denied = rows.find((label) => !can(access, 'label.use', { repository, label }));
          if (denied) throw forbidden(`Reviewers may not use the label '${denied.name}'.`);
        }
        const added = await repo.addLabels(finding.id, add);
        const removed = await repo.removeLabels(finding.id, remove);
        return added + removed > 0 ? {} : null;
      });
    },

    /**
     * Marks the finding a duplicate of another finding of the same repository (status
     * `duplicate`), or unmarks it (`duplicateOf: null`, status back to `new`). Groups stay flat:
     * the finding joins the group of the target's root, and its own duplicates move with it.
     */
    async markDuplicate(
      actor: Actor,
      repositoryId: string,
      ref: string,
      input: { duplicateOf: string | null; description?: string },
    ): Promise<Finding> {
      return change(actor, repositoryId, ref, async ({ db, access, repository, finding }) => {
        if (!can(access, 'finding.judge', { repository }))
          throw forbidden('Only judges, triagers and admins may mark duplicates.');
        if (input.duplicateOf === null) {
          return finding.duplicateOf === null ? null : { duplicateOf: null, status: 'new' };
        }
        const target = await requireFinding(db, access, repositoryId, input.duplicateOf, true).catch(
          (err: unknown) => {
            if (err instanceof AppError && err.code === 'NOT_FOUND') {
              throw new AppError('VALIDATION_FAILED', {
                message: 'duplicateOf is not a finding of this repository.',
                details: { field: 'duplicateOf' },
              });
            }
            throw err;
          },
        );
        const rootId = target.duplicateOf ?? target.id;
        if (rootId === finding.id) {
          throw new AppError('CONFLICT', {
            message: 'A finding cannot be a duplicate of itself or of its own duplicate.',
          });
        }
        const repo = findingsRepo(db);
        // Keep groups one level deep: this finding's duplicates follow it into the root's group.
        await repo.moveDuplicates(finding.id, rootId);
        const joins = !(finding.duplicateOf === rootId && finding.status === 'duplicate');
        // The root changes when its group's description does, or when the group grows.
        if (input.description !== undefined || joins) {
          await repo.writeChange(
            rootId,
            input.description !== undefined ? { duplicateGroupDescription: input.description } : {},
          );
        }
        if (!joins) return input.description !== undefined ? {} : null;
        return { duplicateOf: rootId, status: 'duplicate' };
      });
    },

    /** Marks every comment of the finding read for the user, as of now. */
    async markRead(actor: Actor, repositoryId: string, ref: string): Promise<void> {
      await database.transaction(async (tx) => {
        const access = await loadFindingAccess(tx.db, actor);
        await requireVisibleRepository(tx.db, access, repositoryId);
        const finding = await requireFinding(tx.db, access, repositoryId, ref);
        await commentsRepo(tx.db).markRead(access.userId, finding.id);
      });
    },

    /** GET /api/v0/repositories/all-findings: the findings the user sees, filtered, ordered, paged. */
    async listAllFindings(actor: Actor, query: AllFindingsQuery): Promise<AllFindingsResult> {
      let companies: ReadonlySet<string> | null = null;
      const load = async () => {
        const access = await loadFindingAccessForRead(database.db, actor);
        companies = findingCompaniesOf(access);
        return listAllFindings(database.db, access, query, deps.cursors);
      };
      return deps.pages ? deps.pages.read(actor, canonicalJson(query), load, () => companies) : load();
    },
  };
}

export type FindingsService = ReturnType<typeof createFindingsService>;
