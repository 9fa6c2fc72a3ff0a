import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies } from '../../db/schema/index.ts';

export type CompanyRow = typeof companies.$inferSelect;

/** SQL of companies. */
export function companiesRepo(db: Db) {
  return {
    /** Inserts a company; throws the database's unique violation for a taken handle. */
    async insert(values: typeof companies.$inferInsert): Promise<CompanyRow> {
      const [row] = await db.insert(companies).values(values).returning();
      return row!;
    },

    /** Every company, by handle. */
    async listAll(): Promise<CompanyRow[]> {
      return db.select().from(companies).orderBy(companies.handle);
    },

    async findById(companyId: string): Promise<CompanyRow | null> {
      const [row] = await db.select().from(companies).where(eq(companies.id, companyId));
      return row ?? null;
    },

    /** Changes profile fields; throws the database's unique violation for a taken handle. */
    async update(
      companyId: string,
      values: Partial<typeof companies.$inferInsert>,
    ): Promise<CompanyRow | null> {
      const [row] = await db.update(companies).set(values).where(eq(companies.id, companyId)).returning();
      return row ?? null;
    },
  };
}
