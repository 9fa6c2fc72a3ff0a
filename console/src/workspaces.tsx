import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { components } from '../../src/sdk/schema';
import { api, unwrap } from './api.ts';

export type Workspace = components['schemas']['ScannerWorkspace'];

/** Pages of the workspace listing read for names; past them, a workspace is read by its id. */
const LISTED_PAGES = 10;

/** The company's workspaces by id (the newest 1,000), read once per company and kept a minute. */
export function useWorkspaces(companyId: string) {
  return useQuery({
    queryKey: ['workspaces', companyId],
    staleTime: 60_000,
    queryFn: async () => {
      const byId = new Map<string, Workspace>();
      let next: string | undefined;
      for (let page = 0; page < LISTED_PAGES; page++) {
        const res = await unwrap(
          api.GET('/api/scanner/v1/workspaces', { params: { query: { limit: 100, next } } }),
        );
        for (const w of res.workspaces) byId.set(w.id, w);
        if (!res.nextValue) break;
        next = res.nextValue;
      }
      return byId;
    },
  });
}

/** One workspace: from the company's listing, or read by id when the listing does not hold it. */
export function useWorkspace(companyId: string, workspaceId: string) {
  const listed = useWorkspaces(companyId);
  const fromList = listed.data?.get(workspaceId);
  const single = useQuery({
    queryKey: ['workspace', companyId, workspaceId],
    enabled: Boolean(listed.data) && !fromList,
    staleTime: 60_000,
    queryFn: () =>
      unwrap(api.GET('/api/scanner/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } } })),
  });
  return { workspace: fromList ?? single.data, error: listed.error ?? single.error };
}

/** A workspace's name (and its prefix when the name does not show it); the id in the tooltip. */
export function WorkspaceName({ companyId, workspaceId }: { companyId: string; workspaceId: string }) {
  const { workspace } = useWorkspace(companyId, workspaceId);
  if (!workspace)
    return (
      <code className="small" title={`Workspace ${workspaceId}`}>
        {workspaceId.slice(0, 8)}
      </code>
    );
  const showPrefix = workspace.prefix !== '' && !workspace.name.endsWith(workspace.prefix);
  return (
    <span title={`Workspace ${workspace.id}`} data-workspace-id={workspace.id}>
      {workspace.name}
      {showPrefix && <span className="muted small"> · {workspace.prefix}/</span>}
      {!workspace.active && <span className="muted small"> (unlinked)</span>}
    </span>
  );
}

/** A workspace's name with a link to its overview (drafts by severity across its scans). */
export function WorkspaceWithOverview({
  companyId,
  workspaceId,
}: {
  companyId: string;
  workspaceId: string;
}) {
  return (
    <>
      <WorkspaceName companyId={companyId} workspaceId={workspaceId} />{' '}
      <Link
        to="/companies/$companyId/workspaces/$workspaceId"
        params={{ companyId, workspaceId }}
        className="small"
      >
        Overview
      </Link>
    </>
  );
}
