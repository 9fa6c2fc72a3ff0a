import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companyMembers, platformPermissions, users, userTokens } from '../../db/schema/index.ts';

export type UserRow = typeof users.$inferSelect;

/** SQL of platform administration: users, their company membership, permissions and tokens. */
export function adminRepo(db: Db) {
  return {
    /** The number of users (any state). */
    async countUsers(): Promise<number> {
      const [row] = await db.select({ count: sql<number>`count(*)::int` }).from(users);
      return row?.count ?? 0;
    },

    async userExists(userId: string): Promise<boolean> {
      const [row] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId));
      return row !== undefined;
    },

    /** Inserts a user; throws the database's unique violation for a taken username. */
    async insertUser(values: typeof users.$inferInsert): Promise<UserRow> {
      const [row] = await db.insert(users).values(values).returning();
      return row!;
    },

    async insertCompanyMember(values: typeof companyMembers.$inferInsert): Promise<void> {
      await db.insert(companyMembers).values(values);
    },

    async insertPermissions(userId: string, permissions: string[]): Promise<void> {
      if (permissions.length === 0) return;
      await db.insert(platformPermissions).values(permissions.map((permission) => ({ userId, permission })));
    },

    async insertUserToken(values: typeof userTokens.$inferInsert) {
      const [row] = await db.insert(userTokens).values(values).returning();
      return row!;
    },

    /** Revokes the user's token if it is not revoked yet; false when there was nothing to revoke. */
    async revokeUserToken(userId: string, tokenId: string, at: Date): Promise<boolean> {
      const rows = await db
        .update(userTokens)
        .set({ revokedAt: at })
        .where(
          sql`${userTokens.id} = ${tokenId} and ${userTokens.userId} = ${userId} and ${userTokens.revokedAt} is null`,
        )
        .returning({ id: userTokens.id });
      return rows.length > 0;
    },
  };
}
