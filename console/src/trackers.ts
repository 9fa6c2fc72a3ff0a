import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './api.ts';

/** What people call each tracker provider (the API names them tracker_a and tracker_b). */
const TRACKER_NAMES: Record<string, string> = { tracker_a: 'Linear', tracker_b: 'Jira' };

/** The name shown for a tracker provider. */
export function trackerName(provider: string): string {
  return TRACKER_NAMES[provider] ?? provider;
}

/** The issue trackers connected to the company: ticket controls are offered only for these. */
export function useConnectedTrackers(companyId: string) {
  return useQuery({
    queryKey: ['trackers', companyId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/companies/{companyId}/trackers', { params: { path: { companyId } } })),
    staleTime: 60_000,
  });
}
