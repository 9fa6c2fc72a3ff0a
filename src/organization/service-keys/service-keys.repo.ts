import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { serviceKeys } from '../../db/schema/index.ts';

export type ServiceKeyRow = typeof serviceKeys.$inferSelect;

/** SQL of organization service keys. */
export function serviceKeysRepo(db: Db) {
  return {
    async insert(values: typeof serviceKeys.$inferInsert): Promise<ServiceKeyRow> {
      const [row] = await db.insert(serviceKeys).values(values).returning();
      return row!;
    },

    /** The company's keys, newest first. */
    async listByCompany(companyId: string): Promise<ServiceKeyRow[]> {
      return db
        .select()
        .from(serviceKeys)
        .where(eq(serviceKeys.companyId, companyId))
        .orderBy(desc(serviceKeys.createdAt));
    },

    async findInCompany(companyId: string, keyId: string): Promise<ServiceKeyRow | null> {
      const [row] = await db
        .select()
        .from(serviceKeys)
        .where(and(eq(serviceKeys.id, keyId), eq(serviceKeys.companyId, companyId)));
      return row ?? null;
    },

    /** Revokes the key if it is not revoked yet; null when it does not exist or was already revoked. */
    async revoke(companyId: string, keyId: string, at: Date): Promise<ServiceKeyRow | null> {
      const [row] = await db
        .update(serviceKeys)
        .set({ revokedAt: at })
        .where(
          and(eq(serviceKeys.id, keyId), eq(serviceKeys.companyId, companyId), isNull(serviceKeys.revokedAt)),
        )
        .returning();
      return row ?? null;
    },
  };
}
