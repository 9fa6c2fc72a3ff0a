import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { ServiceActor, UserActor } from './auth/actor.ts';
import { createAuthService } from './auth/auth.service.ts';
import { CREDENTIALS_CHANNEL, createCredentialCache } from './auth/credential-cache.ts';
import { createCredentialThrottle } from './auth/credential-throttle.ts';
import { createSecretBox, type SecretBox } from './auth/secret-box.ts';
import { createSessionCodec } from './auth/session.ts';
import { type Config, ConfigError, parseSecretKey, publicBaseUrl } from './config.ts';
import { type Database, migrateDatabase, openDatabase } from './db/client.ts';
import { createSmtpMailer, type Mailer } from './integrations/notify/smtp-mailer.ts';
import { createOutboundPolicy, type OutboundPolicy } from './integrations/outbound/outbound-policy.ts';
import type { ObjectStore } from './integrations/storage/object-store.ts';
import { createObjectStore } from './integrations/storage/object-store-url.ts';
import { createJobQueue, type JobQueue, MAX_LEASE_SECONDS } from './jobs/queue.ts';
import { type JobDeps, jobRegistry } from './jobs/registry.ts';
import { createCreditsService } from './organization/credits/credits.service.ts';
import { createIntegrationsService } from './organization/integrations/integrations.service.ts';
import { createServiceKeysService } from './organization/service-keys/service-keys.service.ts';
import { createAdminService } from './platform/admin/admin.service.ts';
import { createAiService } from './platform/ai/ai.service.ts';
import { createAuditService } from './platform/audit/audit.service.ts';
import { createCommentsService } from './platform/comments/comments.service.ts';
import { createCompaniesService } from './platform/companies/companies.service.ts';
import { createDashboardService } from './platform/dashboard/dashboard.service.ts';
import { createFindingEventsService } from './platform/findings/finding-events.service.ts';
import { createFindingsService } from './platform/findings/findings.service.ts';
import { createGuildsService } from './platform/guilds/guilds.service.ts';
import { createInvitationsService } from './platform/invitations/invitations.service.ts';
import { createLabelsService } from './platform/labels/labels.service.ts';
import { createLeaderboardService } from './platform/leaderboard/leaderboard.service.ts';
import { createNotificationDelivery } from './platform/notifications/notifications.delivery.ts';
import { createNotificationsService } from './platform/notifications/notifications.service.ts';
import { type CursorCodec, createCursorCodec } from './platform/pagination/cursor.ts';
import { createReportsService } from './platform/reports/reports.service.ts';
import { createRepositoriesService } from './platform/repositories/repositories.service.ts';
import { createSessionService } from './platform/session/session.service.ts';
import { createSourcehostService, type SourcehostService } from './platform/sourcehost/sourcehost.service.ts';
import { createSsoService } from './platform/sso/sso.service.ts';
import { createUsersService } from './platform/users/users.service.ts';
import { createFindingViewsService } from './platform/views/finding-views.service.ts';
import { createMemoryRateLimiter, createRedisRateLimiter, type RateLimiter } from './rate-limit.ts';
import { REDACTED, redactSecrets } from './redaction.ts';
import { createDraftPublishing } from './scanner/drafts/drafts.publish.ts';
import { createDraftsService } from './scanner/drafts/drafts.service.ts';
import { createScanServices } from './scanner/scans/scans.module.ts';
import { createTicketsService } from './scanner/tickets/tickets.service.ts';
import { createUploadsService } from './scanner/uploads/uploads.service.ts';
import { createScannerWorkspacesService } from './scanner/workspaces/workspaces.service.ts';

export interface ContainerOptions {
  /** Apply migrations while opening (start, serve, worker, tests). Default true. */
  migrate?: boolean;
  /** Supplied logger (tests pass a silent one). */
  log?: Logger;
  /** Open a database the caller already opened (tests share one per file). */
  database?: Database;
}

/** The table whose changes notify `vigil_credentials` with its name (migration 0030). */
const SESSIONS_TABLE = 'console_sessions';

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
  '*.signature',
  '*.clientSecret',
  '*.webhookSecret',
  '*.secretEnc',
  '*.credentialsEnc',
  '*.privateKey',
  '*.secretAccessKey',
  '*.sessionToken',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
  '*.headers["proxy-authorization"]',
];

/**
 * Creates the process logger with secrets redacted (to stdout, or to `destination`): known fields
 * by name (`REDACTED_LOG_PATHS`), then every line by what secrets look like (`redactSecrets`:
 * tokens, keys, webhook secrets and signatures, credentials in URLs, headers and messages).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: REDACTED_LOG_PATHS,
        censor: REDACTED,
      },
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}

/** The process's outbound policy: `VIGIL_OUTBOUND_ALLOW`, and this service's own public host. */
export function createOutboundPolicyFromConfig(
  config: Pick<Config, 'outbound' | 'publicUrl'>,
): OutboundPolicy {
  const selfHosts: string[] = [];
  if (config.publicUrl) {
    try {
      selfHosts.push(new URL(config.publicUrl).hostname);
    } catch {
      // An unparsable public URL is reported where it is used.
    }
  }
  return createOutboundPolicy({ allow: config.outbound.allow, selfHosts });
}

/**
 * The secret key: `VIGIL_SECRET_KEY`, else (embedded default only) a key generated once into
 * `<dataDir>/secret.key`. A server deployment must set it so that every process shares it.
 */
export async function resolveSecretKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return config.secretKey;
  if (config.database.kind === 'postgres') {
    throw new ConfigError(
      'VIGIL_SECRET_KEY is required with DATABASE_URL: every process must share it. Generate one with: openssl rand -hex 32',
    );
  }
  const file = path.join(config.dataDir, 'secret.key');
  try {
    return parseSecretKey((await readFile(file, 'utf8')).trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(config.dataDir, { recursive: true });
  // Written whole to a private file, then linked into place: a process starting at the same time
  // either wins the link or reads the winner's complete key, never an empty or half-written file.
  const key = randomBytes(32);
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file).catch((err) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    });
  } finally {
    await unlink(draft).catch(() => undefined);
  }
  return parseSecretKey((await readFile(file, 'utf8')).trim());
}

/** Applying the committed migrations failed (the cause says why). */
export class MigrationError extends Error {
  override name = 'MigrationError';
  constructor(cause: unknown) {
    super(`applying the database migrations failed: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/** Builds everything a process needs: database, queue, services. The composition root. */
export async function createContainer(config: Config, options: ContainerOptions = {}) {
  const log = options.log ?? createLogger(config);
  const database = options.database ?? (await openDatabase(config.database));
  let secretBox: SecretBox;
  let secretKey: Buffer;
  try {
    if (options.migrate !== false) {
      await migrateDatabase(database).catch((err) => {
        throw new MigrationError(err);
      });
    }
    secretKey = await resolveSecretKey(config);
    secretBox = createSecretBox(secretKey);
  } catch (err) {
    // Nothing else holds the database yet: close it (and detach from the embedded server).
    if (!options.database) await database.close().catch(() => undefined);
    throw err;
  }
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 })
    : null;
  const rateLimiter: RateLimiter = redis
    ? createRedisRateLimiter(redis, config.rateLimit, `${config.redisPrefix}rl:`)
    : createMemoryRateLimiter(config.rateLimit);
  // Failed credential checks, per address and per target: buckets of their own (see credential-throttle.ts).
  const credentialThrottle = createCredentialThrottle({
    limiter: redis
      ? createRedisRateLimiter(redis, config.credentialThrottle, `${config.redisPrefix}auth-fail:`)
      : createMemoryRateLimiter(config.credentialThrottle),
    policy: config.credentialThrottle,
  });
  const cursors: CursorCodec = createCursorCodec(secretKey);
  // Questions to the repository assistant: per user, in buckets of their own.
  const aiRateLimiter: RateLimiter = redis
    ? createRedisRateLimiter(redis, config.ai.rateLimit, `${config.redisPrefix}ai-rl:`)
    : createMemoryRateLimiter(config.ai.rateLimit);
  // Every outbound connection goes through the outbound policy: its fetch serves the assistant's
  // model calls, the source host's REST API and notification webhooks.
  const outbound: OutboundPolicy = createOutboundPolicyFromConfig(config);
  const outboundFetch: typeof fetch = outbound.fetch;
  const objectStore: ObjectStore = createObjectStore(config.objectStore, outbound);
  const mailer: Mailer | null = config.notifications.smtpUrl
    ? createSmtpMailer({
        url: config.notifications.smtpUrl,
        from: config.notifications.smtpFrom,
        timeoutMs: config.notifications.timeoutMs,
      })
    : null;
  const db = database.db;
  const integrations = createIntegrationsService({ database, secretBox, outbound });
  const credits = createCreditsService({ database, costs: config.scanCosts });
  const scanServices = createScanServices({
    database,
    config,
    credits,
    objectStore,
    integrations,
    outbound,
    queue: () => queue,
    log,
    cursors,
    // The source-host service is built below; a scan can only finish once the container is built.
    afterScanFinished: (tx, scanId) => sourcehost.afterScanFinished(tx, scanId),
  });
  const publicUrl = publicBaseUrl(config);
  const sourcehost: SourcehostService = createSourcehostService({
    database,
    cursors,
    secretBox,
    queue: () => queue,
    fetch: outboundFetch,
    createScanFor: (origin, key, body) => scanServices.scans.createScanFor(origin, key, body),
    publicUrl,
    throttle: credentialThrottle,
    log,
  });
  const credentialCache = createCredentialCache<ServiceActor | UserActor>({
    maxEntries: config.credentialCacheSize,
  });
  const forgetChanged = (payload: string, channel: string) => {
    if (channel !== CREDENTIALS_CHANNEL) return;
    // A change of console sessions concerns only the sessions resolved: tokens and keys stay.
    if (payload === SESSIONS_TABLE)
      credentialCache.forgetWhere(
        (_key, actor) => actor.kind === 'user' && actor.sessionId !== undefined,
        payload,
      );
    else credentialCache.invalidate(payload);
  };
  // A change this process commits is forgotten right after its commit, before the request that
  // made it answers; other processes hear of it on the dedicated listening connection below.
  const stopForgettingOwnChanges = database.afterCommit(forgetChanged);
  const credentialListener =
    config.credentialCacheSize > 0
      ? database.listen(CREDENTIALS_CHANNEL, {
          onNotify: forgetChanged,
          onState: (listening) => credentialCache.setEnabled(listening),
        })
      : null;
  const auth = createAuthService({ db, cache: credentialCache });
  const sessionCodec = createSessionCodec(secretBox);
  const services = {
    auth,
    session: createSessionService({
      database,
      auth,
      codec: sessionCodec,
      throttle: credentialThrottle,
      ttlMs: config.sessionTtlHours * 3_600_000,
    }),
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
      throttle: credentialThrottle,
    }),
    ...scanServices,
    drafts: createDraftsService({ database, cursors }),
    scannerWorkspaces: createScannerWorkspacesService({ database, cursors }),
    draftPublishing: createDraftPublishing({ database, publicUrl }),
    sourcehost,
    leaderboard: createLeaderboardService({ database, cursors }),
    findings: createFindingsService({ database, cursors }),
    findingEvents: createFindingEventsService({ database }),
    comments: createCommentsService({ database, queue: () => queue, emailEnabled: mailer !== null }),
    notifications: createNotificationsService({ database, secretBox, cursors, outbound }),
    notificationDelivery: createNotificationDelivery({
      database,
      secretBox,
      mailer,
      fetch: outboundFetch,
      webhookTimeoutMs: config.notifications.timeoutMs,
      queue: () => queue,
      publicUrl: config.publicUrl,
      log,
    }),
    labels: createLabelsService({ database }),
    findingViews: createFindingViewsService({ database }),
    companies: createCompaniesService({ database }),
    dashboard: createDashboardService({ database }),
    users: createUsersService({ database }),
    invitations: createInvitationsService({
      database,
      secretBox,
      queue: () => queue,
      mailer,
      publicUrl: config.publicUrl,
      log,
      throttle: credentialThrottle,
    }),
    audit: createAuditService({ database, cursors }),
    sso: createSsoService({ database }),
    repositories: createRepositoriesService({ database }),
    reports: createReportsService({ database, cursors }),
    guilds: createGuildsService({ database }),
    ai: createAiService({
      database,
      llm: config.llm,
      ai: config.ai,
      rateLimiter: aiRateLimiter,
      fetch: outboundFetch,
      log,
    }),
    tickets: createTicketsService({
      database,
      integrations,
      publicUrl,
      trackerOptions: {
        timeoutMs: config.trackers.timeoutMs,
        reconcileWindowMs: config.trackers.reconcileWindowMs,
        fetch: outbound.fetch,
      },
      leaseSeconds: config.trackers.exportLeaseSeconds,
      log,
    }),
  };
  const queue: JobQueue<JobDeps> = createJobQueue({
    database,
    jobs: jobRegistry,
    log,
    // A running job is bounded by its heartbeat, not by a lease: the longest run pg-boss allows.
    leaseSeconds: MAX_LEASE_SECONDS,
    heartbeatTimeoutSeconds: config.jobs.heartbeatTimeoutSeconds,
  });

  return {
    config,
    log,
    database,
    secretBox,
    sessionCodec,
    rateLimiter,
    /** The throttle of failed credential checks (see credential-throttle.ts). */
    credentialThrottle,
    /** Resolved credentials of this process (see credential-cache.ts). */
    credentialCache,
    /** The outbound policy: every outbound connection's `fetch`, dispatcher and address checks. */
    outbound,
    objectStore,
    queue,
    services,
    /**
     * Closes the queue, the rate limiter and (when it opened it) the database. Every step runs even
     * when an earlier one fails (a pool left open would keep the process from exiting); the first
     * failure is thrown at the end.
     */
    async close() {
      const steps: Array<[string, () => unknown]> = [
        ['job queue', () => queue.stop({ timeoutMs: config.shutdownTimeoutMs })],
        ['rate limiter', () => rateLimiter.close()],
        ['assistant rate limiter', () => aiRateLimiter.close()],
        ['object store', () => objectStore.close()],
        ['mailer', () => mailer?.close()],
        ['outbound policy', () => outbound.close()],
        ['credential listener', () => credentialListener?.close()],
        ['own changes', () => stopForgettingOwnChanges()],
        ['database', () => (options.database ? undefined : database.close())],
      ];
      let failure: unknown;
      for (const [part, step] of steps) {
        try {
          await step();
        } catch (err) {
          failure ??= err;
          log.warn({ err, part }, 'closing failed; closing the rest');
        }
      }
      if (failure !== undefined) throw failure;
    },
  };
}

export type Container = Awaited<ReturnType<typeof createContainer>>;
