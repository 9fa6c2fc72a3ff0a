import { bigint, date, integer, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { companies } from './identity.ts';

/**
 * Tokens the repository assistant spent per company and calendar month (UTC), as reported by the
 * model (estimated when it reports nothing). The monthly budget is checked against this row.
 */
export const aiUsage = pgTable(
  'ai_usage',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.id, { onDelete: 'cascade' }),
    /** First day of the month (UTC). */
    month: date('month').notNull(),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
    requests: integer('requests').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.month] })],
);
