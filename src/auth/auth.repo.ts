import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client.ts';
import {
  companyMembers,
  consoleSessions,
  platformPermissions,
  serviceKeys,
  users,
  userTokens,
} from '../db/schema/index.ts';

/** SQL for resolving credentials. */
export function authRepo(db: Db) {
  return {
    async findServiceKeyByHash(hash: string) {
      const [row] = await db.select().from(serviceKeys).where(eq(serviceKeys.hash, hash)).limit(1);
      return row ?? null;
    },

    /** Stamps a service key's last use (no credential-cache flush: see migration 0037). */
    async touchServiceKey(id: string): Promise<void> {
      await db.update(serviceKeys).set({ lastUsedAt: sql`now()` }).where(eq(serviceKeys.id, id));
    },

    async findUserTokenByHash(hash: string) {
      const [row] = await db
        .select({ token: userTokens, user: users })
        .from(userTokens)
        .innerJoin(users, eq(users.id, userTokens.userId))
        .where(eq(userTokens.hash, hash))
        .limit(1);
      return row ?? null;
    },

    async findSessionByHash(hash: string) {
      const [row] = await db
        .select({ session: consoleSessions, token: userTokens, user: users })
        .from(consoleSessions)
        .innerJoin(userTokens, eq(userTokens.id, consoleSessions.tokenId))
        .innerJoin(users, eq(users.id, consoleSessions.userId))
        .where(eq(consoleSessions.hash, hash))
        .limit(1);
      return row ?? null;
    },

    async findActiveMemberships(userId: string) {
      return (
        db
          .select({ companyId: companyMembers.companyId, role: companyMembers.role })
          .from(companyMembers)
          // Invited users act for the company only once they have joined.
          .where(
            and(
              eq(companyMembers.userId, userId),
              isNull(companyMembers.disabledAt),
              isNotNull(companyMembers.joinedAt),
            ),
          )
      );
    },

    async findPermissions(userId: string) {
      const rows = await db
        .select({ permission: platformPermissions.permission })
        .from(platformPermissions)
        .where(eq(platformPermissions.userId, userId));
      return rows.map((r) => r.permission);
    },
  };
}
