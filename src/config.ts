import path from 'node:path';

/**
 * One typed, validated configuration object built from environment variables. This module is the
 * only reader of `process.env` (through `main.ts`); everything else receives a `Config`.
 * Every variable is documented in docs/operations.md.
 */
export interface Config {
  /** HTTP port (`PORT`, default 3000). */
  port: number;
  /** Listen address (`HOST`, default 0.0.0.0). */
  host: string;
  /** Directory of the embedded state (`VIGIL_DATA_DIR`, default ./data). */
  dataDir: string;
  database:
    | { kind: 'pglite'; dataDir: string | null /* null = in memory */ }
    | { kind: 'postgres'; url: string; poolSize: number };
  /** Public base URL of this server, used in upload URLs and links (`VIGIL_PUBLIC_URL`). */
  publicUrl: string | null;
  /** 32-byte key for integration secrets and upload signatures (`VIGIL_SECRET_KEY`, hex or base64). */
  secretKey: Buffer | null;
  /** Token of the platform admin created on first start (`VIGIL_ADMIN_TOKEN`). */
  adminToken: string | null;
  /** Object store URL (`VIGIL_OBJECT_STORE`: `file:./data/objects` or `s3://bucket?endpoint=…&region=…`). */
  objectStore: string;
  redisUrl: string | null;
  logLevel: string;
  /** Largest JSON body in bytes (`VIGIL_BODY_LIMIT_BYTES`, default 1 MiB). */
  bodyLimitBytes: number;
  rateLimit: { requestsPerMinute: number; burst: number };
  /** Scan credit costs per type (`VIGIL_COST_LITE`, `VIGIL_COST_STANDARD`, `VIGIL_COST_AUDIT`). */
  scanCosts: { lite: number; standard: number; audit: number };
  /** How long idempotency records are kept (`VIGIL_IDEMPOTENCY_TTL_HOURS`, default 24). */
  idempotencyTtlHours: number;
  uploads: { maxBytes: number; ttlMinutes: number };
  jobs: {
    /** How long a claimed job may run before another worker takes it over (`VIGIL_JOB_LEASE_SECONDS`). */
    leaseSeconds: number;
    pollingSeconds: number;
    concurrency: number;
  };
  llm: { baseUrl: string; apiKey: string | null; model: string } | null;
  trackers: {
    /** Timeout of one issue-tracker request (`VIGIL_TRACKER_TIMEOUT_MS`). */
    timeoutMs: number;
    /** How long tracker_b reconciliation polls a lagging search index (`VIGIL_TRACKER_RECONCILE_WINDOW_MS`). */
    reconcileWindowMs: number;
    /** How long an export in progress locks its finding (`VIGIL_TICKET_EXPORT_LEASE_SECONDS`). */
    exportLeaseSeconds: number;
  };
  /** Graceful shutdown budget in milliseconds (`VIGIL_SHUTDOWN_TIMEOUT_MS`). */
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name} must be an integer ≥ ${min}; got "${raw}".`);
  }
  return value;
}

function readString(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

/** Decodes a 32-byte key given as 64 hex characters or as base64. */
export function parseSecretKey(raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new ConfigError('VIGIL_SECRET_KEY must be 32 bytes, as 64 hex characters or base64.');
  }
  return key;
}

/** The LLM endpoint alone (for commands that need nothing else of the configuration). */
export function loadLlmConfig(env: Env): Config['llm'] {
  const baseUrl = readString(env, 'VIGIL_LLM_BASE_URL');
  if (!baseUrl) return null;
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    apiKey: readString(env, 'VIGIL_LLM_API_KEY'),
    model: readString(env, 'VIGIL_LLM_MODEL') ?? 'gpt-4o-mini',
  };
}

/** Builds and validates the configuration. Throws ConfigError with a message saying what to fix. */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const dataDir = path.resolve(cwd, readString(env, 'VIGIL_DATA_DIR') ?? 'data');
  const databaseUrl = readString(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://.');
  }
  const secret = readString(env, 'VIGIL_SECRET_KEY');
  const rpm = readInt(env, 'VIGIL_RATE_LIMIT_PER_MINUTE', 600, 1);
  return {
    port: readInt(env, 'PORT', 3000, 0),
    host: readString(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    database: databaseUrl
      ? { kind: 'postgres', url: databaseUrl, poolSize: readInt(env, 'VIGIL_DB_POOL_SIZE', 10, 1) }
      : { kind: 'pglite', dataDir: path.join(dataDir, 'db') },
    publicUrl: readString(env, 'VIGIL_PUBLIC_URL')?.replace(/\/+$/, '') ?? null,
    secretKey: secret ? parseSecretKey(secret) : null,
    adminToken: readString(env, 'VIGIL_ADMIN_TOKEN'),
    objectStore: readString(env, 'VIGIL_OBJECT_STORE') ?? `file:${path.join(dataDir, 'objects')}`,
    redisUrl: readString(env, 'REDIS_URL'),
    logLevel: readString(env, 'LOG_LEVEL') ?? 'info',
    bodyLimitBytes: readInt(env, 'VIGIL_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    rateLimit: { requestsPerMinute: rpm, burst: readInt(env, 'VIGIL_RATE_LIMIT_BURST', rpm, 1) },
    scanCosts: {
      lite: readInt(env, 'VIGIL_COST_LITE', 1, 0),
      standard: readInt(env, 'VIGIL_COST_STANDARD', 2, 0),
      audit: readInt(env, 'VIGIL_COST_AUDIT', 5, 0),
    },
    idempotencyTtlHours: readInt(env, 'VIGIL_IDEMPOTENCY_TTL_HOURS', 24, 1),
    uploads: {
      maxBytes: readInt(env, 'VIGIL_UPLOAD_MAX_BYTES', 512 * 1024 * 1024, 1),
      ttlMinutes: readInt(env, 'VIGIL_UPLOAD_TTL_MINUTES', 60, 1),
    },
    jobs: {
      leaseSeconds: readInt(env, 'VIGIL_JOB_LEASE_SECONDS', 900, 1),
      pollingSeconds: readInt(env, 'VIGIL_JOB_POLL_SECONDS', 1, 1),
      concurrency: readInt(env, 'VIGIL_WORKER_CONCURRENCY', 2, 1),
    },
    llm: loadLlmConfig(env),
    trackers: {
      timeoutMs: readInt(env, 'VIGIL_TRACKER_TIMEOUT_MS', 10_000, 100),
      reconcileWindowMs: readInt(env, 'VIGIL_TRACKER_RECONCILE_WINDOW_MS', 120_000, 0),
      exportLeaseSeconds: readInt(env, 'VIGIL_TICKET_EXPORT_LEASE_SECONDS', 300, 1),
    },
    shutdownTimeoutMs: readInt(env, 'VIGIL_SHUTDOWN_TIMEOUT_MS', 30_000, 0),
  };
}
