import { useMutation, useQueries, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';
import { repositoryRole, useSession } from '../session.tsx';
import { ErrorMessage } from '../ui.tsx';

/** A repository whose saved views the caller may list and save. */
export interface ViewRepository {
  id: string;
  name: string;
  companyId: string;
}

/**
 * The repositories the views panel offers: the caller's own repositories, and those of the
 * companies they belong to (a company manager is a member of no repository, yet sees them all).
 */
export function useViewRepositories(): ViewRepository[] {
  const session = useSession();
  const companies = session.companies.filter((c) => c.role);
  const lists = useQueries({
    queries: companies.map((c) => ({
      queryKey: ['repositories', c.id],
      queryFn: () =>
        unwrap(
          api.GET('/api/v0/companies/{company_id}/repositories', { params: { path: { company_id: c.id } } }),
        ),
      staleTime: 60_000,
    })),
  });
  const out = new Map<string, ViewRepository>();
  for (const r of session.repositories) out.set(r.id, { id: r.id, name: r.name, companyId: r.companyId });
  lists.forEach((list, i) => {
    for (const r of list.data?.items ?? []) {
      if (!out.has(r.id)) out.set(r.id, { id: r.id, name: r.name, companyId: companies[i]!.id });
    }
  });
  return [...out.values()];
}

/** Whether the caller may share views on the repository (the server's `repository.share_view`). */
export function useMayShareViews(repository: ViewRepository | undefined): boolean {
  const session = useSession();
  if (!repository) return false;
  const role = repositoryRole(session, repository.id, repository.companyId);
  return role === 'admin' || role === 'client';
}

/** Deletes a saved view: personal ones are the caller's; shared ones for those who may share. */
export function ViewActions({
  repositoryId,
  view,
  mayShare,
  onDeleted,
}: {
  repositoryId: string;
  view: { id: string; name: string; personal: boolean };
  mayShare: boolean;
  onDeleted: () => void;
}) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () =>
      unwrap(
        api.DELETE('/api/v0/repositories/{repo_id}/finding-views/{view_id}', {
          params: { path: { repo_id: repositoryId, view_id: view.id } },
        }),
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['views', repositoryId] });
      onDeleted();
    },
  });
  if (!view.personal && !mayShare) return null;
  return (
    <>
      <button
        type="button"
        onClick={() => remove.mutate()}
        disabled={remove.isPending}
        aria-label={`Delete view ${view.name}`}
      >
        Delete
      </button>
      {remove.error ? <ErrorMessage error={remove.error} /> : null}
    </>
  );
}
