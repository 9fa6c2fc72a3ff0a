import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { companies, users } from './identity.ts';
import { notifications } from './platform.ts';

/** Channels a notification is delivered over besides the in-app list. */
export const notificationChannels = ['email', 'webhook'] as const;

/**
 * One delivery of one notification over one channel. The unique key (notification, channel) and
 * the claim (`status` pending → sending, by a conditional update) before anything is sent make a
 * delivery happen at most once, whatever the number of job runs or workers.
 */
export const notificationDeliveries = pgTable(
  'notification_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    channel: text('channel', { enum: notificationChannels }).notNull(),
    /** The company whose repository the notification comes from (its webhook's deliveries are listed by it). */
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    /**
     * pending → sending (claimed) → delivered | failed; a refused attempt goes back to pending. A
     * claim past `claimed_until` (its worker stopped) becomes `unknown` (e-mail: reported, never
     * sent again) or goes back to pending (webhook: resent with the same `X-Vigil-Delivery`).
     */
    status: text('status', { enum: ['pending', 'sending', 'delivered', 'failed', 'unknown'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    claimedAt: timestamp('claimed_at', { withTimezone: true }),
    /** End of the claim's lease: a live sender has given up its send (timeout) before this. */
    claimedUntil: timestamp('claimed_until', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    lastError: text('last_error'),
    /**
     * When a delivery job was last queued for it: at creation, and when a sweep queues one again.
     * A delivery `pending` with neither a claim nor a queued job for an hour has lost its job (its
     * retries ran out while it was not claimed) and is queued again.
     */
    enqueuedAt: timestamp('enqueued_at', { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('notification_deliveries_notification_channel_key').on(t.notificationId, t.channel),
    index('notification_deliveries_open_idx')
      .on(t.status, t.createdAt)
      .where(sql`${t.status} in ('pending', 'sending')`),
    // A company's webhook deliveries, newest first (listWebhookDeliveries).
    index('notification_deliveries_company_webhook_idx')
      .on(t.companyId, t.createdAt, t.id)
      .where(sql`${t.channel} = 'webhook'`),
  ],
);

/** What an attempt came to: the delivery's fate after it. */
export const deliveryAttemptOutcomes = [
  'delivered',
  'retrying',
  'failed_permanently',
  'gave_up',
  'unknown',
] as const;
export type DeliveryAttemptOutcome = (typeof deliveryAttemptOutcomes)[number];

/**
 * One attempt of a delivery, written when it ends (with the fenced update that ends the claim):
 * when it started and ended, the receiver's status code or the error, and the outcome —
 * `delivered`; `retrying` (refused or unanswered: sent again later); `failed_permanently` (a
 * destination the outbound policy refuses, a redirect, nothing to send to: never sent again);
 * `gave_up` (refused on the last attempt); `unknown` (an e-mail whose fate is unknown, or a
 * sender that stopped on the last attempt).
 */
export const notificationDeliveryAttempts = pgTable(
  'notification_delivery_attempts',
  {
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => notificationDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true }).notNull().defaultNow(),
    statusCode: integer('status_code'),
    error: text('error'),
    outcome: text('outcome', { enum: deliveryAttemptOutcomes }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);

/** A company's notification webhook: events are POSTed to `url`, signed with the secret. */
export const companyWebhooks = pgTable('company_webhooks', {
  companyId: uuid('company_id')
    .primaryKey()
    .references(() => companies.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  /** The signing secret, sealed with the service key (AES-256-GCM). */
  secretEnc: text('secret_enc').notNull(),
  active: boolean('active').notNull().default(true),
  createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
