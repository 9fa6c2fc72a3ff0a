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
  /** Attempts after the first failure (or after a lease runs out because a worker died). */
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Lease: a job running longer than this is taken over by another worker. */
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
}

/** The pg-boss queue on the service's own database (PGlite or PostgreSQL). */
export function createJobQueue({ database, definitions, log, leaseSeconds }: JobQueueDeps): JobQueue {
  let boss: PgBoss | null = null;
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();

  function requireBoss(): PgBoss {
    if (!boss) throw new Error('The job queue is not started.');
    return boss;
  }

  function sendOptions(definition: JobDefinition, options?: EnqueueOptions): PgBoss.SendOptions {
    return {
      retryLimit: definition.retryLimit ?? 3,
      retryDelay: definition.retryDelaySeconds ?? 5,
      retryBackoff: true,
      expireInSeconds: definition.leaseSeconds ?? leaseSeconds,
      ...(options?.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(options?.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
    };
  }

  return {
    async start({ supervise }) {
      boss = new PgBoss({
        db: { executeSql: database.executeSql as PgBoss.Db['executeSql'] },
        schema: 'pgboss',
        supervise,
        schedule: supervise,
        migrate: true,
        maintenanceIntervalSeconds: 30,
      });
      boss.on('error', (err) => log.error({ err }, 'job queue error'));
      await boss.start();
      for (const definition of definitions) {
        await boss.createQueue(definition.name);
        if (supervise && definition.schedule) {
          await boss.schedule(definition.name, definition.schedule, {}, { tz: 'UTC' });
        }
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
                const task = handler(payload, context);
                running.add(task);
                try {
                  await task;
                } catch (err) {
                  context.log.warn({ err }, 'job failed; it will be retried if attempts remain');
                  throw err;
                } finally {
                  running.delete(task);
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
