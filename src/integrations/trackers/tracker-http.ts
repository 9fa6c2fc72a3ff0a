/**
 * The outbound HTTP step shared by the tracker adapters: one request with a timeout per attempt,
 * rate-limit retries (Retry-After honoured, exponential backoff with jitter when it is absent),
 * and a transport failure reported as such rather than thrown. What an answer means is decided
 * by each adapter; this module says whether there was an answer, and what no answer means (alike
 * for both trackers).
 */
import { isOutboundRefused, OUTBOUND_REFUSED_MESSAGE } from '../outbound/outbound-policy.ts';
import type { ProviderError, ProviderOutcome, TrackerProvider } from './tracker.types.ts';

/** Timing and retry options of the tracker HTTP clients. */
export interface TrackerHttpOptions {
  /** Time limit of one attempt, headers and body included (default 10 000 ms). */
  readonly timeoutMs?: number;
  /** How many times a rate-limited request is sent again (default 3). */
  readonly maxRateLimitRetries?: number;
  /** First backoff step when the provider gives no Retry-After (default 1 000 ms). */
  readonly backoffBaseMs?: number;
  /** Largest backoff step (default 30 000 ms). */
  readonly backoffMaxMs?: number;
  /**
   * The longest Retry-After honoured inline (default 60 000 ms); a longer one ends the call as
   * `rate_limited` with the provider's delay, so that a request never blocks for minutes.
   */
  readonly maxRetryAfterMs?: number;
  /** Waits between attempts; replaceable so that a caller can run the waits on its own clock. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the jitter (default Math.random). */
  readonly random?: () => number;
  /** The `fetch` requests go through: the outbound policy's in the service (default: Node's). */
  readonly fetch?: typeof globalThis.fetch;
}

/** A request to a tracker; the body is sent as JSON when present. */
export interface TrackerRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

/** A complete HTTP answer, body read as text and parsed as JSON when it is JSON. */
export interface TrackerAnswer {
  readonly kind: 'answer';
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body, or `undefined` when it is not JSON (an HTML error page, for example). */
  readonly json: unknown;
}

/** The result of sending a request with retries. */
export type TrackerExchange =
  | TrackerAnswer
  /** No complete answer: the attempt timed out, or the connection failed or was reset. */
  | { readonly kind: 'transport'; readonly timedOut: boolean; readonly message: string }
  /** Still rate limited after the bounded retries (or asked to wait longer than we will). */
  | { readonly kind: 'rate_limited'; readonly answer: TrackerAnswer; readonly retryAfterSeconds?: number };

const DEFAULTS = {
  timeoutMs: 10_000,
  maxRateLimitRetries: 3,
  backoffBaseMs: 1_000,
  backoffMaxMs: 30_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Reads a Retry-After value: whole seconds or an HTTP date. Returns the wait in milliseconds
 * (never negative), or `undefined` when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // HTTP dates start with the day name; anything else (a decimal, a stray word) is unreadable.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The wait before retry number `attempt` (0-based) when the provider gave no Retry-After:
 * exponential, capped, with "equal jitter" (half fixed, half random) so that clients that were
 * limited together do not come back together.
 */
export function computeBackoffMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number,
): number {
  const step = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(step / 2 + random() * (step / 2));
}

function sleepFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function sendOnce(
  request: TrackerRequest,
  timeoutMs: number,
  doFetch: typeof globalThis.fetch,
): Promise<TrackerAnswer | TrackerExchange> {
  const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
  let body: string | undefined;
  if (request.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(request.body);
  }
  try {
    // One signal covers the headers and the body: a response that starts but never ends is a timeout too.
    const signal = AbortSignal.timeout(timeoutMs);
    // Redirects are not followed: the credential must not travel to wherever a 3xx points, and a
    // moved site is a configuration change to make, not to guess.
    const response = await doFetch(request.url, {
      method: request.method,
      headers,
      body,
      signal,
      redirect: 'manual',
    });
    const text = await response.text();
    let json: unknown;
    if (text.length > 0) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { kind: 'answer', status: response.status, headers: response.headers, text, json };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    return {
      kind: 'transport',
      timedOut,
      // The error text of fetch names the failure (reset, refused, timeout) and never the headers.
      message: timedOut ? `no answer within ${timeoutMs} ms` : describeTransportError(err),
    };
  }
}

/**
 * What a failed connection is reported as. The same text whatever the socket error was (refused,
 * reset, unreachable, a port fetch will not use), so that answers do not map which ports of a
 * host are open; a destination the outbound policy refuses says so, the same for every address.
 */
function describeTransportError(err: unknown): string {
  if (isOutboundRefused(err)) return OUTBOUND_REFUSED_MESSAGE;
  return 'connection failed';
}

/**
 * Sends a request, retrying while `isRateLimited` says the answer is a rate limit. A rate-limited
 * request was not processed by the provider, so sending it again (a create included) is safe.
 * Transport failures are not retried here: on a write they are ambiguous and the caller decides.
 */
export async function sendTrackerRequest(
  request: TrackerRequest,
  options: TrackerHttpOptions,
  isRateLimited: (answer: TrackerAnswer) => boolean,
): Promise<TrackerExchange> {
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const maxRetries = options.maxRateLimitRetries ?? DEFAULTS.maxRateLimitRetries;
  const sleep = options.sleep ?? sleepFor;
  const random = options.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    const result = await sendOnce(request, timeoutMs, options.fetch ?? globalThis.fetch);
    if (result.kind !== 'answer' || !isRateLimited(result)) return result;
    const retryAfterMs = parseRetryAfter(result.headers.get('retry-after'));
    const retryAfterSeconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
    if (attempt >= maxRetries) return { kind: 'rate_limited', answer: result, retryAfterSeconds };
    if (retryAfterMs !== undefined && retryAfterMs > (options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs)) {
      return { kind: 'rate_limited', answer: result, retryAfterSeconds };
    }
    await sleep(
      retryAfterMs ??
        computeBackoffMs(
          attempt,
          options.backoffBaseMs ?? DEFAULTS.backoffBaseMs,
          options.backoffMaxMs ?? DEFAULTS.backoffMaxMs,
          random,
        ),
    );
  }
}

/**
 * Makes provider text safe to store and show: removes every given secret (and its Base64 form
 * inside a Basic header), drops HTML markup and caps the length.
 */
export function sanitizeProviderText(text: string, secrets: readonly string[], maxLength = 300): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join('[redacted]');
  }
  out = out
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return out.length > maxLength ? `${out.slice(0, maxLength - 1)}…` : out;
}

/** True for a plain object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The string at `value[key]`, or `undefined`. */
export function readString(value: unknown, key: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === 'string' ? field : undefined;
}

/** An exchange that brought no answer to act on: rate limited to the end, or lost in transport. */
export type TrackerNoAnswer = Exclude<TrackerExchange, TrackerAnswer>;

/**
 * A request that got no answer, as both adapters report it: still rate limited → `rate_limited`
 * (with the provider's status and Retry-After); timed out, refused or reset → `unavailable`. Both
 * are retryable, as nothing was done.
 */
export function classifyNoAnswer(
  provider: TrackerProvider,
  exchange: TrackerNoAnswer,
  action: string,
): ProviderError {
  if (exchange.kind === 'rate_limited') {
    return {
      kind: 'error',
      reason: 'rate_limited',
      status: exchange.answer.status,
      message: `${provider} is rate limiting requests to ${action}`,
      retryable: true,
      ...(exchange.retryAfterSeconds !== undefined ? { retryAfterSeconds: exchange.retryAfterSeconds } : {}),
    };
  }
  return {
    kind: 'error',
    reason: 'unavailable',
    message: `${provider} did not answer the request to ${action}: ${exchange.message}`,
    retryable: true,
  };
}

/**
 * A create that got no answer: rate limited means it was not done (a retryable error); an answer
 * lost after the request was sent (timeout, reset) means the issue may exist (`ambiguous`).
 */
export function classifyLostCreate(
  provider: TrackerProvider,
  exchange: TrackerNoAnswer,
): ProviderOutcome<never> {
  if (exchange.kind === 'rate_limited') return classifyNoAnswer(provider, exchange, 'create the issue');
  return {
    kind: 'ambiguous',
    message: `${provider} did not answer the create (${exchange.message}); the issue may exist`,
  };
}
