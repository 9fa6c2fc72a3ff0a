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
  /** Aborted when the worker shuts down: a handler stops at its next safe point and throws. */
  signal: AbortSignal;
  log: Logger;
}

/** A typed job: its name, payload schema and retry policy. Handlers are registered separately. */
export interface JobDefinition<S extends TSchema = TSchema> {
  name: string;
  version: number;
  payload: S;
  /** Attempts after the first failure (or after its worker died: its heartbeat stopped). */
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Upper bound of one run, whatever its heartbeat (pg-boss fails it after this long). */
  leaseSeconds?: number;
  /** A cron expression (UTC) for scheduled jobs. */
  schedule?: string;
}

/** Declares a job definition with its payload type inferred from the schema. */
export function defineJob<S extends TSchema>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

/** A handler for a job definition. Handlers must be idempotent: a job can run more than once. */
export interface JobRegistration<S extends TSchema = TSchema> {
  definition: JobDefinition<S>;
  handler(payload: Static<S>, context: JobContext): Promise<void>;
}

/** Pairs a definition with its handler, typing the payload. */
export function handleJob<S extends TSchema>(
  definition: JobDefinition<S>,
  handler: (payload: Static<S>, context: JobContext) => Promise<void>,
): JobRegistration {
  return { definition, handler } as unknown as JobRegistration;
}

export interface EnqueueOptions {
  /** At most one waiting job with this key at a time. */
  singletonKey?: string;
  startAfterSeconds?: number;
}

export interface JobQueue {
  /** Creates the queues; with `supervise` this process also runs maintenance and schedules. */
  start(options: { supervise: boolean }): Promise<void>;
  /** Enqueues a job; given a transaction, the job exists only if the transaction commits. */
  enqueue<S extends TSchema>(
    definition: JobDefinition<S>,
    payload: Static<S>,
    options?: EnqueueOptions & { tx?: Tx },
  ): Promise<string | null>;
  /** Starts `concurrency` workers for each registration. */
  work(
    registrations: JobRegistration[],
    options: { concurrency: number; pollingSeconds: number },
  ): Promise<void>;
  /** Stops taking jobs, aborts running handlers' signals after `timeoutMs`, waits for them. */
  stop(options: { timeoutMs: number }): Promise<void>;
}

interface JobQueueDeps {
  database: Database;
  definitions: JobDefinition[];
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
export function createJobQueue({
  database,
  definitions,
  log,
  leaseSeconds,
  heartbeatTimeoutSeconds = 60,
}: JobQueueDeps): JobQueue {
  let boss: PgBoss | null = null;
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
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

  function requireBoss(): PgBoss {
    if (!boss) throw new Error('The job queue is not started.');
    return boss;
  }

  function sendOptions(definition: JobDefinition, options?: EnqueueOptions): PgBoss.SendOptions {
    return {
      retryLimit: definition.retryLimit ?? 3,
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
          db: { executeSql: database.executeSql as PgBoss.Db['executeSql'] },
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
      for (const definition of definitions) {
        await createQueueOnce(boss, definition.name);
        if (supervise && definition.schedule) {
          await boss.schedule(definition.name, definition.schedule, {}, { tz: 'UTC' });
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
      if (!Value.Check(definition.payload, payload)) {
        throw new Error(`Invalid payload for job ${definition.name}.`);
      }
      const send = sendOptions(definition, options);
      if (options?.tx) send.db = { executeSql: options.tx.executeSql as PgBoss.Db['executeSql'] };
      return requireBoss().send(definition.name, { v: definition.version, ...(payload as object) }, send);
    },

    async work(registrations, { concurrency, pollingSeconds }) {
      const b = requireBoss();
      for (const { definition, handler } of registrations) {
        for (let i = 0; i < concurrency; i++) {
          await b.work<Record<string, unknown>>(
            definition.name,
            { batchSize: 1, pollingIntervalSeconds: pollingSeconds, includeMetadata: true },
            async (jobs) => {
              for (const job of jobs) {
                const { v: _version, ...payload } = job.data;
                const context: JobContext = {
                  jobId: job.id,
                  retryCount: job.retryCount,
                  signal: shutdown.signal,
                  log: log.child({ job: job.name, jobId: job.id }),
                };
                await beat(job.id, job.name, job.retryCount);
                const heartbeat = setInterval(() => {
                  beat(job.id, job.name, job.retryCount).catch((err) =>
                    context.log.warn({ err }, 'job heartbeat not written'),
                  );
                }, beatEveryMs);
                heartbeat.unref();
                const task = handler(payload, context);
                running.add(task);
                try {
                  await task;
                } catch (err) {
                  context.log.warn({ err }, 'job failed; it will be retried if attempts remain');
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
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
