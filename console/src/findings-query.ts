import { infiniteQueryOptions } from '@tanstack/react-query';
import type { paths } from '../../src/sdk/schema';
import { api, unwrap } from './api.ts';
import type { FindingsSearch } from './router.tsx';

type ListQuery = NonNullable<paths['/api/v0/repositories/all-findings']['get']['parameters']['query']>;

const PAGE_SIZE = 50;

const bool = (v: string | undefined) => (v === 'true' ? true : v === 'false' ? false : undefined);

/** The all-findings query of the page's search parameters. */
export function toQuery(search: FindingsSearch): ListQuery {
  return {
    limit: PAGE_SIZE,
    order_by: search.order_by as ListQuery['order_by'],
    s: search.s,
    q: search.q,
    status: search.status,
    severity: search.severity,
    label: search.label,
    created_by: search.created_by,
    assigned_to: search.assigned_to,
    path: search.path,
    role: search.role as ListQuery['role'],
    filter_for: search.filter_for as ListQuery['filter_for'],
    repositories: search.repositories ? search.repositories.split(',') : undefined,
    with_unread_comments: bool(search.with_unread_comments),
    duplicates: bool(search.duplicates),
    unlabeled: bool(search.unlabeled),
  };
}

/**
 * The all-findings query of the findings page. The route's loader starts it while the page's code
 * and the session load, so that the first rows do not wait for them.
 */
export function findingsQuery(search: FindingsSearch) {
  const query = toQuery(search);
  return infiniteQueryOptions({
    queryKey: ['all-findings', query],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v0/repositories/all-findings', { params: { query: { ...query, next: pageParam } } }),
      ),
    getNextPageParam: (last) => last.nextValue || undefined,
  });
}
