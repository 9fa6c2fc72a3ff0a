/**
 * The tracker_b adapter: Jira Cloud REST v3, one instance per connected site. Basic
 * `email:api_token` against the site itself, or a Bearer OAuth token against the gateway
 * (`https://api.atlassian.com/ex/jira/{cloudId}`); browse links always use the site URL.
 *
 * Every answer is classified (see `ProviderOutcome`): a 404 on an issue read is only "not found"
 * once `/myself` confirms the credentials work, because the endpoint answers anonymous reads
 * with the same 404; a lost or failed create is ambiguous and is reconciled by searching the
 * deterministic finding label, polled because the search index lags writes.
 */
import { buildFindingLabel, renderTicketContent } from './ticket-content.ts';
import type {
  CreateIssueInput,
  FindCreatedInput,
  ParsedIssueRef,
  ProviderError,
  ProviderOutcome,
  TrackerAdapter,
  TrackerBIssueRef,
  TrackerIssue,
} from './tracker.types.ts';
import {
  classifyLostCreate,
  classifyNoAnswer,
  computeBackoffMs,
  isRecord,
  readString,
  sanitizeProviderText,
  sendTrackerRequest,
  type TrackerAnswer,
  type TrackerExchange,
  type TrackerHttpOptions,
  type TrackerRequest,
} from './tracker-http.ts';

/** How the adapter authenticates to one site. */
export type TrackerBAuth =
  | { readonly type: 'basic'; readonly email: string; readonly apiToken: string }
  | { readonly type: 'bearer'; readonly accessToken: string };

/** One connected tracker_b site. */
export interface TrackerBSiteConfig {
  /** The site as users browse it (`https://acme.atlassian.net`): issue URLs and URL matching. */
  readonly siteUrl: string;
  /** Where the REST API is called; the site itself by default, the gateway URL for OAuth. */
  readonly apiBaseUrl?: string;
  readonly auth: TrackerBAuth;
}

/** Options of the tracker_b adapter. */
export interface TrackerBOptions extends TrackerHttpOptions {
  /** How long (sum of waits) `findCreated` keeps polling the search index (default 120 000 ms). */
  readonly reconcileWindowMs?: number;
  /** First wait between searches (default 1 000 ms); doubles up to `reconcilePollMaxMs`. */
  readonly reconcilePollInitialMs?: number;
  /** Largest wait between searches (default 15 000 ms). */
  readonly reconcilePollMaxMs?: number;
}

/** The tracker_b adapter of one site. */
export interface TrackerBAdapter extends TrackerAdapter {
  readonly provider: 'tracker_b';
  /** The normalized site URL (no trailing slash). */
  readonly siteUrl: string;
  /** Checks the credentials with `GET /rest/api/3/myself`. */
  checkCredentials(): Promise<ProviderOutcome<{ accountId: string; displayName: string | null }>>;
}

const VERIFY_FIELDS = 'summary,status,issuetype,project,labels';

/** A URL without its trailing slashes, so that configured and parsed site URLs compare equal. */
export function normalizeSiteUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

function isRateLimited(answer: TrackerAnswer): boolean {
  return answer.status === 429;
}

/** The provider's own words from a `{errorMessages, errors}` body, or the status line. */
function describeAnswer(answer: TrackerAnswer, secrets: readonly string[]): string {
  const parts: string[] = [];
  if (isRecord(answer.json)) {
    const messages = answer.json.errorMessages;
    if (Array.isArray(messages)) parts.push(...messages.filter((m): m is string => typeof m === 'string'));
    const errors = answer.json.errors;
    if (isRecord(errors)) {
      for (const [field, message] of Object.entries(errors)) {
        if (typeof message === 'string') parts.push(`${field}: ${message}`);
      }
    }
  }
  // Error pages in front of the API (401s among them) are HTML: their text is the message.
  if (answer.json === undefined && answer.text.length > 0) parts.push(answer.text);
  const detail = sanitizeProviderText(parts.join('; '), secrets);
  return detail.length > 0 ? `HTTP ${answer.status}: ${detail}` : `HTTP ${answer.status}`;
}

/** The definitive error for a non-2xx answer (404 included, when the caller did not handle it). */
function classifyFailure(answer: TrackerAnswer, secrets: readonly string[], action: string): ProviderError {
  const detail = describeAnswer(answer, secrets);
  if (answer.status === 401) {
    return {
      kind: 'error',
      reason: 'auth',
      status: 401,
      message: `tracker_b refused the credentials (${detail})`,
      retryable: false,
    };
  }
  if (answer.status === 403) {
    return {
      kind: 'error',
      reason: 'forbidden',
      status: 403,
      message: `tracker_b denied permission to ${action} (${detail})`,
      retryable: false,
    };
  }
  if (answer.status >= 300 && answer.status < 400) {
    const location = answer.headers.get('location');
    return {
      kind: 'error',
      reason: 'misconfigured',
      status: answer.status,
      message: `tracker_b redirected the request to ${action}${location ? ` to ${sanitizeProviderText(location, secrets)}` : ''}; check the site URL`,
      retryable: false,
    };
  }
  if (answer.status >= 500) {
    return {
      kind: 'error',
      reason: 'unavailable',
      status: answer.status,
      message: `tracker_b failed to ${action} (${detail})`,
      retryable: true,
    };
  }
  return {
    kind: 'error',
    reason: 'rejected',
    status: answer.status,
    message: `tracker_b rejected the request to ${action} (${detail})`,
    retryable: false,
  };
}

function misconfigured(message: string): ProviderError {
  return { kind: 'error', reason: 'misconfigured', message, retryable: false };
}

/** Creates the adapter of one tracker_b site. */
export function createTrackerBAdapter(
  config: TrackerBSiteConfig,
  options: TrackerBOptions = {},
): TrackerBAdapter {
  const siteUrl = normalizeSiteUrl(config.siteUrl);
  const apiBaseUrl = normalizeSiteUrl(config.apiBaseUrl ?? config.siteUrl);
  const authorization =
    config.auth.type === 'basic'
      ? `Basic ${Buffer.from(`${config.auth.email}:${config.auth.apiToken}`).toString('base64')}`
      : `Bearer ${config.auth.accessToken}`;
  // Everything that could leak a credential if a provider echoed it back into an error body.
  const secrets =
    config.auth.type === 'basic'
      ? [config.auth.apiToken, authorization.slice('Basic '.length)]
      : [config.auth.accessToken];

  const send = (method: TrackerRequest['method'], path: string, body?: unknown): Promise<TrackerExchange> =>
    sendTrackerRequest(
      {
        method,
        url: `${apiBaseUrl}${path}`,
        headers: { authorization },
        ...(body !== undefined ? { body } : {}),
      },
      options,
      isRateLimited,
    );

  const toIssue = (json: unknown): TrackerIssue | null => {
    const id = readString(json, 'id');
    const key = readString(json, 'key');
    if (id === undefined || key === undefined) return null;
    const fields = isRecord(json) ? json.fields : undefined;
    const status = isRecord(fields) ? readString(fields.status, 'name') : undefined;
    return {
      externalId: id,
      key,
      // The browse URL is built from the site, never from `self` (which may be the gateway).
      url: `${siteUrl}/browse/${encodeURIComponent(key)}`,
      title: readString(fields, 'summary') ?? '',
      status: status ?? null,
    };
  };

  const checkCredentials: TrackerBAdapter['checkCredentials'] = async () => {
    const exchange = await send('GET', '/rest/api/3/myself');
    if (exchange.kind !== 'answer') return classifyNoAnswer('tracker_b', exchange, 'check the credentials');
    if (exchange.status !== 200) {
      if (exchange.status === 404) {
        return {
          kind: 'error',
          reason: 'auth',
          status: 404,
          message: 'tracker_b did not recognise the credentials (HTTP 404 on /myself)',
          retryable: false,
        };
      }
      return classifyFailure(exchange, secrets, 'check the credentials');
    }
    const accountId = readString(exchange.json, 'accountId');
    if (accountId === undefined) {
      return {
        kind: 'error',
        reason: 'protocol',
        status: 200,
        message: 'tracker_b /myself has no accountId',
        retryable: false,
      };
    }
    return {
      kind: 'ok',
      value: { accountId, displayName: readString(exchange.json, 'displayName') ?? null },
    };
  };

  const verifyIssue = async (ref: ParsedIssueRef): Promise<ProviderOutcome<TrackerIssue>> => {
    if (ref.provider !== 'tracker_b') return misconfigured('A tracker_a reference was given to tracker_b.');
    if (ref.siteUrl !== null && normalizeSiteUrl(ref.siteUrl) !== siteUrl) {
      return misconfigured('The issue reference names another tracker_b site.');
    }
    // updateHistory stays unset: verifying must not add the issue to the user's history.
    const exchange = await send(
      'GET',
      `/rest/api/3/issue/${encodeURIComponent(ref.key)}?fields=${VERIFY_FIELDS}`,
    );
    if (exchange.kind !== 'answer') return classifyNoAnswer('tracker_b', exchange, 'read the issue');
    if (exchange.status === 200) {
      const issue = toIssue(exchange.json);
      if (!issue) {
        return {
          kind: 'error',
          reason: 'protocol',
          status: 200,
          message: 'tracker_b returned an issue without id or key',
          retryable: false,
        };
      }
      return { kind: 'ok', value: issue };
    }
    if (exchange.status === 404) {
      // Anonymous reads get the same 404 as a missing issue: only working credentials make it "not found".
      const credentials = await checkCredentials();
      if (credentials.kind === 'ok') return { kind: 'not_found' };
      if (credentials.kind === 'error') return credentials;
      return {
        kind: 'error',
        reason: 'protocol',
        status: 404,
        message: 'tracker_b answered 404 and /myself could not confirm the credentials',
        retryable: false,
      };
    }
    return classifyFailure(exchange, secrets, 'read the issue');
  };

  const createIssue = async (input: CreateIssueInput): Promise<ProviderOutcome<TrackerIssue>> => {
    const { destination, finding } = input;
    if (destination.provider !== 'tracker_b')
      return misconfigured('A tracker_a destination was given to tracker_b.');
    if (normalizeSiteUrl(destination.siteUrl) !== siteUrl) {
      return misconfigured('The destination is on another tracker_b site.');
    }
    const content = renderTicketContent(finding);
    const exchange = await send('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: destination.projectKey },
        issuetype: { name: destination.issueType ?? 'Bug' },
        summary: content.title,
        description: content.adf,
        labels: ['security', buildFindingLabel(finding.id)],
      },
    });
    if (exchange.kind !== 'answer') return classifyLostCreate('tracker_b', exchange);
    if (exchange.status >= 200 && exchange.status < 300) {
      const id = readString(exchange.json, 'id');
      const key = readString(exchange.json, 'key');
      if (id === undefined || key === undefined) {
        return {
          kind: 'ambiguous',
          message: `tracker_b accepted the create (HTTP ${exchange.status}) but returned no key`,
        };
      }
      return {
        kind: 'ok',
        value: {
          externalId: id,
          key,
          url: `${siteUrl}/browse/${encodeURIComponent(key)}`,
          title: content.title,
          status: null,
        },
      };
    }
    if (exchange.status >= 500) {
      return {
        kind: 'ambiguous',
        message: `tracker_b failed during the create (${describeAnswer(exchange, secrets)}); the issue may exist`,
      };
    }
    return classifyFailure(exchange, secrets, 'create the issue');
  };

  const searchByLabel = async (
    projectKey: string,
    label: string,
  ): Promise<ProviderOutcome<TrackerIssue | null>> => {
    const jql = `project = "${projectKey.replace(/["\\]/g, '')}" AND labels = "${label}" ORDER BY created ASC`;
    const exchange = await send('POST', '/rest/api/3/search/jql', {
      jql,
      fields: ['summary', 'status'],
      maxResults: 50,
    });
    if (exchange.kind !== 'answer') return classifyNoAnswer('tracker_b', exchange, 'search for the issue');
    if (exchange.status !== 200) return classifyFailure(exchange, secrets, 'search for the issue');
    const issues = isRecord(exchange.json) ? exchange.json.issues : undefined;
    if (!Array.isArray(issues)) {
      return {
        kind: 'error',
        reason: 'protocol',
        status: 200,
        message: 'tracker_b search returned no issues list',
        retryable: false,
      };
    }
    const found = issues.map(toIssue).filter((i): i is TrackerIssue => i !== null);
    // Two issues with one finding's label mean an earlier duplicate: the oldest is the one to link.
    found.sort((a, b) => Number(a.externalId) - Number(b.externalId));
    return { kind: 'ok', value: found[0] ?? null };
  };

  const findCreated = async (input: FindCreatedInput): Promise<ProviderOutcome<TrackerIssue>> => {
    const { destination } = input;
    if (destination.provider !== 'tracker_b')
      return misconfigured('A tracker_a destination was given to tracker_b.');
    if (normalizeSiteUrl(destination.siteUrl) !== siteUrl) {
      return misconfigured('The destination is on another tracker_b site.');
    }
    const label = buildFindingLabel(input.findingId);
    const windowMs = options.reconcileWindowMs ?? 120_000;
    const initialMs = options.reconcilePollInitialMs ?? 1_000;
    const maxMs = options.reconcilePollMaxMs ?? 15_000;
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const random = options.random ?? Math.random;
    // The window counts waiting time, so the number of searches is bounded whatever the latency.
    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      const result = await searchByLabel(destination.projectKey, label);
      if (result.kind === 'ok' && result.value !== null) return { kind: 'ok', value: result.value };
      if (result.kind === 'error' && !result.retryable) return result;
      const wait = computeBackoffMs(attempt, initialMs, maxMs, random);
      if (waited + wait > windowMs) {
        // Only a search that worked can say the issue is absent; a failed one leaves it unknown.
        return result.kind === 'ok' ? { kind: 'not_found' } : result;
      }
      await sleep(wait);
      waited += wait;
    }
  };

  return { provider: 'tracker_b', siteUrl, verifyIssue, createIssue, findCreated, checkCredentials };
}

/** Where a tracker_b reference was found across the connected sites. */
export type SiteResolution =
  | { readonly kind: 'ok'; readonly value: TrackerIssue; readonly siteUrl: string }
  | { readonly kind: 'not_found' }
  /** The bare key exists on several sites: the user must give the full issue URL. */
  | { readonly kind: 'ambiguous_key'; readonly siteUrls: readonly string[]; readonly message: string }
  /** The URL's site, or any site at all, is not connected. */
  | { readonly kind: 'not_connected'; readonly message: string }
  | ProviderError;

/**
 * Verifies a tracker_b reference against the company's sites. A URL reference asks its own site
 * only. A bare key asks every site: none has it → not found; one → that one; several → ambiguous.
 * A site that cannot be asked makes the answer an error (it might hold the key too): the full
 * issue URL then still works.
 */
export async function resolveTrackerBIssue(
  ref: TrackerBIssueRef,
  adapters: readonly TrackerBAdapter[],
): Promise<SiteResolution> {
  if (adapters.length === 0) return { kind: 'not_connected', message: 'No tracker_b site is connected.' };
  if (ref.siteUrl !== null) {
    const site = normalizeSiteUrl(ref.siteUrl);
    const adapter = adapters.find((a) => a.siteUrl === site);
    if (!adapter) return { kind: 'not_connected', message: `The site ${site} is not connected.` };
    const outcome = await adapter.verifyIssue(ref);
    return outcome.kind === 'ok'
      ? { kind: 'ok', value: outcome.value, siteUrl: adapter.siteUrl }
      : toResolution(outcome);
  }
  const outcomes = await Promise.all(
    adapters.map(async (adapter) => ({ adapter, outcome: await adapter.verifyIssue(ref) })),
  );
  const found = outcomes.filter((o) => o.outcome.kind === 'ok');
  if (found.length > 1) {
    const siteUrls = found.map((o) => o.adapter.siteUrl);
    return {
      kind: 'ambiguous_key',
      siteUrls,
      message: `${ref.key} exists on ${siteUrls.length} connected sites (${siteUrls.join(', ')}); use the full issue URL.`,
    };
  }
  const failed = outcomes.find((o) => o.outcome.kind === 'error' || o.outcome.kind === 'ambiguous');
  if (failed) {
    const reason = failed.outcome.kind === 'error' ? failed.outcome : null;
    return {
      kind: 'error',
      reason: reason?.reason ?? 'unavailable',
      ...(reason?.status !== undefined ? { status: reason.status } : {}),
      message: `${ref.key} could not be checked on ${failed.adapter.siteUrl} (${reason?.message ?? 'no answer'}); use the full issue URL.`,
      retryable: reason?.retryable ?? true,
    };
  }
  const only = found[0];
  if (only && only.outcome.kind === 'ok')
    return { kind: 'ok', value: only.outcome.value, siteUrl: only.adapter.siteUrl };
  return { kind: 'not_found' };
}

function toResolution(outcome: Exclude<ProviderOutcome<TrackerIssue>, { kind: 'ok' }>): SiteResolution {
  if (outcome.kind === 'ambiguous') {
    return { kind: 'error', reason: 'unavailable', message: outcome.message, retryable: true };
  }
  return outcome;
}
