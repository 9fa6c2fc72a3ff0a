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

/** What a transaction callback receives: Drizzle bound to the transaction, and raw SQL on it. */
export interface Tx {
  db: Db;
  executeSql: ExecuteSql;
}

export interface TransactionOptions {
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
  /**
   * The transaction changes only the job queue's own tables (pg-boss's schema, `job_heartbeats`),
   * which no read keeps: {@link Database.afterWrite} listeners are not told of its commit.
   */
  queueTablesOnly?: boolean;
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
  /**
   * Raw SQL outside any transaction that changes only the job queue's own tables (pg-boss's
   * schema, `job_heartbeats`): pg-boss's polling and bookkeeping, the heartbeats. No read keeps
   * them, so {@link afterWrite} listeners are not told: a process running job workers polls
   * every second and would otherwise forget its kept pages as often.
   */
  queueSql: ExecuteSql;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True when a trivial query answers. */
  ping(): Promise<boolean>;
  /**
   * Calls `listener` each time this process may have committed a change: after each committed
   * {@link transaction} (read-only ones too) but those of the queue's tables only, and after each
   * statement outside a transaction ({@link db}, {@link executeSql}; not {@link queueSql}) that
   * is not a plain `select`, once it has answered. Returns the function that stops the calls.
   */
  afterWrite(listener: () => void): () => void;
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

export interface ListenHandlers {
  onNotify(payload: string, channel: string): void;
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
  // Queries given to one connection at once (a `Promise.all` of reads inside a transaction) run
  // one after the other on the wire anyway: they are chained here, each sent when the one before
  // it has settled, instead of being left to pg's internal queue, which pg@9 drops. Calls with a
  // callback or a submittable (a cursor, a stream) return synchronously and go straight through.
  let tail: Promise<unknown> = Promise.resolve();
  const forward = (config: unknown, ...rest: unknown[]) => {
    const submittable = typeof (config as { submit?: unknown } | null)?.submit === 'function';
    if (submittable || rest.some((arg) => typeof arg === 'function')) return named(config, rest);
    const run = tail.then(() => named(config, rest));
    tail = run.catch(() => undefined);
    return run;
  };
  Reflect.set(client, 'query', forward);
}

/** A statement that only reads (what {@link Database.afterWrite} is not told of). */
const PLAIN_SELECT = /^\s*select\b/i;

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

function openPostgres(
  url: string,
  poolSize: number,
  kind: Database['kind'] = 'postgres',
  onClose: () => Promise<void> = async () => {},
): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle client that loses its connection emits 'error'; without a listener the process dies.
  pool.on('error', () => {});
  pool.on('connect', prepareStatementsOf);
  const db = drizzlePg({ client: pool, schema });
  const writeListeners = new Set<() => void>();
  const wrote = () => {
    for (const listener of writeListeners) listener();
  };
  // A statement on the pool outside a transaction commits on its own: once it has answered, a
  // change it made is committed (Drizzle's `db`, `executeSql` and pg-boss all come through here).
  // pg's own `query` is looked up on the prototype at each call, so that instrumentation of
  // `pg.Pool.prototype.query` (the kept reads' plan test records statements so) still sees them.
  Reflect.set(pool, 'query', (config: unknown, ...rest: unknown[]) => {
    const result: unknown = Reflect.apply(pg.Pool.prototype.query, pool, [config, ...rest]);
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text !== 'string' || PLAIN_SELECT.test(text) || !(result instanceof Promise)) return result;
    return result.then((answer) => {
      wrote();
      return answer;
    });
  });
  const executeSql: ExecuteSql = async (text, values) => {
    const result = await pool.query(text, values as unknown[] | undefined);
    return { rows: result.rows };
  };
  const queueSql: ExecuteSql = async (text, values) => {
    const result: pg.QueryResult = await Reflect.apply(pg.Pool.prototype.query, pool, [text, values]);
    return { rows: result.rows };
  };
  let closed = false;
  const listeners = new Set<Listener>();
  return {
    kind,
    db,
    executeSql,
    queueSql,
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
        await client.query('commit');
        if (!options?.queueTablesOnly) wrote();
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    afterWrite(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
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
