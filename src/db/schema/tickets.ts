import { index, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { companies } from './identity.ts';
import { findings } from './platform.ts';

/** A ticket in an issue tracker linked to a finding (verified, or created by an export). */
export const findingTickets = pgTable(
  'finding_tickets',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    provider: text('provider', { enum: ['tracker_a', 'tracker_b'] }).notNull(),
    integrationId: uuid('integration_id'),
    key: text('key').notNull(),
    externalId: text('external_id').notNull(),
    url: text('url').notNull(),
    title: text('title').notNull(),
    status: text('status'),
    source: text('source', { enum: ['linked', 'created'] }).notNull(),
    linkedAt: timestamp('linked_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One ticket per finding and provider: a second, different ticket is a conflict.
    uniqueIndex('finding_tickets_finding_provider_key').on(t.findingId, t.provider),
    index('finding_tickets_company_idx').on(t.companyId),
  ],
);

/**
 * An export of a finding to a tracker. The row is written before the provider is called and its
 * unique (finding, provider) constraint is the lock that prevents a second ticket.
 */
export const findingExports = pgTable(
  'finding_exports',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    findingId: uuid('finding_id')
      .notNull()
      .references(() => findings.id, { onDelete: 'cascade' }),
    provider: text('provider', { enum: ['tracker_a', 'tracker_b'] }).notNull(),
    integrationId: uuid('integration_id'),
    state: text('state', { enum: ['in_progress', 'created', 'failed', 'unknown'] }).notNull(),
    /** The issue id we chose (tracker_a) and the label we set (tracker_b), for reconciliation. */
    clientRef: jsonb('client_ref').$type<{ clientId: string; label: string }>().notNull(),
    ticketId: uuid('ticket_id'),
    error: jsonb('error').$type<{ code: string; message: string } | null>(),
    attempts: jsonb('attempts').$type<number>().notNull().default(0),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('finding_exports_finding_provider_key').on(t.findingId, t.provider)],
);
