import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from 'openapi-fetch';
import { createVigilClient, errorMessage, type paths } from '../sdk/index.ts';
import { CliError } from './cli-error.ts';

type Env = Record<string, string | undefined>;

/** What `vigil login` stores: the server URL and a credential (a service key and/or a user token). */
export interface StoredLogin {
  url?: string;
  key?: string;
  token?: string;
}

/** `$VIGIL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/vigil`, else `~/.config/vigil` (`%APPDATA%\vigil` on Windows). */
export function configDir(env: Env): string {
  if (env.VIGIL_CONFIG_DIR) return env.VIGIL_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, 'vigil');
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'vigil');
  return path.join(env.HOME ?? os.homedir(), '.config', 'vigil');
}

export const configFile = (env: Env) => path.join(configDir(env), 'config.json');

export async function readStoredLogin(env: Env): Promise<StoredLogin> {
  const file = configFile(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return {};
  }
  try {
    return JSON.parse(text) as StoredLogin;
  } catch {
    throw new CliError(`${file} is not valid JSON. Run "vigil login" again or delete the file.`);
  }
}

/** Writes the login file readable by its owner only (mode 0600, folder 0700). */
export async function writeStoredLogin(env: Env, login: StoredLogin): Promise<string> {
  const file = configFile(env);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await rm(file, { force: true });
  await writeFile(file, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return file;
}

/** Options every command that talks to a server takes. */
export interface ConnectionOptions {
  url?: string;
  token?: string;
  key?: string;
}

/** Where a setting came from: the flag, the environment, then the login file, then the default. */
export async function resolveConnection(options: ConnectionOptions, env: Env) {
  const stored = await readStoredLogin(env);
  return {
    url: (options.url ?? env.VIGIL_URL ?? stored.url ?? 'http://localhost:3000').replace(/\/+$/, ''),
    key: options.key ?? env.VIGIL_API_KEY ?? stored.key,
    token: options.token ?? env.VIGIL_TOKEN ?? stored.token,
  };
}

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RetryPolicy {
  /** Attempts in all (the first one included). */
  attempts: number;
  /** First backoff after a network error, doubled each time. */
  baseDelayMs: number;
  /** Longest wait honoured from Retry-After. */
  maxRetryAfterMs: number;
  sleep: Sleep;
  /** Told before each wait (for a status line). */
  onRetry?: (reason: string, waitMs: number) => void;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 500,
  maxRetryAfterMs: 120_000,
  sleep: realSleep,
};

/**
 * A fetch that waits `Retry-After` on 429 and 503 and backs off exponentially on network errors,
 * then fails with a CliError saying what was tried. Every request is sent again identically (a scan
 * creation keeps its Idempotency-Key, so a retry never pays twice).
 */
export function retryingFetch(
  base: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let lastNetworkError: Error | undefined;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts;
      let response: Response;
      try {
        response = await base(last ? request : request.clone());
      } catch (err) {
        lastNetworkError = err as Error;
        const reason = lastNetworkError.cause as { code?: string; message?: string } | undefined;
        const cause = reason?.code ?? reason?.message;
        if (last) {
          throw new CliError(
            `Cannot reach ${new URL(request.url).origin} (${cause ?? lastNetworkError.message}) after ${attempt} attempts. Is the server running? Check --url, VIGIL_URL or "vigil login".`,
          );
        }
        const wait = policy.baseDelayMs * 2 ** (attempt - 1);
        policy.onRetry?.(`network error (${cause ?? lastNetworkError.message})`, wait);
        await policy.sleep(wait);
        continue;
      }
      if ((response.status === 429 || response.status === 503) && !last) {
        const header = Number(response.headers.get('retry-after'));
        const wait = Math.min(
          Number.isFinite(header) && header > 0 ? header * 1000 : policy.baseDelayMs * 2 ** (attempt - 1),
          policy.maxRetryAfterMs,
        );
        await response.body?.cancel();
        policy.onRetry?.(`${response.status} from the server`, wait);
        await policy.sleep(wait);
        continue;
      }
      return response;
    }
  };
}

/** An SDK client for the CLI: retries as above, errors as CliErrors. */
export function cliClient<Paths extends {} = paths>(
  connection: { url: string; credential: string },
  deps: { fetch?: (request: Request) => Promise<Response>; retry?: Partial<RetryPolicy> } = {},
): Client<Paths> {
  const base = deps.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createVigilClient<Paths>({
    baseUrl: connection.url,
    token: connection.credential,
    fetch: retryingFetch(base, { ...DEFAULT_RETRY, ...deps.retry }),
  });
}

/** The body of a successful answer, or a CliError with the API's message and what to do. */
export function expectOk<T>(
  result: { data?: T; error?: unknown; response: Response },
  what: string,
  hints: Record<number, string> = {},
): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.ok) return undefined as T;
  const status = result.response.status;
  const message = errorMessage(result.error) ?? result.response.statusText;
  const hint =
    hints[status] ??
    {
      401: 'Check the credential (--key/--token, VIGIL_API_KEY/VIGIL_TOKEN or "vigil login").',
      403: 'The credential lacks the scope or role for this; ask a manager for one that has it.',
      404: 'Check the id: it does not exist in your organization.',
      429: 'The server is rate limiting; try again later.',
      503: 'The server is temporarily unavailable; try again later.',
    }[status] ??
    '';
  return fail(`${what} failed (${status}): ${message}${hint ? `. ${hint}` : ''}`);
}

function fail(message: string): never {
  throw new CliError(message);
}
