import { loadFindingAccess, requireVisibleRepository } from '../../access/access.service.ts';
import { can } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { parseSearch } from '../findings/search-syntax.ts';
import { findingViewsRepo } from './finding-views.repo.ts';

/** Columns a finding view may show (v0 §2.4). */
export const FINDING_VIEW_COLUMNS = [
  'number',
  'title',
  'status',
  'severity',
  'commented_at',
  'created_by',
  'reward',
  'assigned_to',
  'labels',
  'likelihood',
  'note',
] as const;
export type FindingViewColumn = (typeof FINDING_VIEW_COLUMNS)[number];

export interface CreateFindingViewInput {
  personal: boolean;
  name: string;
  filter: string;
  description?: string | null;
  columns?: FindingViewColumn[] | null;
}

/**
 * Saved finding views of a repository. A personal view belongs to its creator; anyone who sees
 * the repository may save one. A shared (non-personal) view is shown to every member, so only the
 * repository's admins and its client side (clients, company users) may create one.
 */
export function createFindingViewsService(deps: { database: Database }) {
  const { database } = deps;
  return {
    /** The repository's shared views and the caller's personal ones (404 when the repository is not visible). */
    async listViews(actor: Actor, repositoryId: string) {
      const access = await loadFindingAccess(database.db, actor);
      await requireVisibleRepository(database.db, access, repositoryId);
      const rows = await findingViewsRepo(database.db).listVisible(repositoryId, access.userId);
      return rows.map((r) => ({
        ...r,
        columns: (r.columns as FindingViewColumn[] | null) ?? null,
        createdAt: r.createdAt.toISOString(),
      }));
    },

    /** Creates a view after checking that its filter parses in the `s` search syntax. */
    async createView(
      actor: Actor,
      repositoryId: string,
      input: CreateFindingViewInput,
    ): Promise<{ id: string }> {
      const access = await loadFindingAccess(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      if (!input.personal && !can(access, 'repository.share_view', { repository })) {
        throw new AppError('FORBIDDEN', {
          message: 'Only repository admins and clients may create shared views.',
        });
      }
      const name = input.name.trim();
      if (name.length === 0) {
        throw new AppError('VALIDATION_FAILED', {
          message: "Invalid body field 'name': must not be blank.",
          details: { field: 'name' },
        });
      }
      parseSearch(input.filter, 'filter');
      const columns = input.columns ? [...new Set(input.columns)] : null;
      const id = await findingViewsRepo(database.db).insert({
        repositoryId,
        userId: access.userId,
        personal: input.personal,
        name,
        filter: input.filter,
        description: input.description ?? null,
        columns,
      });
      return { id };
    },

    /**
     * Deletes a view: a personal one by its owner (others' personal views are not found), a
     * shared one by those who may share views.
     */
    async deleteView(actor: Actor, repositoryId: string, viewId: string): Promise<void> {
      const access = await loadFindingAccess(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      const repo = findingViewsRepo(database.db);
      const view = await repo.find(repositoryId, viewId);
      if (!view || (view.personal && view.userId !== access.userId)) {
        throw new AppError('NOT_FOUND', { message: 'View not found.' });
      }
      if (!can(access, 'finding_view.delete', { repository, view })) {
        throw new AppError('FORBIDDEN', {
          message: 'Only repository admins and clients may delete shared views.',
        });
      }
      await repo.remove(view.id);
    },
  };
}

export type FindingViewsService = ReturnType<typeof createFindingViewsService>;
