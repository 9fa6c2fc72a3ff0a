/**
 * How tracker outcomes become the service's errors, so that every caller maps them alike.
 */
import { AppError } from '../../errors.ts';
import type { ProviderOutcome, TrackerProvider } from './tracker.types.ts';
import type { SiteResolution } from './tracker-b.ts';

/** Any outcome other than `ok`. */
export type FailedOutcome =
  | Exclude<ProviderOutcome<unknown>, { kind: 'ok' }>
  | Exclude<SiteResolution, { kind: 'ok' } | ProviderOutcome<unknown>>;

/**
 * The AppError for a failed outcome: not found → `TICKET_NOT_FOUND`; a key on several sites →
 * `AMBIGUOUS_TICKET`; a site not connected → `INTEGRATION_NOT_CONNECTED`; provider refusals and
 * ambiguous writes → `PROVIDER_ERROR` (502), with `ambiguous: true` when the write may have happened.
 */
export function toTrackerAppError(provider: TrackerProvider, outcome: FailedOutcome): AppError {
  switch (outcome.kind) {
    case 'not_found':
      return new AppError('TICKET_NOT_FOUND');
    case 'ambiguous_key':
      return new AppError('AMBIGUOUS_TICKET', {
        message: outcome.message,
        details: { sites: [...outcome.siteUrls] },
      });
    case 'not_connected':
      return new AppError('INTEGRATION_NOT_CONNECTED', { message: outcome.message });
    case 'ambiguous':
      return new AppError('PROVIDER_ERROR', {
        message: `${outcome.message}. Inspect the linked tickets and the tracker before retrying.`,
        details: { provider, ambiguous: true },
      });
    case 'error':
      return new AppError('PROVIDER_ERROR', {
        message: outcome.message,
        details: {
          provider,
          reason: outcome.reason,
          ...(outcome.status !== undefined ? { providerStatus: outcome.status } : {}),
        },
        ...(outcome.retryAfterSeconds !== undefined
          ? { headers: { 'Retry-After': String(Math.max(1, outcome.retryAfterSeconds)) } }
          : {}),
      });
  }
}
