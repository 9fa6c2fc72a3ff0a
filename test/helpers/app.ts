import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { type App, buildApp } from '../../src/app.ts';
import { CREDENTIALS_CHANNEL } from '../../src/auth/credential-cache.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { type Container, createContainer } from '../../src/container.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createTestDatabaseConfig } from './database.ts';

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
}

/** See TestApp.settleCredentials. */
export async function settleCredentials(container: Container): Promise<void> {
  const cache = container.credentialCache;
  if (!cache.enabled) return; // nothing is cached while the listener is away
  const marker = `settle-${randomBytes(8).toString('hex')}`;
  await container.database.executeSql('select pg_notify($1, $2)', [CREDENTIALS_CHANNEL, marker]);
  const started = Date.now();
  while (cache.enabled && !cache.recentReasons.includes(marker)) {
    if (Date.now() - started > 10_000) throw new Error('the credential notification never arrived');
    await new Promise((r) => setTimeout(r, 5));
  }
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
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
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
