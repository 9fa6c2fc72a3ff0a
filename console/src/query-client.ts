import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api.ts';

/** The console's one query cache: the router's loaders prefetch into it and the pages read it. */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      refetchOnWindowFocus: false,
      // A client error will not change by asking again; network and 5xx errors get one retry.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 1,
    },
  },
});
