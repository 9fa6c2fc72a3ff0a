import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import { UNREAD_NOTIFICATIONS_KEY } from '../notifications-badge.tsx';
import { ErrorMessage, formatDate } from '../ui.tsx';

type Notification =
  paths['/api/v0/notifications']['get']['responses'][200]['content']['application/json']['notifications'][number];

/** The payload of a `comment_ping` notification (the server's documented fields). */
interface PingPayload {
  findingNumber?: number;
  findingTitle?: string;
  repositoryId?: string;
  repositoryName?: string;
  authorUsername?: string | null;
  visibility?: string;
  excerpt?: string;
}

type Filter = 'all' | 'unread';

/** The caller's notifications, newest first: all or unread, mark one or all read, open the finding. */
export function NotificationsPage() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const [filter, setFilter] = useState<Filter>('all');
  const key = ['notifications', filter];
  const list = useInfiniteQuery({
    queryKey: key,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v0/notifications', {
          params: {
            query: {
              limit: 25,
              ...(filter === 'unread' ? { unread: true } : {}),
              ...(pageParam ? { next: pageParam } : {}),
            },
          },
        }),
      ),
    getNextPageParam: (page) => page.nextValue ?? undefined,
  });
  const changed = () =>
    Promise.all([
      client.invalidateQueries({ queryKey: ['notifications'] }),
      client.invalidateQueries({ queryKey: UNREAD_NOTIFICATIONS_KEY }),
    ]);
  const markOne = useMutation({
    mutationFn: (id: string) =>
      unwrap(
        api.PUT('/api/v0/notifications/{notification_id}/read', {
          params: { path: { notification_id: id } },
        }),
      ),
    onSuccess: changed,
  });
  const markAll = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/v0/notifications/read')),
    onSuccess: changed,
  });
  const open = async (n: Notification, p: PingPayload) => {
    if (!n.readAt) await markOne.mutateAsync(n.id);
    if (p.repositoryId && p.findingNumber !== undefined) {
      await navigate({
        to: '/repositories/$repoId/findings/$findingRef',
        params: { repoId: p.repositoryId, findingRef: String(p.findingNumber) },
      });
    }
  };
  const items = list.data?.pages.flatMap((p) => p.notifications) ?? [];
  return (
    <section aria-labelledby="notifications-h">
      <h1 id="notifications-h">Notifications</h1>
      <div className="button-row">
        <fieldset className="button-row plain" aria-label="Show">
          {(['all', 'unread'] as const).map((f) => (
            <button key={f} type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
              {f === 'all' ? 'All' : 'Unread'}
            </button>
          ))}
        </fieldset>
        <button type="button" onClick={() => markAll.mutate()} disabled={markAll.isPending}>
          Mark all read
        </button>
      </div>
      {markAll.error ? <ErrorMessage error={markAll.error} /> : null}
      {markOne.error ? <ErrorMessage error={markOne.error} /> : null}
      {list.error ? <ErrorMessage error={list.error} /> : null}
      {list.isPending ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : items.length === 0 ? (
        <p className="muted">{filter === 'unread' ? 'No unread notifications.' : 'No notifications yet.'}</p>
      ) : (
        <ul className="notifications">
          {items.map((n) => {
            const p = n.payload as PingPayload;
            return (
              <li key={n.id} className={n.readAt ? 'notification' : 'notification unread'}>
                <p>
                  {!n.readAt && <span className="badge unread-marker">unread</span>}{' '}
                  <strong>@{p.authorUsername ?? 'someone'}</strong> mentioned you on{' '}
                  <Link
                    to="/repositories/$repoId/findings/$findingRef"
                    params={{ repoId: p.repositoryId ?? '', findingRef: String(p.findingNumber ?? '') }}
                    onClick={(e) => {
                      e.preventDefault();
                      void open(n, p);
                    }}
                  >
                    #{p.findingNumber} {p.findingTitle}
                  </Link>{' '}
                  <span className="muted">
                    in {p.repositoryName} · {p.visibility} · {formatDate(n.createdAt)}
                  </span>
                </p>
                {p.excerpt && <blockquote className="excerpt">{p.excerpt}</blockquote>}
                {!n.readAt && (
                  <button type="button" onClick={() => markOne.mutate(n.id)} disabled={markOne.isPending}>
                    Mark read
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
