import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { JsonObject } from '../../json.ts';
import { companies, integrations } from './identity.ts';
import { scans } from './scanner.ts';

/**
 * One inbound source-host webhook delivery, kept for replay (7 days). The raw body is stored as
 * received (its signature was checked before the row was written); `outcome` records what was done.
 */
export const sourcehostDeliveries = pgTable(
  'sourcehost_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    integrationId: uuid('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    /** `X-GitHub-Delivery`: the sender's id of the delivery; repeated deliveries share it. */
    deliveryId: text('delivery_id').notNull(),
    /** `X-GitHub-Event`: `push`, `pull_request`, `ping`, … */
    event: text('event').notNull(),
    action: text('action'),
    repository: text('repository'),
    ref: text('ref'),
    commit: text('commit'),
    body: text('body').notNull(),
    /** `received` until processed; then `scanned`, `ignored`, `no_credits` or `failed`. */
    outcome: text('outcome', { enum: ['received', 'scanned', 'ignored', 'no_credits', 'failed'] })
      .notNull()
      .default('received'),
    reason: text('reason'),
    scanIds: uuid('scan_ids').array().notNull().default([]),
    /** The scan each watching workspace got from this delivery: a workspace is never scanned twice for it. */
    scanWorkspaces: jsonb('scan_workspaces').$type<Record<string, string>>().notNull().default({}),
    /**
     * Refusals (no credits, …) per workspace: part of that workspace's idempotency key, so that a
     * redelivery after the cause is fixed can create its scan.
     */
    refusals: jsonb('refusals').$type<Record<string, number>>().notNull().default({}),
    /** Processing runs (the first delivery and redeliveries). */
    attempts: integer('attempts').notNull().default(0),
    /** Set while one process works on the delivery; another may take it over once it has passed. */
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    processedAt: timestamp('processed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('sourcehost_deliveries_delivery_key').on(t.integrationId, t.deliveryId),
    index('sourcehost_deliveries_company_idx').on(t.companyId, t.receivedAt, t.id),
  ],
);

/**
 * The commit status a triggered scan owes its source host: one row per scan (unique), posted once
 * by a job when the scan ends.
 */
export const sourcehostCommitStatuses = pgTable(
  'sourcehost_commit_statuses',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    scanId: uuid('scan_id')
      .notNull()
      .references(() => scans.id, { onDelete: 'cascade' }),
    integrationId: uuid('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    repository: text('repository').notNull(),
    commit: text('commit').notNull(),
    /** The status context: `vigil/scan`, with the workspace prefix when the repository has several. */
    context: text('context').notNull().default('vigil/scan'),
    /** `waiting` for the scan, `pending` once enqueued, `posted` when the host accepted it, `failed` after the last retry. */
    state: text('state', { enum: ['waiting', 'pending', 'posted', 'failed'] })
      .notNull()
      .default('waiting'),
    /** What was (or will be) posted: `success`, `failure` or `error`. */
    postedState: text('posted_state'),
    description: text('description'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    /** Free-form JSON about the status; nothing writes it today, so it is `{}`. */
    details: jsonb('details').$type<JsonObject>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    postedAt: timestamp('posted_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('sourcehost_commit_statuses_scan_key').on(t.scanId)],
);
