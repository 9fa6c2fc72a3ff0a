import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { CREDENTIALS_CHANNEL } from '../../src/auth/credential-cache.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { type Container, createContainer, createLogger } from '../../src/container.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createTestDatabaseConfig } from './database.ts';
import { waitFor } from './wait.ts';

export interface TestApp {
  app: App;
  container: Container;
  config: Config;
  /** The platform admin's token. */
  adminToken: string;
  /**
   * Waits until this app's credential cache has heard every change committed so far: needed after
   * a test changes tokens, users or memberships with SQL instead of through the API (an API write
   * empties the cache of the app that served it before answering).
   */
  settleCredentials(): Promise<void>;
  /** Starts the job workers in this process (off by default). */
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Run the job workers in this process. */
  worker?: boolean;
  /** Reuse another test app's database (two replicas on one database). */
  shareDatabaseWith?: TestApp;
  /**
   * Receives every line the app logs, through the app's own logger (redaction included) at the
   * `LOG_LEVEL` of `env`; without it the app logs nowhere (`TEST_LOG_LEVEL` to see it).
   */
  logTo?: (line: string) => void;
}

/** See TestApp.settleCredentials. */
export async function settleCredentials(container: Container): Promise<void> {
  if (!container.credentialCache.enabled) return; // nothing is cached while the listener is away
  await heardAll(container, [await sendSettleMarker(container)]);
}

/**
 * Sends a marker notification on `channel` (the credentials channel unless told) through
 * `container`'s database: every process listening on that database hears it, after every
 * notification committed before it.
 */
export async function sendSettleMarker(container: Container, channel = CREDENTIALS_CHANNEL): Promise<string> {
  const marker = `settle-${randomBytes(8).toString('hex')}`;
  await container.database.executeSql('select pg_notify($1, $2)', [channel, marker]);
  return marker;
}

/** Waits until `container` has heard every one of `markers` (or is not listening). */
export async function heardAll(container: Container, markers: readonly string[]): Promise<void> {
  const cache = container.credentialCache;
  await waitFor(() => !cache.enabled || markers.every((m) => cache.recentReasons.includes(m)), {
    what: 'the credential notification',
    timeoutMs: 10_000,
    intervalMs: 5,
  });
}

/**
 * The real app on a fresh database, for tests that talk HTTP through `app.inject()`.
 * Configuration comes from `env` as in production (rate limits, costs …).
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-test-'));
  const shared = options.shareDatabaseWith;
  const { config: dbConfig, drop } = shared
    ? { config: shared.config.database, drop: async () => {} }
    : await createTestDatabaseConfig();
  const config: Config = {
    ...loadConfig(
      {
        VIGIL_DATA_DIR: dataDir,
        VIGIL_SECRET_KEY: shared ? shared.config.secretKey!.toString('hex') : randomBytes(32).toString('hex'),
        VIGIL_JOB_POLL_SECONDS: '1',
        LOG_LEVEL: 'silent',
        ...options.env,
      },
      dataDir,
    ),
    database: dbConfig,
  };
  const logTo = options.logTo;
  const log = logTo
    ? createLogger(config, { write: (line: string) => void logTo(line) })
    : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // A second "replica" on a shared database has a pool of its own, as a second process would.
  const database = await openDatabase(dbConfig);
  const container = await createContainer(config, { log, database });
  await container.queue.start({ supervise: Boolean(options.worker) });
  const adminToken = `vgl_u_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;
  if (!shared) await container.services.admin.bootstrapAdmin({ token: adminToken });
  const app = await buildApp(container);
  await app.ready();
  let workerStarted = false;
  const startWorker = async () => {
    if (workerStarted) return;
    workerStarted = true;
    await container.queue.work(container, { concurrency: 1, pollingSeconds: 1 });
  };
  if (options.worker) await startWorker();
  return {
    app,
    container,
    config,
    settleCredentials: () => settleCredentials(container),
    adminToken: shared ? shared.adminToken : adminToken,
    startWorker,
    async close() {
      await app.close();
      await container.close();
      await database.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The test app of a test file: created before its tests (`beforeAll`) and closed after them
 * (`afterAll`). The returned object stands for the app once created, so it can be captured at the
 * top of the file: `const t = sharedTestApp();`.
 */
export function sharedTestApp(options: TestAppOptions | (() => TestAppOptions) = {}): TestApp {
  let current: TestApp | undefined;
  beforeAll(async () => {
    current = await createTestApp(typeof options === 'function' ? options() : options);
  });
  afterAll(async () => {
    await current?.close();
  });
  return new Proxy({} as TestApp, {
    get(_, property) {
      if (!current) throw new Error('the test app is used before beforeAll created it');
      return Reflect.get(current, property);
    },
  });
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request through the app with a bearer token (`null` sends none); the raw response. */
export async function api(t: TestApp, method: Method, url: string, token: string | null, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

/** The same, failing the test unless the status is 2xx; returns the parsed body. */
export async function apiOk<T = Record<string, unknown>>(
  t: TestApp,
  method: Method,
  url: string,
  token: string | null,
  payload?: unknown,
): Promise<T> {
  const res = await api(t, method, url, token, payload);
  if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode}: ${res.body}`);
  return (res.body ? res.json() : null) as T;
}

/** GET with a token; returns status and parsed body. */
export async function getJson<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  url: string,
): Promise<{ status: number; body: T }> {
  const res = await api(t, 'GET', url, token);
  return { status: res.statusCode, body: res.json() as T };
}

/** Sends a request with a token and a JSON body; returns status and parsed body (null when empty). */
export async function sendJson<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  method: Exclude<Method, 'GET'>,
  url: string,
  payload?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await api(t, method, url, token, payload);
  return { status: res.statusCode, body: (res.body ? res.json() : null) as T };
}
