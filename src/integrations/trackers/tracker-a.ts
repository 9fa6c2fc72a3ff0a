/**
 * The tracker_a adapter: Linear-style GraphQL over one endpoint. A personal API key travels raw
 * in `Authorization`; an OAuth token as `Bearer`.
 *
 * Answers are classified by their body, not their HTTP status: the provider reports "not found"
 * as a GraphQL error (with `data: null`), and a rate limit as HTTP 400 with
 * `extensions.code: "RATELIMITED"`. Issues are created with an id chosen by the caller, so an
 * ambiguous create is reconciled by reading that id, and an id conflict means "it exists".
 */
import { mapSeverityToPriority, renderTicketContent } from './ticket-content.ts';
import type {
  CreateIssueInput,
  FindCreatedInput,
  ParsedIssueRef,
  ProviderError,
  ProviderOutcome,
  TrackerAdapter,
  TrackerIssue,
} from './tracker.types.ts';
import {
  classifyLostCreate,
  classifyNoAnswer,
  isRecord,
  readString,
  sanitizeProviderText,
  sendTrackerRequest,
  type TrackerAnswer,
  type TrackerExchange,
  type TrackerHttpOptions,
} from './tracker-http.ts';

/** How the adapter authenticates to the workspace. */
export type TrackerAAuth =
  | { readonly type: 'api_key'; readonly apiKey: string }
  | { readonly type: 'oauth'; readonly accessToken: string };

/** One connected tracker_a workspace. */
export interface TrackerAConfig {
  /** The GraphQL endpoint (default `https://api.linear.app/graphql`). */
  readonly apiUrl?: string;
  readonly auth: TrackerAAuth;
}

/** The tracker_a adapter of one workspace. */
export interface TrackerAAdapter extends TrackerAdapter {
  readonly provider: 'tracker_a';
  /** The workspace's `urlKey`, which issue URLs carry as their first path segment. */
  fetchWorkspaceUrlKey(): Promise<ProviderOutcome<string>>;
}

const DEFAULT_API_URL = 'https://api.linear.app/graphql';

const ISSUE_QUERY =
  'query Issue($id: String!) { issue(id: $id) { id identifier url title archivedAt state { name type } team { key } } }';
const ISSUE_CREATE_MUTATION =
  'mutation IssueCreate($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { id identifier url title } } }';
const ORGANIZATION_QUERY = 'query Organization { organization { urlKey } }';

/** One GraphQL error, reduced to what classification needs. */
interface GraphqlError {
  readonly message: string;
  readonly code: string | undefined;
  readonly type: string | undefined;
}

function readGraphqlErrors(json: unknown): GraphqlError[] {
  if (!isRecord(json) || !Array.isArray(json.errors)) return [];
  return json.errors.filter(isRecord).map((e) => ({
    message: typeof e.message === 'string' ? e.message : '',
    code: readString(e.extensions, 'code'),
    type: readString(e.extensions, 'type'),
  }));
}

function isRateLimited(answer: TrackerAnswer): boolean {
  if (answer.status === 429) return true;
  // The provider answers a rate limit with HTTP 400: only the body tells it apart.
  return readGraphqlErrors(answer.json).some((e) => e.code === 'RATELIMITED' || e.type === 'ratelimited');
}

/** What a GraphQL answer means before the operation-specific reading of `data`. */
type GraphqlReading =
  | { readonly kind: 'data'; readonly data: Record<string, unknown> }
  | { readonly kind: 'not_found' }
  /** 5xx or an internal server error: nothing is known about a write. */
  | { readonly kind: 'server_error'; readonly error: ProviderError }
  | { readonly kind: 'error'; readonly error: ProviderError; readonly conflict: boolean };

function isNotFound(error: GraphqlError): boolean {
  return /^Entity not found/i.test(error.message);
}

function isConflict(error: GraphqlError): boolean {
  return error.code === 'CONFLICT' || /already exists|conflict|duplicate/i.test(error.message);
}

function readGraphqlAnswer(
  answer: TrackerAnswer,
  secrets: readonly string[],
  action: string,
): GraphqlReading {
  const errors = readGraphqlErrors(answer.json);
  const detail = sanitizeProviderText(errors.map((e) => e.message).join('; '), secrets);
  const suffix = detail.length > 0 ? `HTTP ${answer.status}: ${detail}` : `HTTP ${answer.status}`;
  const fail = (reason: ProviderError['reason'], message: string, retryable: boolean): ProviderError => ({
    kind: 'error',
    reason,
    status: answer.status,
    message: `${message} (${suffix})`,
    retryable,
  });
  if (errors.length === 0) {
    const data = isRecord(answer.json) ? answer.json.data : undefined;
    if (answer.status >= 200 && answer.status < 300 && isRecord(data)) return { kind: 'data', data };
    if (answer.status === 401) {
      return {
        kind: 'error',
        error: fail('auth', 'tracker_a refused the credentials', false),
        conflict: false,
      };
    }
    if (answer.status >= 500) {
      return { kind: 'server_error', error: fail('unavailable', `tracker_a failed to ${action}`, true) };
    }
    return {
      kind: 'error',
      error: fail('protocol', `tracker_a gave an unreadable answer to ${action}`, false),
      conflict: false,
    };
  }
  if (errors.some((e) => e.code === 'AUTHENTICATION_ERROR' || e.type === 'authentication error')) {
    return {
      kind: 'error',
      error: fail('auth', 'tracker_a refused the credentials', false),
      conflict: false,
    };
  }
  if (errors.some((e) => e.code === 'FORBIDDEN' || e.type === 'forbidden')) {
    return {
      kind: 'error',
      error: fail('forbidden', `tracker_a denied permission to ${action}`, false),
      conflict: false,
    };
  }
  if (errors.every(isNotFound)) return { kind: 'not_found' };
  if (
    answer.status >= 500 ||
    errors.some((e) => e.code === 'INTERNAL_SERVER_ERROR' || e.type === 'internal error')
  ) {
    return { kind: 'server_error', error: fail('unavailable', `tracker_a failed to ${action}`, true) };
  }
  return {
    kind: 'error',
    error: fail('rejected', `tracker_a rejected the request to ${action}`, false),
    conflict: errors.some(isConflict),
  };
}

function toIssue(value: unknown): TrackerIssue | null {
  const id = readString(value, 'id');
  const identifier = readString(value, 'identifier');
  const url = readString(value, 'url');
  if (id === undefined || identifier === undefined || url === undefined) return null;
  const state = isRecord(value) ? value.state : undefined;
  return {
    externalId: id,
    key: identifier,
    url,
    title: readString(value, 'title') ?? '',
    status: readString(state, 'name') ?? null,
  };
}

function protocolError(message: string): ProviderError {
  return { kind: 'error', reason: 'protocol', message, retryable: false };
}

/** Creates the adapter of one tracker_a workspace. */
export function createTrackerAAdapter(
  config: TrackerAConfig,
  options: TrackerHttpOptions = {},
): TrackerAAdapter {
  const apiUrl = config.apiUrl ?? DEFAULT_API_URL;
  // Personal API keys are sent as they are; only OAuth tokens take the Bearer scheme.
  const authorization =
    config.auth.type === 'api_key' ? config.auth.apiKey : `Bearer ${config.auth.accessToken}`;
  const secrets = [config.auth.type === 'api_key' ? config.auth.apiKey : config.auth.accessToken];

  const send = (query: string, variables: Record<string, unknown>): Promise<TrackerExchange> =>
    sendTrackerRequest(
      { method: 'POST', url: apiUrl, headers: { authorization }, body: { query, variables } },
      options,
      isRateLimited,
    );

  const readIssue = async (id: string): Promise<ProviderOutcome<TrackerIssue>> => {
    const exchange = await send(ISSUE_QUERY, { id });
    if (exchange.kind !== 'answer') return classifyNoAnswer('tracker_a', exchange, 'read the issue');
    const reading = readGraphqlAnswer(exchange, secrets, 'read the issue');
    if (reading.kind === 'not_found') return { kind: 'not_found' };
    if (reading.kind !== 'data') return reading.error;
    if (reading.data.issue === null) return { kind: 'not_found' };
    const issue = toIssue(reading.data.issue);
    return issue
      ? { kind: 'ok', value: issue }
      : protocolError('tracker_a returned an issue without id, identifier or url');
  };

  const verifyIssue = async (ref: ParsedIssueRef): Promise<ProviderOutcome<TrackerIssue>> => {
    if (ref.provider !== 'tracker_a') {
      return {
        kind: 'error',
        reason: 'misconfigured',
        message: 'A tracker_b reference was given to tracker_a.',
        retryable: false,
      };
    }
    // issue(id:) takes the UUID or the exact identifier; a fuzzy search could return ENG-1234 for ENG-123.
    return readIssue(ref.lookup);
  };

  /**
   * After a create that did not plainly succeed: the id is ours, so an issue with it is the one
   * this create (or an earlier attempt) made.
   */
  const settleByLookup = async (
    clientId: string,
    otherwise: ProviderOutcome<TrackerIssue>,
    ambiguousIfUnknown: boolean,
  ): Promise<ProviderOutcome<TrackerIssue>> => {
    const existing = await readIssue(clientId);
    if (existing.kind === 'ok') return existing;
    if (existing.kind === 'error' && ambiguousIfUnknown) {
      return {
        kind: 'ambiguous',
        message: `${describe(otherwise)}; the issue could not be read back: ${existing.message}`,
      };
    }
    return otherwise;
  };

  const createIssue = async (input: CreateIssueInput): Promise<ProviderOutcome<TrackerIssue>> => {
    const { destination, finding, clientId } = input;
    if (destination.provider !== 'tracker_a') {
      return {
        kind: 'error',
        reason: 'misconfigured',
        message: 'A tracker_b destination was given to tracker_a.',
        retryable: false,
      };
    }
    const content = renderTicketContent(finding);
    const exchange = await send(ISSUE_CREATE_MUTATION, {
      input: {
        id: clientId,
        teamId: destination.teamId,
        title: content.title,
        description: content.markdown,
        priority: destination.priority ?? mapSeverityToPriority(finding.severity),
        ...(destination.labelIds && destination.labelIds.length > 0
          ? { labelIds: destination.labelIds }
          : {}),
      },
    });
    if (exchange.kind !== 'answer') return classifyLostCreate('tracker_a', exchange);
    const reading = readGraphqlAnswer(exchange, secrets, 'create the issue');
    if (reading.kind === 'server_error') {
      return { kind: 'ambiguous', message: `${reading.error.message}; the issue may exist` };
    }
    if (reading.kind === 'not_found') {
      // A referenced entity (team, label) is missing: the issue was not created.
      return {
        kind: 'error',
        reason: 'rejected',
        status: exchange.status,
        message: 'tracker_a could not find the team or a label of the destination',
        retryable: false,
      };
    }
    if (reading.kind === 'error') {
      if (reading.error.reason === 'auth' || reading.error.reason === 'forbidden') return reading.error;
      // A reused id is reported as a conflict: the earlier attempt created the issue.
      return settleByLookup(clientId, reading.error, reading.conflict);
    }
    const payload = reading.data.issueCreate;
    if (!isRecord(payload))
      return { kind: 'ambiguous', message: 'tracker_a answered the create without issueCreate' };
    const issue = payload.issue === null || payload.issue === undefined ? null : toIssue(payload.issue);
    if (payload.success === true && issue) return { kind: 'ok', value: issue };
    if (payload.success === true) {
      return settleByLookup(
        clientId,
        { kind: 'ambiguous', message: 'tracker_a reported success without the issue' },
        true,
      );
    }
    return settleByLookup(
      clientId,
      {
        kind: 'error',
        reason: 'rejected',
        status: exchange.status,
        message: 'tracker_a reported success:false for the create',
        retryable: false,
      },
      false,
    );
  };

  const findCreated = async (input: FindCreatedInput): Promise<ProviderOutcome<TrackerIssue>> => {
    if (input.destination.provider !== 'tracker_a') {
      return {
        kind: 'error',
        reason: 'misconfigured',
        message: 'A tracker_b destination was given to tracker_a.',
        retryable: false,
      };
    }
    return readIssue(input.clientId);
  };

  const fetchWorkspaceUrlKey = async (): Promise<ProviderOutcome<string>> => {
    const exchange = await send(ORGANIZATION_QUERY, {});
    if (exchange.kind !== 'answer') return classifyNoAnswer('tracker_a', exchange, 'read the workspace');
    const reading = readGraphqlAnswer(exchange, secrets, 'read the workspace');
    if (reading.kind === 'not_found') return { kind: 'not_found' };
    if (reading.kind !== 'data') return reading.error;
    const urlKey = readString(reading.data.organization, 'urlKey');
    return urlKey
      ? { kind: 'ok', value: urlKey }
      : protocolError('tracker_a returned no organization urlKey');
  };

  return { provider: 'tracker_a', verifyIssue, createIssue, findCreated, fetchWorkspaceUrlKey };
}

function describe(outcome: ProviderOutcome<TrackerIssue>): string {
  return outcome.kind === 'error' || outcome.kind === 'ambiguous' ? outcome.message : outcome.kind;
}
