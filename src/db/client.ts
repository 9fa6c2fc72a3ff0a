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
   * Calls `handler` with each notification that a commit of this process sent on a notifying
   * table's channel (`vigil_reads`, `vigil_credentials`; see {@link OWN_CHANNEL_PREFIX}), once
   * per table and channel of the commit, before the statement or `commit` that committed it
   * answers: what a request changed is forgotten by this process's caches before the request
   * answers. Commits that change no notifying table (the job queue's polling, say) call nothing.
   * Other processes' commits arrive through {@link listen}. Returns the function that stops it.
   */
  onOwnNotify(handler: NotifyHandler): () => void;
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

/**
 * Receives one notification: its payload (a table's name, or `<table>:u:<user id>` and
 * `<table>:c:<company id>` for rows of one user or company; see kept-reads.ts) and its channel.
 */
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
  // Queries given to one connection at once (a `Promise.all` of reads inside a transaction, the
  // connection's `listen` sent when it opens and the first `pool.query` it is handed to) run one
  // after the other on the wire anyway: they wait here, each handed to pg from the callback of the
  // one before it, instead of in pg's internal queue, which pg@9 drops. Every query reaches pg
  // with a callback (how `pool.query` calls its connection; one without gets its promise from
  // here). A submittable (a cursor, a stream) returns synchronously and goes straight through.
  type Callback = (error: unknown, result?: unknown) => void;
  const waiting: Array<() => void> = [];
  let busy = false;
  const next = () => {
    const send = waiting.shift();
    if (send) send();
    else busy = false;
  };
  const enqueue = (config: unknown, args: unknown[], callback: Callback) => {
    const send = () => {
      try {
        named(config, [
          ...args,
          (error: unknown, result?: unknown) => {
            next();
            callback(error, result);
          },
        ]);
      } catch (error) {
        next();
        callback(error);
      }
    };
    if (busy) waiting.push(send);
    else {
      busy = true;
      send();
    }
  };
  const forward = (config: unknown, ...rest: unknown[]) => {
    if (typeof (config as { submit?: unknown } | null)?.submit === 'function') return named(config, rest);
    const last = rest[rest.length - 1];
    if (typeof last === 'function') {
      enqueue(config, rest.slice(0, -1), last as Callback);
      return undefined;
    }
    return new Promise((resolve, reject) =>
      enqueue(config, rest, (error, result) => (error ? reject(error) : resolve(result))),
    );
  };
  Reflect.set(client, 'query', forward);
}

/**
 * The notifying triggers (migration 0021) send each notification also on the channel of the
 * connection that made the change, this prefix and its backend's process id, with the payload
 * `<channel>:<table>`. Each pooled connection listens on its own, so PostgreSQL hands a
 * connection's own notifications back to it at each commit, before the commit's answer, and no
 * other session receives them.
 */
export const OWN_CHANNEL_PREFIX = 'vigil_own_';

/**
 * Makes a new pooled connection listen on its own channel (see {@link OWN_CHANNEL_PREFIX}) and
 * hand what arrives there to `dispatch`. The `listen` is the connection's first statement: every
 * later statement's own notifications are delivered. A connection whose `listen` fails is ended,
 * so that no statement commits on a connection that would not report it.
 */
function listenToOwnCommits(client: pg.PoolClient, dispatch: NotifyHandler): void {
  const pid: unknown = Reflect.get(client, 'processID');
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid)) {
    client.end().catch(() => undefined);
    return;
  }
  const channel = `${OWN_CHANNEL_PREFIX}${pid}`;
  client.on('notification', (message) => {
    if (message.channel !== channel) return;
    const payload = message.payload ?? '';
    const colon = payload.indexOf(':');
    if (colon > 0) dispatch(payload.slice(colon + 1), payload.slice(0, colon));
  });
  client.query(`listen ${channel}`).catch(() => client.end().catch(() => undefined));
}

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
  const ownHandlers = new Set<NotifyHandler>();
  const dispatchOwn: NotifyHandler = (payload, channel) => {
    for (const handler of ownHandlers) handler(payload, channel);
  };
  pool.on('connect', (client) => {
    prepareStatementsOf(client);
    listenToOwnCommits(client, dispatchOwn);
  });
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
        await client.query('commit');
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    onOwnNotify(handler) {
      ownHandlers.add(handler);
      return () => ownHandlers.delete(handler);
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
