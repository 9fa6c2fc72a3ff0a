import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { createAuthService } from './auth/auth.service.ts';
import { createSecretBox, type SecretBox } from './auth/secret-box.ts';
import { type Config, ConfigError, parseSecretKey } from './config.ts';
import { type Database, migrateDatabase, openDatabase } from './db/client.ts';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import type { ObjectStore } from './integrations/storage/object-store.ts';
import { createObjectStore } from './integrations/storage/object-store-url.ts';
import { jobDefinitions } from './jobs/definitions.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { createAdminService } from './platform/admin/admin.service.ts';
import { createAuditService } from './platform/audit/audit.service.ts';
import { createCompaniesService } from './platform/companies/companies.service.ts';
import { createFindingsService } from './platform/findings/findings.service.ts';
import { createGuildsService } from './platform/guilds/guilds.service.ts';
import { createIntegrationsService } from './platform/integrations/integrations.service.ts';
import { createLabelsService } from './platform/labels/labels.service.ts';
import { createReportsService } from './platform/reports/reports.service.ts';
import { createRepositoriesService } from './platform/repositories/repositories.service.ts';
import { createServiceKeysService } from './platform/service-keys/service-keys.service.ts';
import { createSsoService } from './platform/sso/sso.service.ts';
import { createUsersService } from './platform/users/users.service.ts';
import { createFindingViewsService } from './platform/views/finding-views.service.ts';
import { createCreditsService } from './scanner/credits/credits.service.ts';
import { createScanServices } from './scanner/scans/scans.module.ts';
import { createTicketsService } from './scanner/tickets/tickets.service.ts';
import { createUploadsService } from './scanner/uploads/uploads.service.ts';

export interface ContainerOptions {
  /** Apply migrations while opening (start, serve, worker, tests). Default true. */
  migrate?: boolean;
  /** Supplied logger (tests pass a silent one). */
  log?: Logger;
  /** Open a database the caller already opened (tests share one per file). */
  database?: Database;
}

/** Paths and fields the logger never writes: credentials and integration secrets. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.token',
  '*.secret',
  '*.password',
  '*.apiToken',
  '*.apiKey',
  '*.accessToken',
  '*.credentials',
  '*.authorization',
];

/** Creates the process logger with secrets redacted (to stdout, or to `destination`). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: REDACTED_LOG_PATHS,
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * The secret key: `VIGIL_SECRET_KEY`, else (embedded default only) a key generated once into
 * `<dataDir>/secret.key`. A server deployment must set it so that every process shares it.
 */
async function resolveSecretKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return config.secretKey;
  if (config.database.kind === 'postgres') {
    throw new ConfigError(
      'VIGIL_SECRET_KEY is required with DATABASE_URL: every process must share it. Generate one with: openssl rand -hex 32',
    );
  }
  if (config.database.dataDir === null) return randomBytes(32);
  const file = path.join(config.dataDir, 'secret.key');
  try {
    return parseSecretKey((await readFile(file, 'utf8')).trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err) => {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  });
  await chmod(file, 0o600);
  return parseSecretKey((await readFile(file, 'utf8')).trim());
}

/** Builds everything a process needs: database, queue, services. The composition root. */
export async function createContainer(config: Config, options: ContainerOptions = {}) {
  const log = options.log ?? createLogger(config);
  const database = options.database ?? (await openDatabase(config.database));
  if (options.migrate !== false) await migrateDatabase(database);
  const secretBox: SecretBox = createSecretBox(await resolveSecretKey(config));
  const rateLimiter: RateLimiter = config.redisUrl
    ? createRedisRateLimiter(
        new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }),
        config.rateLimit,
      )
    : createMemoryRateLimiter(config.rateLimit);

  const objectStore: ObjectStore = createObjectStore(config.objectStore);
  const db = database.db;
  const credits = createCreditsService({ database, costs: config.scanCosts });
  const integrations = createIntegrationsService({ database, secretBox });
  const scanServices = createScanServices({
    database,
    config,
    credits,
    objectStore,
    integrations,
    queue: () => queue,
    log,
  });
  const services = {
    auth: createAuthService({ db }),
    admin: createAdminService({ database, credits }),
    serviceKeys: createServiceKeysService({ database }),
    integrations,
    credits,
    uploads: createUploadsService({
      database,
      objectStore,
      secretBox,
      log,
      maxBytes: config.uploads.maxBytes,
      ttlMinutes: config.uploads.ttlMinutes,
      publicUrl: config.publicUrl,
    }),
    ...scanServices,
    findings: createFindingsService({ database }),
    labels: createLabelsService({ database }),
    findingViews: createFindingViewsService({ database }),
    companies: createCompaniesService({ database }),
    users: createUsersService({ database }),
    audit: createAuditService({ database }),
    sso: createSsoService({ database }),
    repositories: createRepositoriesService({ database }),
    reports: createReportsService({ database }),
    guilds: createGuildsService({ database }),
    tickets: createTicketsService({
      database,
      integrations,
      publicUrl: config.publicUrl ?? `http://localhost:${config.port}`,
      trackerOptions: {
        timeoutMs: config.trackers.timeoutMs,
        reconcileWindowMs: config.trackers.reconcileWindowMs,
      },
      leaseSeconds: config.trackers.exportLeaseSeconds,
      log,
    }),
  };
  const queue: JobQueue = createJobQueue({
    database,
    definitions: jobDefinitions(),
    log,
    leaseSeconds: config.jobs.leaseSeconds,
  });

  return {
    config,
    log,
    database,
    secretBox,
    rateLimiter,
    objectStore,
    queue,
    services,
    /** Closes the queue, the rate limiter and (when it opened it) the database. */
    async close() {
      await queue.stop({ timeoutMs: config.shutdownTimeoutMs });
      await rateLimiter.close();
      await objectStore.close();
      if (!options.database) await database.close();
    },
  };
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
