/**
 * The source host's REST API in the GitHub wire format: the repositories a token can reach
 * (`GET /installation/repositories` for an installation token, `GET /user/repos` for a user
 * token, both paged by the `Link` header) and commit statuses (`POST /repos/{owner}/{repo}/statuses/{sha}`),
 * plus the webhook signature (`X-Hub-Signature-256: sha256=<HMAC-SHA256 of the raw body>`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isOutboundRefused, OUTBOUND_REFUSED_MESSAGE } from '../outbound/outbound-policy.ts';
import { sourcehostError } from './git-command.ts';

/** A `fetch` the caller supplies (the outbound policy's, in the service). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface SourcehostApiOptions {
  /** Base URL of the REST API, e.g. `https://api.github.com` or `https://HOST/api/v3`. */
  readonly apiBaseUrl: string;
  readonly token: string;
  readonly fetch: FetchLike;
  /** Deadline of each request. Default 15 s. */
  readonly timeoutMs?: number;
}

/** One repository as the source host lists it. */
export interface HostedRepository {
  fullName: string;
  private: boolean;
  defaultBranch: string;
  htmlUrl: string | null;
}

/** `installation`: `GET /installation/repositories`; `user`: `GET /user/repos`. */
export type RepositoryListing = 'installation' | 'user';

const USER_AGENT = 'vigil';

async function call(options: SourcehostApiOptions, url: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await options.fetch(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': USER_AGENT,
        authorization: `Bearer ${options.token}`,
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
    });
  } catch (err) {
    // Refused before connecting, and refused again on every retry: a permanent failure.
    if (isOutboundRefused(err))
      throw sourcehostError('network', OUTBOUND_REFUSED_MESSAGE, { permanent: true }, err);
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw sourcehostError(
      timedOut ? 'timeout' : 'network',
      timedOut ? 'The source host did not answer in time.' : 'The source host could not be reached.',
      {},
      err,
    );
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw sourcehostError(
      'authentication_failed',
      `The source host refused the integration token (HTTP ${response.status}).`,
      {
        status: response.status,
      },
    );
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    // Not followed (the token is for the saved API base URL only), and answered the same on a retry.
    throw sourcehostError(
      'api_error',
      `The source host answered HTTP ${response.status}, a redirect, which is not followed: check the API base URL.`,
      { status: response.status, permanent: true },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw sourcehostError('api_error', `The source host answered HTTP ${response.status}.`, {
      status: response.status,
    });
  }
  return response;
}

/** The URL of rel="next" in a `Link` header (RFC 8288), or null. */
export function nextLink(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;(.*)$/.exec(part.trim());
    if (match && /\brel="?next"?/.test(match[2] ?? '')) return match[1] ?? null;
  }
  return null;
}

function toRepository(raw: unknown): HostedRepository | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.full_name !== 'string') return null;
  return {
    fullName: r.full_name,
    private: r.private === true,
    defaultBranch: typeof r.default_branch === 'string' ? r.default_branch : 'main',
    htmlUrl: typeof r.html_url === 'string' ? r.html_url : null,
  };
}

/**
 * Every repository the token can reach, following `Link: rel="next"` up to `maxPages` pages of
 * 100. Next links must stay on the API's origin (a page never sends the token elsewhere).
 */
export async function listHostedRepositories(
  options: SourcehostApiOptions & { listing: RepositoryListing; maxPages?: number },
): Promise<{ repositories: HostedRepository[]; truncated: boolean }> {
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  let url: string | null =
    options.listing === 'installation'
      ? `${base}/installation/repositories?per_page=100`
      : `${base}/user/repos?per_page=100`;
  const repositories: HostedRepository[] = [];
  const maxPages = options.maxPages ?? 50;
  for (let page = 0; url !== null; page += 1) {
    if (page >= maxPages) return { repositories, truncated: true };
    const response = await call(options, url);
    const body = (await response.json().catch(() => null)) as unknown;
    const items = Array.isArray(body)
      ? body
      : body && typeof body === 'object' && Array.isArray((body as Record<string, unknown>).repositories)
        ? ((body as Record<string, unknown>).repositories as unknown[])
        : null;
    if (items === null)
      throw sourcehostError('api_error', 'The source host answered a repository list in an unknown shape.');
    for (const item of items) {
      const repository = toRepository(item);
      if (repository) repositories.push(repository);
    }
    const next = nextLink(response.headers.get('link'));
    url = next && new URL(next, base).origin === origin ? new URL(next, base).toString() : null;
  }
  return { repositories, truncated: false };
}

/** Commit status states of the GitHub API. */
export type CommitStatusState = 'pending' | 'success' | 'failure' | 'error';

/** Posts a commit status (GitHub replaces an earlier status of the same `context`). */
export async function postCommitStatus(
  options: SourcehostApiOptions & {
    repository: string;
    commit: string;
    state: CommitStatusState;
    targetUrl: string | null;
    description: string;
    context: string;
  },
): Promise<void> {
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  const [owner, name] = options.repository.split('/');
  const url = `${base}/repos/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/statuses/${options.commit}`;
  const response = await call(options, url, {
    method: 'POST',
    body: JSON.stringify({
      state: options.state,
      ...(options.targetUrl ? { target_url: options.targetUrl } : {}),
      description: options.description.slice(0, 140),
      context: options.context,
    }),
  });
  await response.body?.cancel();
}

/** `sha256=<hex>` of HMAC-SHA256(secret, body), as GitHub signs deliveries. */
export function signWebhookBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `header` is the signature of `body` under `secret` (constant-time comparison). */
export function verifyWebhookSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header)) return false;
  const expected = Buffer.from(signWebhookBody(secret, body));
  const given = Buffer.from(header.toLowerCase());
  return expected.length === given.length && timingSafeEqual(expected, given);
}
