import { isIP } from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

/**
 * One typed, validated configuration object built from environment variables. This module is the
 * only reader of `process.env` (through `main.ts`); everything else receives a `Config`.
 * Every variable is documented in docs/operations.md.
 */
export interface Config {
  /** HTTP port (`PORT`, default 3000). */
  port: number;
  /**
   * Listen address (`HOST`, default 127.0.0.1: this machine only). A deployment behind a proxy or
   * in a container sets `HOST=0.0.0.0` (every interface) or the address to listen on.
   */
  host: string;
  /** Directory of the embedded state (`VIGIL_DATA_DIR`, default ./data). */
  dataDir: string;
  /**
   * `embedded`: the PostgreSQL server Vigil runs in `<dataDir>/postgres` (shared by every vigil
   * process on the folder; `VIGIL_EMBEDDED_PG_PORT`, default a free port); `postgres`: `DATABASE_URL`.
   */
  database:
    | { kind: 'embedded'; dataDir: string; poolSize: number; port?: number }
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
  /** Prefix of every Redis key Vigil writes (`VIGIL_REDIS_PREFIX`, default `vigil:`). */
  redisPrefix: string;
  logLevel: string;
  /** Largest JSON body in bytes (`VIGIL_BODY_LIMIT_BYTES`, default 1 MiB). */
  bodyLimitBytes: number;
  /** Resolved credentials kept in memory (`VIGIL_CREDENTIAL_CACHE_SIZE`; 0 turns the cache off). */
  credentialCacheSize: number;
  rateLimit: { requestsPerMinute: number; burst: number };
  /**
   * Failed credential checks allowed per source address and per target (`VIGIL_AUTH_FAILURES_PER_MINUTE`
   * and `VIGIL_AUTH_FAILURES_BURST`; by default those of `rateLimit`). See src/auth/credential-throttle.ts.
   */
  credentialThrottle: { requestsPerMinute: number; burst: number };
  /**
   * Which proxies' `X-Forwarded-For` names the client (`VIGIL_TRUST_PROXY`: `true`, a hop count, or
   * comma-separated addresses and CIDR ranges; unset: none). The source address of the rate limit
   * and the credential throttle is the client address it gives.
   */
  trustProxy: boolean | number | string[];
  /** How long a console session lasts at most (`VIGIL_SESSION_TTL_HOURS`, default 12; it also ends with its token). */
  sessionTtlHours: number;
  /** Scan credit costs per type (`VIGIL_COST_LITE`, `VIGIL_COST_STANDARD`, `VIGIL_COST_AUDIT`). */
  scanCosts: { lite: number; standard: number; audit: number };
  /** How long idempotency records are kept (`VIGIL_IDEMPOTENCY_TTL_HOURS`, default 24). */
  idempotencyTtlHours: number;
  uploads: { maxBytes: number; ttlMinutes: number };
  jobs: {
    /**
     * How long an unfinished scan without any job is left alone before the scan sweep fails it
     * (`VIGIL_JOB_LEASE_SECONDS`, default 900). Running jobs are not bounded by it: their
     * heartbeat says whether their worker lives.
     */
    leaseSeconds: number;
    /** A running job whose heartbeat is older than this is handed to another worker (`VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS`, default 60). */
    heartbeatTimeoutSeconds: number;
    pollingSeconds: number;
    concurrency: number;
    /**
     * Scheduling priority (nice, 0 to 19) of scan work (`VIGIL_WORKER_NICE`, default 10): a
     * `vigil worker` process runs at it, so that API requests and the database come first for the
     * CPU. 0 leaves priorities alone.
     */
    nice: number;
    /**
     * Analysis time each Solidity file of a scan may take, parsing excluded, in milliseconds
     * (`VIGIL_SCAN_FILE_BUDGET_MS`, default 2000; 0 = no limit): a file over it is analysed by the
     * cheap passes only, and the scan's messages and status name it.
     */
    fileBudgetMs: number;
  };
  llm: { baseUrl: string; apiKey: string | null; model: string } | null;
  /** The repository assistant (v0 AI ask). */
  ai: {
    /** Asks per user and minute (`VIGIL_AI_RATE_LIMIT_PER_MINUTE`, default 10) and bucket size (`VIGIL_AI_RATE_LIMIT_BURST`). */
    rateLimit: { requestsPerMinute: number; burst: number };
    /** Model tokens a company may spend per calendar month (`VIGIL_AI_MONTHLY_TOKEN_BUDGET`; 0 = no limit). */
    monthlyTokenBudget: number;
    /** Estimated tokens of earlier turns sent with a question (`VIGIL_AI_HISTORY_TOKENS`). */
    historyTokens: number;
    /** Estimated tokens of retrieved repository data sent with a question (`VIGIL_AI_CONTEXT_TOKENS`). */
    contextTokens: number;
    /** Largest answer in tokens (`VIGIL_AI_MAX_ANSWER_TOKENS`). */
    maxAnswerTokens: number;
    /** Timeout of one model attempt (`VIGIL_LLM_TIMEOUT_MS`) and retries on 429, 5xx and timeouts (`VIGIL_LLM_MAX_RETRIES`). */
    timeoutMs: number;
    maxRetries: number;
    /** First backoff delay between retries (`VIGIL_LLM_RETRY_DELAY_MS`, doubled per retry). */
    retryDelayMs: number;
  };
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
  notifications: {
    /** SMTP server for notification e-mails (`VIGIL_SMTP_URL`, `smtp://user:pass@host:587`); null: no e-mail. */
    smtpUrl: string | null;
    /** Sender of notification e-mails (`VIGIL_SMTP_FROM`). */
    smtpFrom: string;
    /** Timeout of one e-mail or webhook delivery (`VIGIL_NOTIFY_TIMEOUT_MS`). */
    timeoutMs: number;
  };
  /**
   * Destinations outbound calls may reach although they are private, loopback or link-local
   * (`VIGIL_OUTBOUND_ALLOW`: host names, addresses and CIDR ranges, comma or space separated).
   */
  outbound: { allow: { hosts: string[]; cidrs: string[] } };
  /**
   * Who may read `/metrics`: on the API port, callers presenting `VIGIL_METRICS_TOKEN` as a
   * bearer token (at least 16 characters); on `VIGIL_METRICS_PORT`, a second listener bound to
   * 127.0.0.1, anyone who can reach this machine's loopback. With neither, no one.
   */
  metrics: { token: string | null; port: number | null };
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

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Parses `VIGIL_OUTBOUND_ALLOW`: entries separated by commas or spaces, each a host name
 * (`tracker.corp.example`, exact), an address (`10.0.0.5`, `::1`) or a CIDR range (`10.0.0.0/8`).
 */
export function parseOutboundAllow(raw: string | null): { hosts: string[]; cidrs: string[] } {
  const hosts: string[] = [];
  const cidrs: string[] = [];
  for (const entry of (raw ?? '').split(/[\s,]+/).filter(Boolean)) {
    const bare = entry.replace(/^\[|\](?=\/|$)/g, '');
    if (ipaddr.isValidCIDR(bare)) {
      const [address, bits] = ipaddr.parseCIDR(bare);
      if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
        cidrs.push(`${(address as ipaddr.IPv6).toIPv4Address().toString()}/${Math.max(0, bits - 96)}`);
      } else {
        cidrs.push(`${address.toString()}/${bits}`);
      }
    } else if (ipaddr.isValid(bare) && !/^\d+$/.test(bare)) {
      const address = ipaddr.process(bare);
      cidrs.push(`${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`);
    } else if (HOST_NAME.test(entry.toLowerCase()) && !/^[\d.]+$/.test(entry)) {
      hosts.push(entry.toLowerCase());
    } else {
      throw new ConfigError(
        `VIGIL_OUTBOUND_ALLOW: "${entry}" is neither a host name, an address nor a CIDR range (e.g. 10.0.0.0/8).`,
      );
    }
  }
  return { hosts, cidrs };
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

function loadAiConfig(env: Env): Config['ai'] {
  const rpm = readInt(env, 'VIGIL_AI_RATE_LIMIT_PER_MINUTE', 10, 1);
  return {
    rateLimit: { requestsPerMinute: rpm, burst: readInt(env, 'VIGIL_AI_RATE_LIMIT_BURST', rpm, 1) },
    monthlyTokenBudget: readInt(env, 'VIGIL_AI_MONTHLY_TOKEN_BUDGET', 2_000_000, 0),
    historyTokens: readInt(env, 'VIGIL_AI_HISTORY_TOKENS', 2_000, 0),
    contextTokens: readInt(env, 'VIGIL_AI_CONTEXT_TOKENS', 6_000, 500),
    maxAnswerTokens: readInt(env, 'VIGIL_AI_MAX_ANSWER_TOKENS', 1_000, 16),
    timeoutMs: readInt(env, 'VIGIL_LLM_TIMEOUT_MS', 60_000, 100),
    maxRetries: readInt(env, 'VIGIL_LLM_MAX_RETRIES', 2, 0),
    retryDelayMs: readInt(env, 'VIGIL_LLM_RETRY_DELAY_MS', 500, 0),
  };
}

function readSmtpUrl(env: Env): string | null {
  const url = readString(env, 'VIGIL_SMTP_URL');
  if (url && !/^smtps?:\/\//.test(url)) {
    throw new ConfigError('VIGIL_SMTP_URL must start with smtp:// or smtps://.');
  }
  return url;
}

/** `VIGIL_METRICS_TOKEN` and `VIGIL_METRICS_PORT` (see `Config.metrics`). */
export function loadMetricsConfig(env: Env): Config['metrics'] {
  const token = readString(env, 'VIGIL_METRICS_TOKEN');
  if (token !== null && (token.length < 16 || /\s/.test(token))) {
    throw new ConfigError(
      'VIGIL_METRICS_TOKEN must be at least 16 characters without spaces (e.g. openssl rand -hex 24).',
    );
  }
  const port = readInt(env, 'VIGIL_METRICS_PORT', -1, 1);
  if (port > 65_535) throw new ConfigError(`VIGIL_METRICS_PORT must be a port (1-65535); got "${port}".`);
  return { token, port: port === -1 ? null : port };
}

/** The address clients reach this service at: VIGIL_PUBLIC_URL, else this machine's port. */
export function publicBaseUrl(config: Pick<Config, 'publicUrl' | 'port'>): string {
  return config.publicUrl ?? `http://localhost:${config.port}`;
}

/**
 * Where reports link rule pages: `/docs/rules` of the public server (`VIGIL_PUBLIC_URL`), from the
 * environment alone (the offline engine command needs no other setting). Without a public address
 * reports link the repository's rule catalogue instead (never this machine's port).
 */
export function loadRulesUrl(env: Env): string | undefined {
  const publicUrl = readString(env, 'VIGIL_PUBLIC_URL')?.replace(/\/+$/, '');
  return publicUrl ? `${publicUrl}/docs/rules` : undefined;
}

/** A per-file analysis budget as the engine takes it: milliseconds, `Infinity` for 0 (no limit). */
export function engineFileBudgetMs(ms: number): number {
  return ms > 0 ? ms : Number.POSITIVE_INFINITY;
}

/** `VIGIL_TRUST_PROXY`: `true`/`false`, a hop count, or a list of addresses and CIDR ranges. */
function readTrustProxy(value: string | null): boolean | number | string[] {
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const entry of list) {
    const [address, bits, ...rest] = entry.split('/');
    if (
      rest.length > 0 ||
      !address ||
      isIP(address) === 0 ||
      (bits !== undefined && !/^\d{1,3}$/.test(bits))
    ) {
      throw new ConfigError(
        `VIGIL_TRUST_PROXY: "${entry}" is not an address or CIDR range (use true, a hop count, or addresses and ranges separated by commas).`,
      );
    }
  }
  return list;
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
  const burst = readInt(env, 'VIGIL_RATE_LIMIT_BURST', rpm, 1);
  // Failed credential checks follow the request limit unless they have one of their own.
  const failuresPerMinute = readInt(env, 'VIGIL_AUTH_FAILURES_PER_MINUTE', rpm, 1);
  const failuresBurst = readString(env, 'VIGIL_AUTH_FAILURES_PER_MINUTE') ? failuresPerMinute : burst;
  return {
    port: readInt(env, 'PORT', 3000, 0),
    host: readString(env, 'HOST') ?? '127.0.0.1',
    dataDir,
    database: databaseUrl
      ? { kind: 'postgres', url: databaseUrl, poolSize: readInt(env, 'VIGIL_DB_POOL_SIZE', 10, 1) }
      : {
          kind: 'embedded',
          dataDir,
          poolSize: readInt(env, 'VIGIL_DB_POOL_SIZE', 10, 1),
          port: readInt(env, 'VIGIL_EMBEDDED_PG_PORT', 0, 0),
        },
    publicUrl: readString(env, 'VIGIL_PUBLIC_URL')?.replace(/\/+$/, '') ?? null,
    secretKey: secret ? parseSecretKey(secret) : null,
    adminToken: readString(env, 'VIGIL_ADMIN_TOKEN'),
    objectStore: readString(env, 'VIGIL_OBJECT_STORE') ?? `file:${path.join(dataDir, 'objects')}`,
    redisUrl: readString(env, 'REDIS_URL'),
    redisPrefix: readString(env, 'VIGIL_REDIS_PREFIX') ?? 'vigil:',
    logLevel: readString(env, 'LOG_LEVEL') ?? 'info',
    bodyLimitBytes: readInt(env, 'VIGIL_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    credentialCacheSize: readInt(env, 'VIGIL_CREDENTIAL_CACHE_SIZE', 10_000, 0),
    rateLimit: { requestsPerMinute: rpm, burst },
    credentialThrottle: {
      requestsPerMinute: failuresPerMinute,
      burst: readInt(env, 'VIGIL_AUTH_FAILURES_BURST', failuresBurst, 1),
    },
    sessionTtlHours: readInt(env, 'VIGIL_SESSION_TTL_HOURS', 12, 1),
    trustProxy: readTrustProxy(readString(env, 'VIGIL_TRUST_PROXY')),
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
      heartbeatTimeoutSeconds: readInt(env, 'VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS', 60, 5),
      pollingSeconds: readInt(env, 'VIGIL_JOB_POLL_SECONDS', 1, 1),
      concurrency: readInt(env, 'VIGIL_WORKER_CONCURRENCY', 2, 1),
      nice: Math.min(readInt(env, 'VIGIL_WORKER_NICE', 10, 0), 19),
      fileBudgetMs: readInt(env, 'VIGIL_SCAN_FILE_BUDGET_MS', 2_000, 0),
    },
    llm: loadLlmConfig(env),
    ai: loadAiConfig(env),
    trackers: {
      timeoutMs: readInt(env, 'VIGIL_TRACKER_TIMEOUT_MS', 10_000, 100),
      reconcileWindowMs: readInt(env, 'VIGIL_TRACKER_RECONCILE_WINDOW_MS', 120_000, 0),
      exportLeaseSeconds: readInt(env, 'VIGIL_TICKET_EXPORT_LEASE_SECONDS', 300, 1),
    },
    shutdownTimeoutMs: readInt(env, 'VIGIL_SHUTDOWN_TIMEOUT_MS', 30_000, 0),
    notifications: {
      smtpUrl: readSmtpUrl(env),
      smtpFrom: readString(env, 'VIGIL_SMTP_FROM') ?? 'Vigil <notifications@vigil.localhost>',
      timeoutMs: readInt(env, 'VIGIL_NOTIFY_TIMEOUT_MS', 10_000, 100),
    },
    outbound: { allow: parseOutboundAllow(readString(env, 'VIGIL_OUTBOUND_ALLOW')) },
    metrics: loadMetricsConfig(env),
  };
}
