import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The heartbeat of a running job attempt: written when a worker starts it, every few seconds while
 * it runs, deleted when it ends. A running job whose heartbeat is older than
 * `VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS` belongs to a dead worker and is handed to another one.
 */
export const jobHeartbeats = pgTable('job_heartbeats', {
  /** The pg-boss job id (`pgboss.job.id`; a retry keeps its id). */
  jobId: uuid('job_id').primaryKey(),
  queue: text('queue').notNull(),
  /** Which attempt beats (`retry_count` of the job when it started). */
  attempt: integer('attempt').notNull(),
  /** host:pid of the worker process. */
  worker: text('worker').notNull(),
  beatAt: timestamp('beat_at', { withTimezone: true }).notNull().defaultNow(),
});
