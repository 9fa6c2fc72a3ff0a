/**
 * The typed Vigil SDK: an `openapi-fetch` client over the types `openapi-typescript` generates from
 * the committed `openapi.json` (`npm run sdk:generate`; `npm run sdk:check` fails on drift).
 *
 *   import { createVigilClient } from 'vigil/sdk';
 *   const vigil = createVigilClient({ baseUrl: 'https://vigil.example.com', token: process.env.VIGIL_API_KEY });
 *   const { data, error } = await vigil.GET('/api/scanner/v1/scans/{scanId}', { params: { path: { scanId } } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
/** The named schemas of the API (`components.schemas`), e.g. `Schemas['ScanStatus']`. */
export type Schemas = components['schemas'];
export type VigilClient = Client<paths>;

export interface VigilClientOptions {
  /** Server URL, e.g. `http://localhost:3000` (a trailing slash is ignored). */
  baseUrl: string;
  /** A service key `vgl_sk_…` (scanner API) or a user token `vgl_u_…` (platform API), sent as a bearer token. */
  token?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch implementation (defaults to the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client whose methods (`GET`, `POST`, …) take the API's paths and return its typed bodies.
 * `Paths` is the API's `paths` unless a caller describes its own (paths built at run time).
 */
export function createVigilClient<Paths extends {} = paths>(options: VigilClientOptions): Client<Paths> {
  return createClient<Paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** The message of an error body in either API's shape: v1 `{error, code}`, v0 `{msg}`. */
export function errorMessage(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return typeof body === 'string' && body ? body : undefined;
  const { error, msg, code } = body as { error?: unknown; msg?: unknown; code?: unknown };
  if (typeof error === 'string') return typeof code === 'string' ? `${error} (${code})` : error;
  if (typeof msg === 'string') return msg;
  return undefined;
}
