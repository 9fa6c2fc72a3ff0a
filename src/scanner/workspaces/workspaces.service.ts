import type { ServiceActor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { type WorkspaceListRow, workspacesRepo } from '../../organization/workspaces/workspaces.repo.ts';
import { getWorkspace, type Workspace } from '../../organization/workspaces/workspaces.service.ts';
import { type CursorCodec, hashFilters, timeAndIdAfter } from '../../platform/pagination/cursor.ts';
import type { ListWorkspacesQuery, ScannerWorkspace, ScannerWorkspaceList } from './workspaces.schemas.ts';

function toScannerWorkspace(w: Workspace | WorkspaceListRow): ScannerWorkspace {
  return {
    id: w.id,
    name: w.name,
    prefix: w.prefix,
    repository: w.repository,
    active: w.active,
    createdAt: w.createdAt.toISOString(),
  };
}

/** What callers of the scanner API read of the organization's workspaces (extension, ADR 0018). */
export function createScannerWorkspacesService(deps: {
  database: Database;
  cursors: Pick<CursorCodec, 'decode' | 'pageOf'>;
}) {
  const { database, cursors } = deps;
  return {
    /** listWorkspaces: the organization's workspaces (unlinked ones too), newest first, in pages of (created_at, id). */
    async listWorkspaces(actor: ServiceActor, query: ListWorkspacesQuery): Promise<ScannerWorkspaceList> {
      const limit = query.limit ?? 20;
      const filterHash = hashFilters({ list: 'workspaces' });
      const after = timeAndIdAfter(cursors, query.next, filterHash);
      const rows = await workspacesRepo(database.db).listForCompany(actor.organizationId, {
        ...(after ? { after } : {}),
        limit,
      });
      const page = cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(query.next !== undefined ? { given: query.next } : {}),
        keyOf: (r) => [r.createdAtKey, r.id],
      });
      return { workspaces: page.items.map(toScannerWorkspace), nextValue: page.nextValue };
    },

    /** getWorkspace: one workspace of the organization; NOT_FOUND for another organization's or none. */
    async getWorkspace(actor: ServiceActor, workspaceId: string): Promise<ScannerWorkspace> {
      return toScannerWorkspace(await getWorkspace(database.db, actor.organizationId, workspaceId));
    },
  };
}

export type ScannerWorkspacesService = ReturnType<typeof createScannerWorkspacesService>;
