import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, unwrap } from './api.ts';

export const UNREAD_NOTIFICATIONS_KEY = ['notifications-unread'];

/** The largest page the listing gives: beyond it the badge shows "100+". */
const MAX_COUNTED = 100;

/** The number of unread notifications as the badge shows it ("100+" beyond one page), or null. */
export function useUnreadNotifications(): string | null {
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
  if (!unread.data || unread.data.count === 0) return null;
  return unread.data.more ? `${MAX_COUNTED}+` : String(unread.data.count);
}

/** The navigation's link to the notifications, with the number of unread ones. */
export function NotificationsLink() {
  const label = useUnreadNotifications();
  return (
    <Link to="/notifications">
      Notifications
      {label && (
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
