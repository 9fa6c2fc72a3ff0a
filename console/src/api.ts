import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../src/sdk/schema';

/** What GET /api/v0/session returns. */
export type Session = paths['/api/v0/session']['get']['responses'][200]['content']['application/json'];

/**
 * The session's CSRF token and the company the scanner API acts for. Kept in memory only: the
 * credential itself is the HttpOnly cookie, which scripts never see.
 */
export const sessionState: { csrfToken: string | null; companyId: string | null } = {
  csrfToken: null,
  companyId: null,
};

/** An API error as the console shows it: the server's message, the status and the v1 code. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const sessionMiddleware: Middleware = {
  onRequest({ request }) {
    if (WRITES.has(request.method) && sessionState.csrfToken) {
      request.headers.set('x-csrf-token', sessionState.csrfToken);
    }
    if (sessionState.companyId && new URL(request.url).pathname.startsWith('/api/scanner/')) {
      request.headers.set('x-vigil-company', sessionState.companyId);
    }
    return request;
  },
};

/** The typed client of the Vigil API (same origin; the session cookie authenticates). */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(sessionMiddleware);

/** Turns an error body of either API ({msg} or {error, code}) into an ApiError. */
export function toApiError(error: unknown, response: Response): ApiError {
  const body = (error ?? {}) as { msg?: string; error?: string; code?: string };
  const message = body.msg ?? body.error ?? `The server answered ${response.status} ${response.statusText}.`;
  return new ApiError(message, response.status, body.code ?? null);
}

/** Unwraps an openapi-fetch result: the data, or a thrown ApiError. */
export async function unwrap<T>(
  promise: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await promise;
  if (!response.ok) throw toApiError(error, response);
  return data as T;
}

/** Headers for requests made without openapi-fetch (uploads, downloads). */
export function sessionHeaders(write: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  if (write && sessionState.csrfToken) headers['x-csrf-token'] = sessionState.csrfToken;
  if (sessionState.companyId) headers['x-vigil-company'] = sessionState.companyId;
  return headers;
}
