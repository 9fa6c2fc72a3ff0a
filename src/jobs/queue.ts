import os from 'node:os';
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Database, Tx } from '../db/client.ts';

/** What a job handler gets besides its payload. */
export interface JobContext {
  jobId: string;
  /** How many times this job ran before (0 on the first run). */
  retryCount: number;
  /** Whether this run is the job's last attempt: if it fails, the job is not retried. */
  finalAttempt: boolean;
  /** Aborted when the worker shuts down: a handler stops at its next safe point and throws. */
  signal: AbortSignal;
  log: Logger;
}

/** Runs one job. Handlers must be idempotent: a job can run more than once. */
export type JobHandler<P> = (payload: P, context: JobContext) => Promise<void>;

/** What the queue knows of a job whatever its payload: its name, version and retry policy. */
export interface JobSpec {
  name: string;
  /** The version of the payload; the queue writes it with every job it sends (`v`). */
  version: number;
  payload: TSchema;
  /** Attempts after the first failure (or after its worker died: its heartbeat stopped). Default 3. */
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Upper bound of one run, whatever its heartbeat (pg-boss fails it after this long). */
  leaseSeconds?: number;
  /** A cron expression (UTC) for scheduled jobs. */
  schedule?: string;
}

/** The spec of a job whose payload has the schema `S`. */
export interface JobSpecOf<S extends TSchema> extends JobSpec {
  payload: S;
}

/**
 * A job taken from the queue, once its data was checked: either a run of its handler, or the
 * reason it is refused (it then fails at once, without retries).
 */
export type TakenJob =
  | { ok: true; run: (context: JobContext) => Promise<void> }
  | { ok: false; reason: string };

/** A job of a registry: its spec and the binding of its handler to the worker's dependencies `D`. */
export interface RegisteredJob<D> extends JobSpec {
  /** Binds the handler to `deps`; the result checks a job's stored data and runs it. */
  bind(deps: D): (data: unknown) => TakenJob;
}

/** A job's declaration: name, version, payload schema, retry policy and handler. */
export interface JobDefinition<S extends TSchema, D> extends JobSpec {
  payload: S;
  /**
   * Turns the payload of an earlier `version` into one of this version, or returns undefined
   * when it cannot. Without it a job written by an earlier version is refused.
   */
  upgrade?: (version: number, payload: Record<string, unknown>) => unknown;
  /** Builds the handler from the worker's dependencies (each job names the ones it needs). */
  handler: (deps: D) => JobHandler<Static<S>>;
}

/** A declared job: its definition, usable by `enqueue` and in a registry. */
export interface Job<S extends TSchema, D> extends JobDefinition<S, D>, RegisteredJob<D> {
  payload: S;
}

/** The default of `retryLimit`. */
export const DEFAULT_RETRY_LIMIT = 3;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a job's stored data (`{ v, ...payload }`) against its definition: the version must be
 * this definition's (or an earlier one it can upgrade) and the payload must match the schema.
 */
export function decodeJobData<S extends TSchema>(
  definition: Pick<JobDefinition<S, never>, 'name' | 'version' | 'payload' | 'upgrade'>,
  data: unknown,
): { ok: true; payload: Static<S> } | { ok: false; reason: string } {
  if (!isRecord(data)) return { ok: false, reason: 'the job data is not an object' };
  const { v: version, ...stored } = data;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    return { ok: false, reason: 'the job data carries no payload version' };
  }
  if (version > definition.version) {
    return {
      ok: false,
      reason: `payload version ${version} is newer than this worker's version ${definition.version}`,
    };
  }
  let payload: unknown = stored;
  if (version < definition.version) {
    payload = definition.upgrade?.(version, stored);
    if (payload === undefined) {
      return {
        ok: false,
        reason: `payload version ${version} is older than version ${definition.version} and cannot be upgraded`,
      };
    }
  }
  if (!Value.Check(definition.payload, payload)) {
    const [first] = Value.Errors(definition.payload, payload);
    const where = first ? ` (${first.path || '/'}: ${first.message})` : '';
    return {
      ok: false,
      reason: `the payload does not match the schema of version ${definition.version}${where}`,
    };
  }
  return { ok: true, payload };
}

/** Declares a job: its payload type is inferred from the schema, its dependencies from the handler. */
export function defineJob<S extends TSchema, D = unknown>(definition: JobDefinition<S, D>): Job<S, D> {
  return {
    ...definition,
    bind(deps) {
      const handle = definition.handler(deps);
      return (data) => {
        const decoded = decodeJobData(definition, data);
        if (!decoded.ok) return decoded;
        return { ok: true, run: (context) => handle(decoded.payload, context) };
      };
    },
  };
}

export interface EnqueueOptions {
  /** At most one waiting job with this key at a time. */
  singletonKey?: string;
  startAfterSeconds?: number;
}

export interface JobQueue<D = unknown> {
  /** Creates the queues; with `supervise` this process also runs maintenance and schedules. */
  start(options: { supervise: boolean }): Promise<void>;
  /** Enqueues a job; given a transaction, the job exists only if the transaction commits. */
  enqueue<S extends TSchema>(
    definition: JobSpecOf<S>,
    payload: Static<S>,
    options?: EnqueueOptions & { tx?: Tx },
  ): Promise<string | null>;
  /** Starts `concurrency` workers for each job of the queue, their handlers bound to `deps`. */
  work(deps: D, options: { concurrency: number; pollingSeconds: number }): Promise<void>;
  /** Stops taking jobs, aborts running handlers' signals after `timeoutMs`, waits for them. */
  stop(options: { timeoutMs: number }): Promise<void>;
}

interface JobQueueDeps<D> {
  database: Database;
  /** The jobs of this queue (src/jobs/registry.ts): their queues are created at start. */
  jobs: readonly RegisteredJob<D>[];
  log: Logger;
  leaseSeconds: number;
  /** A running job whose heartbeat is older than this is handed to another worker (default 60). */
  heartbeatTimeoutSeconds?: number;
}

function isInstallRace(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === '42P06' || code === '42P07' || code === '42710' || code === '40P01';
}

/**
 * Creates a queue; two processes starting at once (a server and `vigil seed demo`) can deadlock
 * in pg-boss's queue creation (a partition per queue), so a deadlock victim tries again.
 */
async function createQueueOnce(boss: PgBoss, name: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await boss.createQueue(name);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!(code === '40P01' || code === '23505' || code === '42P07') || attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    }
  }
}

/** pg-boss refuses expirations of 24 hours or more. */
export const MAX_LEASE_SECONDS = 23 * 3600;

/**
 * How often a running job writes its heartbeat: a sixth of the timeout, at most every 10 s (every
 * 10 s with the default 60 s), so a worker must miss five beats in a row to be taken for dead.
 */
export function heartbeatIntervalMs(timeoutSeconds: number): number {
  return Math.min(10_000, Math.max(1000, (timeoutSeconds * 1000) / 6));
}

/**
 * How often a supervising process sweeps for stale jobs: a twelfth of the timeout, at most every
 * 5 s. A dead worker's job is handed back at most this long after its heartbeat went stale (65 s
 * after its last beat with the default 60 s timeout); a sweep is one indexed query.
 */
export function staleSweepIntervalMs(timeoutSeconds: number): number {
  return Math.min(5000, Math.max(1000, (timeoutSeconds * 1000) / 12));
}

/**
 * Fails the running jobs whose heartbeat is older than `timeoutSeconds` (their worker died): pg-boss
 * retries them on another worker, or marks them failed after their last attempt (the scan sweep then
 * fails the scan and returns its credits). A retry of a dead worker's job starts at once rather
 * than after the job's retry delay: the delay is there to let a failing dependency recover, and
 * nothing failed but the process. Rows are locked and skipped when locked, so that two sweepers
 * never fail one job twice. Returns the ids it failed.
 */
export async function sweepStaleJobs(
  database: Database,
  boss: Pick<PgBoss, 'fail'>,
  timeoutSeconds: number,
): Promise<string[]> {
  return database.transaction(async (tx) => {
    const { rows } = await tx.executeSql(
      `select j.id::text as id, j.name
         from pgboss.job j
         left join job_heartbeats h on h.job_id = j.id and h.attempt = j.retry_count
        where j.state = 'active'
          and coalesce(h.beat_at, j.started_on) < now() - make_interval(secs => $1)
        for update of j skip locked`,
      [timeoutSeconds],
    );
    for (const row of rows) {
      await boss.fail(
        String(row.name),
        String(row.id),
        { message: `no heartbeat for ${timeoutSeconds} s: its worker stopped` },
        { db: { executeSql: tx.executeSql as PgBoss.Db['executeSql'] } },
      );
      await tx.executeSql('delete from job_heartbeats where job_id = $1', [row.id]);
      await tx.executeSql(
        `update pgboss.job set start_after = now() where name = $1 and id = $2 and state = 'retry'`,
        [row.name, row.id],
      );
    }
    return rows.map((r) => String(r.id));
  });
}

/** The pg-boss queue on the service's own database. */
export function createJobQueue<D>({
  database,
  jobs,
  log,
  leaseSeconds,
  heartbeatTimeoutSeconds = 60,
}: JobQueueDeps<D>): JobQueue<D> {
  let boss: PgBoss | null = null;
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  // pg-boss settles a job (complete or fail) after its handler's promise settles; `stop` waits
  // for those statements so that the database is not closed under them.
  const bossStatements = new Set<Promise<unknown>>();
  const bossExecuteSql = ((text: string, values?: unknown[]) => {
    const statement = database.executeSql(text, values);
    bossStatements.add(statement);
    const forget = () => bossStatements.delete(statement);
    statement.then(forget, forget);
    return statement;
  }) as PgBoss.Db['executeSql'];
  const workerName = `${os.hostname()}:${process.pid}`;
  const beatEveryMs = heartbeatIntervalMs(heartbeatTimeoutSeconds);
  const timers: NodeJS.Timeout[] = [];

  async function beat(jobId: string, queue: string, attempt: number): Promise<void> {
    await database.executeSql(
      `insert into job_heartbeats (job_id, queue, attempt, worker, beat_at) values ($1, $2, $3, $4, now())
       on conflict (job_id) do update set attempt = excluded.attempt, worker = excluded.worker, beat_at = now()`,
      [jobId, queue, attempt, workerName],
    );
  }

  /**
   * Makes a job whose data its definition refuses fail for good: its retry limit is lowered to
   * the attempts made, so that the failure the handler then throws is final (no retry would read
   * the data differently). Logged as an error with the job id and the reason.
   */
  async function refuse(name: string, jobId: string, reason: string, jobLog: Logger): Promise<void> {
    jobLog.error({ reason }, 'job refused: it fails without retries');
    await database.executeSql(
      `update pgboss.job set retry_limit = retry_count where name = $1 and id = $2 and state = 'active'`,
      [name, jobId],
    );
  }

  function requireBoss(): PgBoss {
    if (!boss) throw new Error('The job queue is not started.');
    return boss;
  }

  function sendOptions(definition: JobSpec, options?: EnqueueOptions): PgBoss.SendOptions {
    return {
      retryLimit: definition.retryLimit ?? DEFAULT_RETRY_LIMIT,
      retryDelay: definition.retryDelaySeconds ?? 5,
      retryBackoff: true,
      expireInSeconds: Math.min(definition.leaseSeconds ?? leaseSeconds, MAX_LEASE_SECONDS),
      ...(options?.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(options?.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
    };
  }

  return {
    async start({ supervise }) {
      // Two processes installing pg-boss's schema at once (first start of a server and a worker)
      // collide on its CREATE SCHEMA / tables: the loser starts again once the winner is done.
      for (let attempt = 0; ; attempt++) {
        boss = new PgBoss({
          db: { executeSql: bossExecuteSql },
          schema: 'pgboss',
          supervise,
          schedule: supervise,
          migrate: true,
          maintenanceIntervalSeconds: 30,
        });
        boss.on('error', (err) => log.error({ err }, 'job queue error'));
        try {
          await boss.start();
          break;
        } catch (err) {
          await boss.stop({ graceful: false, wait: false, close: false }).catch(() => undefined);
          if (!isInstallRace(err) || attempt >= 5) throw err;
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
        }
      }
      for (const job of jobs) {
        await createQueueOnce(boss, job.name);
        if (supervise && job.schedule) {
          // A scheduled job carries its version and retry policy like a sent one.
          await boss.schedule(job.name, job.schedule, { v: job.version }, { ...sendOptions(job), tz: 'UTC' });
        }
      }
      if (supervise) {
        const b = boss;
        const sweep = async () => {
          try {
            const failed = await sweepStaleJobs(database, b, heartbeatTimeoutSeconds);
            if (failed.length > 0)
              log.warn({ jobs: failed }, 'jobs of a stopped worker handed back to the queue');
          } catch (err) {
            log.error({ err }, 'stale job sweep failed');
          }
        };
        await sweep();
        const timer = setInterval(() => void sweep(), staleSweepIntervalMs(heartbeatTimeoutSeconds));
        timer.unref();
        timers.push(timer);
      }
    },

    async enqueue(definition, payload, options) {
      // A payload is an object: the version is stored beside its fields (`{ v, ...payload }`).
      if (!isRecord(payload) || !Value.Check(definition.payload, payload)) {
        throw new Error(`Invalid payload for job ${definition.name}.`);
      }
      const send = sendOptions(definition, options);
      if (options?.tx) send.db = { executeSql: options.tx.executeSql as PgBoss.Db['executeSql'] };
      return requireBoss().send(definition.name, { ...payload, v: definition.version }, send);
    },

    async work(deps, { concurrency, pollingSeconds }) {
      const b = requireBoss();
      for (const definition of jobs) {
        const take = definition.bind(deps);
        for (let i = 0; i < concurrency; i++) {
          await b.work<unknown>(
            definition.name,
            { batchSize: 1, pollingIntervalSeconds: pollingSeconds, includeMetadata: true },
            async (taken) => {
              for (const job of taken) {
                const jobLog = log.child({ job: job.name, jobId: job.id });
                const checked = take(job.data);
                if (!checked.ok) {
                  await refuse(job.name, job.id, checked.reason, jobLog);
                  throw new Error(`job refused: ${checked.reason}`);
                }
                const context: JobContext = {
                  jobId: job.id,
                  retryCount: job.retryCount,
                  // pg-boss retries while retry_count < retry_limit; the limit is the definition's,
                  // written on the job when it was sent (or scheduled).
                  finalAttempt: job.retryCount >= job.retryLimit,
                  signal: shutdown.signal,
                  log: jobLog,
                };
                await beat(job.id, job.name, job.retryCount);
                const heartbeat = setInterval(() => {
                  beat(job.id, job.name, job.retryCount).catch((err) =>
                    context.log.warn({ err }, 'job heartbeat not written'),
                  );
                }, beatEveryMs);
                heartbeat.unref();
                const task = checked.run(context);
                running.add(task);
                try {
                  await task;
                } catch (err) {
                  context.log.warn(
                    { err, finalAttempt: context.finalAttempt },
                    context.finalAttempt
                      ? 'job failed on its last attempt'
                      : 'job failed; it will be retried',
                  );
                  throw err;
                } finally {
                  clearInterval(heartbeat);
                  running.delete(task);
                  await database
                    .executeSql('delete from job_heartbeats where job_id = $1 and worker = $2', [
                      job.id,
                      workerName,
                    ])
                    .catch(() => undefined);
                }
              }
            },
          );
        }
      }
    },

    async stop({ timeoutMs }) {
      if (!boss) return;
      const b = boss;
      boss = null;
      for (const timer of timers.splice(0)) clearInterval(timer);
      // Stop polling first; running handlers get the budget to finish, then are told to stop
      // at their next safe point so that their job fails and is retried by another worker.
      const timer = setTimeout(() => shutdown.abort(), timeoutMs);
      try {
        await b.stop({ graceful: true, wait: true, close: false, timeout: Math.max(timeoutMs, 1000) + 5000 });
        await Promise.allSettled([...running]);
        await new Promise((resolve) => setImmediate(resolve));
        await Promise.allSettled([...bossStatements]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
