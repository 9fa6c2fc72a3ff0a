import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, unwrap } from './api.ts';

export const UNREAD_NOTIFICATIONS_KEY = ['notifications-unread'];

/** The largest page the listing gives: beyond it the badge shows "100+". */
const MAX_COUNTED = 100;

/** The navigation's link to the notifications, with the number of unread ones. */
export function NotificationsLink() {
  const unread = useQuery({
    queryKey: UNREAD_NOTIFICATIONS_KEY,
    queryFn: async () => {
      const page = await unwrap(
        api.GET('/api/v0/notifications', { params: { query: { unread: true, limit: MAX_COUNTED } } }),
      );
      return { count: page.notifications.length, more: page.nextValue !== null };
    },
    refetchInterval: 60_000,
  });
  const count = unread.data?.count ?? 0;
  const label = unread.data?.more ? `${MAX_COUNTED}+` : String(count);
  return (
    <Link to="/notifications">
      Notifications
      {count > 0 && (
        <>
          <span className="badge" data-testid="unread-notifications" aria-hidden="true">
            {label}
          </span>
          <span className="sr-only">, {label} unread</span>
        </>
      )}
    </Link>
  );
}
