import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { acquireEmbeddedServer } from './embedded-server.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
/** A Drizzle database or transaction handle. */
export type Db = NodePgDatabase<Schema>;

/** Runs one SQL text with positional parameters; the shape pg-boss expects of a connection. */
export type ExecuteSql = (text: string, values?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * Whether each statement on `db` is a transaction of its own (the pool's handle, {@link
 * Database.db}) rather than part of one of {@link Database.transaction}.
 */
export function ownTransactionPerStatement(db: Db): boolean {
  return Reflect.get(db, '$client') instanceof pg.Pool;
}

/** What a transaction callback receives: Drizzle bound to the transaction, and raw SQL on it. */
export interface Tx {
  db: Db;
  executeSql: ExecuteSql;
}

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

/**
 * The one database of a process: a PostgreSQL server through a pool, either the embedded server
 * Vigil manages in its data folder or the server of `DATABASE_URL`.
 */
export interface Database {
  /** `embedded`: the server of the data folder, managed by Vigil; `postgres`: an external server. */
  readonly kind: 'embedded' | 'postgres';
  /** Drizzle outside any transaction. */
  readonly db: Db;
  /** Raw SQL outside any transaction. */
  executeSql: ExecuteSql;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True when a trivial query answers. */
  ping(): Promise<boolean>;
  /**
   * Calls `handler` after each commit of {@link transaction} that changed a table whose triggers
   * notify (`vigil_notify`, migration 0035), once per channel and payload, before `transaction`
   * resolves: the process that made a change forgets what it kept of it before it answers. Other
   * processes learn of it through {@link listen}. Returns the function that stops it.
   */
  afterCommit(handler: NotifyHandler): () => void;
  /**
   * Listens on one or more `NOTIFY` channels over a connection of its own, reconnecting when it
   * drops. `onState(true)` is called each time the listener is (again) attached to all of them:
   * notifications sent while it was not are lost, so a caller caching data must treat every
   * `false` → `true` as "everything may have changed".
   */
  listen(channels: string | readonly string[], handlers: ListenHandlers): Listener;
  /** Closes the pool (and detaches from the embedded server, stopping it if no other process uses it). */
  close(): Promise<void>;
}

/** Receives one notification: its payload (the changed table's name) and its channel. */
export type NotifyHandler = (payload: string, channel: string) => void;

export interface ListenHandlers {
  onNotify: NotifyHandler;
  onState(listening: boolean): void;
}

export interface Listener {
  close(): Promise<void>;
}

/** A `LISTEN` on a dedicated client, re-attached with backoff after a lost connection. */
function listenOn(url: string, channels: readonly string[], handlers: ListenHandlers): Listener {
  for (const channel of channels) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name "${channel}"`);
  }
  const listened = new Set(channels);
  let client: pg.Client | null = null;
  let closed = false;
  let retryMs = 100;
  let timer: NodeJS.Timeout | null = null;

  const drop = (current: pg.Client) => {
    if (client !== current) return;
    client = null;
    handlers.onState(false);
    current.end().catch(() => undefined);
    if (closed) return;
    timer = setTimeout(connect, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, 5_000);
  };

  const connect = async () => {
    timer = null;
    if (closed) return;
    const current = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    client = current;
    current.on('error', () => drop(current));
    current.on('end', () => drop(current));
    current.on('notification', (message) => {
      if (listened.has(message.channel)) handlers.onNotify(message.payload ?? '', message.channel);
    });
    try {
      await current.connect();
      for (const channel of listened) await current.query(`listen ${channel}`);
    } catch {
      drop(current);
      return;
    }
    if (closed || client !== current) {
      await current.end().catch(() => undefined);
      return;
    }
    retryMs = 100;
    handlers.onState(true);
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const current = client;
      client = null;
      if (current) {
        handlers.onState(false);
        await current.end().catch(() => undefined);
      }
    },
  };
}

export type DatabaseConfig =
  | { kind: 'embedded'; dataDir: string; poolSize: number; port?: number }
  | { kind: 'postgres'; url: string; poolSize: number };

/** Distinct statements one connection keeps prepared; texts past it run unnamed. */
export const PREPARED_STATEMENTS_PER_CONNECTION = 256;

/**
 * Makes a pooled connection prepare every query Drizzle sends (a config object with a text and
 * no name) under a name of its own on that connection: PostgreSQL then parses each distinct statement
 * once per connection and, after a few executions, reuses a generic plan instead of planning
 * every request again (the all-findings queries spend more time planning than executing).
 * Plain-text queries (pg-boss, `executeSql`, transaction control) are left unnamed. A connection
 * prepares at most {@link PREPARED_STATEMENTS_PER_CONNECTION} statements, so texts that vary
 * (lists of ids of any length) cannot grow a session without bound.
 */
function prepareStatementsOf(client: pg.PoolClient): void {
  // Statement text → its name on this connection: a map lookup per query, no hash of the text.
  const prepared = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // pg's `query` is a set of overloads (text, config, submittable; promise or callback): a wrapper
  // that forwards whatever it is given cannot be typed as every overload, so it is set with
  // `Reflect.set` (the same assignment, without claiming a type it does not have).
  const named = (config: unknown, rest: unknown[]) => {
    const c = config as { text?: unknown; name?: unknown; submit?: unknown } | null;
    if (
      c &&
      typeof c === 'object' &&
      typeof c.text === 'string' &&
      c.name === undefined &&
      c.submit === undefined
    ) {
      let name = prepared.get(c.text);
      if (name === undefined && prepared.size < PREPARED_STATEMENTS_PER_CONNECTION) {
        name = `v_${prepared.size}`;
        prepared.set(c.text, name);
      }
      if (name !== undefined) return query({ ...c, name }, ...rest);
    }
    return query(config, ...rest);
  };
  Reflect.set(client, 'query', (config: unknown, ...rest: unknown[]) => named(config, rest));
}

/**
 * Ends a transaction and reports what it notified: the notifying triggers (`vigil_notify`,
 * migration 0035) write each `<channel>:<payload>` once, a line each, into the transaction-local
 * setting `vigil.notified`, which this reads just before the commit in one simple-protocol round
 * trip.
 */
const COMMIT_REPORTING_NOTIFIED = "select current_setting('vigil.notified', true) as notified; commit";

/** The `[channel, payload]` pairs of {@link COMMIT_REPORTING_NOTIFIED}'s answer. */
function notifiedOf(answers: unknown): Array<[string, string]> {
  const first: unknown = Array.isArray(answers) ? answers[0] : undefined;
  const rows = (first as { rows?: Array<{ notified?: unknown }> } | undefined)?.rows;
  const text = rows?.[0]?.notified;
  if (typeof text !== 'string' || text === '') return [];
  const pairs: Array<[string, string]> = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) pairs.push([line.slice(0, colon), line.slice(colon + 1)]);
  }
  return pairs;
}

/**
 * The settings every pooled session starts with, in the startup packet (no round trip), for
 * statements that each read a page, a finding or a few rows by index (ADR 0019):
 * - JIT compilation off: the planner's estimate for some statements (a correlated subquery over a
 *   large table) passes `jit_above_cost`, and compiling one takes 100–300 ms, ten to a hundred
 *   times its execution;
 * - no parallel workers: under concurrent requests the workers compete for the cores the other
 *   sessions need, and each costs a process start for a statement of a few milliseconds.
 */
export const SESSION_OPTIONS = '-c jit=off -c max_parallel_workers_per_gather=0';

/**
 * The pool's connection settings for `url`: {@link SESSION_OPTIONS} after any `options` the
 * address already gives (the address's own value would otherwise replace them).
 */
export function sessionConnectionConfig(url: string): pg.PoolConfig {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: SESSION_OPTIONS };
  }
  const own = parsed.searchParams.get('options');
  if (own === null) return { connectionString: url, options: SESSION_OPTIONS };
  parsed.searchParams.set('options', `${own} ${SESSION_OPTIONS}`);
  return { connectionString: parsed.toString() };
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

function openPostgres(
  url: string,
  poolSize: number,
  kind: Database['kind'] = 'postgres',
  onClose: () => Promise<void> = async () => {},
): Database {
  const pool = new pg.Pool({
    ...sessionConnectionConfig(url),
    max: poolSize,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client that loses its connection emits 'error'; without a listener the process dies.
  pool.on('error', () => {});
  const committedHandlers = new Set<NotifyHandler>();
  pool.on('connect', (client) => prepareStatementsOf(client));
  const db = drizzlePg({ client: pool, schema });
  const executeSql: ExecuteSql = async (text, values) => {
    const result = await pool.query(text, values as unknown[] | undefined);
    return { rows: result.rows };
  };
  let closed = false;
  const listeners = new Set<Listener>();
  return {
    kind,
    db,
    executeSql,
    async transaction(fn, options) {
      const client = await pool.connect();
      try {
        await client.query(options?.isolation ? `begin isolation level ${options.isolation}` : 'begin');
        const txDb = drizzlePg({ client, schema });
        const result = await fn({
          db: txDb,
          executeSql: async (text, values) => ({
            rows: (await client.query(text, values as unknown[])).rows,
          }),
        });
        // What the transaction notified (migration 0035's `vigil.notified`, transaction-local) is
        // read in the same round trip as the commit: a failed commit reports nothing.
        const answers: unknown = await client.query(COMMIT_REPORTING_NOTIFIED);
        const notified = notifiedOf(answers);
        for (const [channel, payload] of notified)
          for (const handler of committedHandlers) handler(payload, channel);
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    afterCommit(handler) {
      committedHandlers.add(handler);
      return () => committedHandlers.delete(handler);
    },
    async ping() {
      try {
        await pool.query('select 1');
        return true;
      } catch {
        return false;
      }
    },
    listen(channels, handlers) {
      const listener = listenOn(url, typeof channels === 'string' ? [channels] : channels, handlers);
      listeners.add(listener);
      return {
        async close() {
          listeners.delete(listener);
          await listener.close();
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await Promise.all([...listeners].map((l) => l.close()));
        await pool.end();
      } finally {
        await onClose();
      }
    },
  };
}

/** Opens the configured database (without migrating it). */
/** The rows of a raw query run through Drizzle's `execute` (node-postgres answers `{rows}`). */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as T[]) : [];
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.kind === 'postgres') return openPostgres(config.url, config.poolSize);
  const server = await acquireEmbeddedServer({ dataDir: config.dataDir, port: config.port });
  return openPostgres(server.url, config.poolSize, 'embedded', () => server.release());
}

/**
 * Applies the committed migrations. On a server, an advisory lock makes concurrent starts of
 * several processes apply them once.
 */
export async function migrateDatabase(database: Database): Promise<void> {
  await database.transaction(async (tx) => {
    await tx.executeSql('select pg_advisory_xact_lock(7310431)');
    await migratePg(tx.db, { migrationsFolder });
  });
}

/** True for PostgreSQL's unique-violation error (23505), optionally of one constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = findPgError(err);
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** True for errors that mean the database cannot be reached right now. */
export function isConnectionError(err: unknown): boolean {
  const e = findPgError(err);
  const code = e?.code ?? '';
  if (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      '57P01',
      '57P03',
      '53300',
      '08006',
      '08001',
    ].includes(code)
  ) {
    return true;
  }
  // Drivers wrap the failure (Drizzle's query error around a closed pool's
  // error, neither with a code): look at the message of every error in the cause chain.
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const message = (current as { message?: unknown }).message;
    if (
      typeof message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end/i.test(
        message,
      )
    ) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

interface PgErrorLike {
  code?: string;
  constraint?: string;
  message?: string;
}

function findPgError(err: unknown): PgErrorLike | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const candidate = current as PgErrorLike & { cause?: unknown };
    if (typeof candidate.code === 'string') return candidate;
    current = candidate.cause;
  }
  return current && typeof current === 'object' ? (current as PgErrorLike) : undefined;
}
