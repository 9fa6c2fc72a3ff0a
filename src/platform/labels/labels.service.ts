import { loadFindingAccess, requireVisibleRepository } from '../../access/access.service.ts';
import { can } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { toLabel } from '../findings/findings.repo.ts';
import { labelsRepo } from './labels.repo.ts';
import type { CreateLabel, Label, UpdateLabel } from './labels.schemas.ts';

function alreadyExists(name: string): AppError {
  return new AppError('ALREADY_EXISTS', {
    message: `A label named '${name}' already exists in this repository.`,
  });
}

/**
 * Labels of a repository. Everyone who sees the repository lists them (reviewers only those with
 * `reviewerRead`); repository admins (and platform admins) create, update, archive and delete.
 * System labels can be neither renamed nor deleted.
 */
export function createLabelsService(deps: { database: Database }) {
  const { database } = deps;

  async function requireAdmin(actor: Actor, repositoryId: string) {
    const access = await loadFindingAccess(database.db, actor);
    const repository = await requireVisibleRepository(database.db, access, repositoryId);
    if (!can(access, 'repository.manage_labels', { repository })) {
      throw new AppError('FORBIDDEN', { message: 'Only repository admins may manage labels.' });
    }
    return repository;
  }

  async function requireLabel(repositoryId: string, labelId: string) {
    const row = await labelsRepo(database.db).findInRepository(repositoryId, labelId);
    if (!row) throw new AppError('NOT_FOUND', { message: 'Label not found.' });
    return row;
  }

  return {
    /** Labels usable on the repository: its own and its company's shared ones, by name. */
    async listLabels(actor: Actor, repositoryId: string): Promise<Label[]> {
      const access = await loadFindingAccess(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      const rows = await labelsRepo(database.db).listUsable(repositoryId, repository.companyId);
      return rows.filter((label) => can(access, 'label.read', { repository, label })).map(toLabel);
    },

    /** Creates a label (names are unique per repository). */
    async createLabel(actor: Actor, repositoryId: string, input: CreateLabel): Promise<Label> {
      const repository = await requireAdmin(actor, repositoryId);
      try {
        const row = await labelsRepo(database.db).insert({
          repositoryId,
          companyId: repository.companyId,
          name: input.name.trim(),
          description: input.description ?? '',
          reviewerRead: input.reviewerRead ?? true,
          reviewerUse: input.reviewerUse ?? false,
        });
        return toLabel(row);
      } catch (err) {
        if (isUniqueViolation(err, 'labels_repository_name_key')) throw alreadyExists(input.name);
        throw err;
      }
    },

    /** Updates a label; `archived: true` archives it (it stays on findings, but cannot be added). */
    async updateLabel(
      actor: Actor,
      repositoryId: string,
      labelId: string,
      input: UpdateLabel,
    ): Promise<Label> {
      await requireAdmin(actor, repositoryId);
      const label = await requireLabel(repositoryId, labelId);
      if (label.isSystem && input.name !== undefined && input.name !== label.name) {
        throw new AppError('CONFLICT', { message: 'System labels cannot be renamed.' });
      }
      try {
        const row = await labelsRepo(database.db).update(labelId, {
          ...(input.name !== undefined ? { name: input.name.trim() } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.reviewerRead !== undefined ? { reviewerRead: input.reviewerRead } : {}),
          ...(input.reviewerUse !== undefined ? { reviewerUse: input.reviewerUse } : {}),
          ...(input.archived !== undefined
            ? { archivedAt: input.archived ? (label.archivedAt ?? new Date()) : null }
            : {}),
        });
        return toLabel(row);
      } catch (err) {
        if (isUniqueViolation(err, 'labels_repository_name_key'))
          throw alreadyExists(input.name ?? label.name);
        throw err;
      }
    },

    /** Deletes a label and removes it from every finding. */
    async deleteLabel(actor: Actor, repositoryId: string, labelId: string): Promise<void> {
      await requireAdmin(actor, repositoryId);
      const label = await requireLabel(repositoryId, labelId);
      if (label.isSystem)
        throw new AppError('CONFLICT', { message: 'System labels cannot be deleted; archive them instead.' });
      await labelsRepo(database.db).delete(labelId);
    },
  };
}

export type LabelsService = ReturnType<typeof createLabelsService>;
