import { and, asc, desc, eq, gt, inArray, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import {
  companies,
  consoleSessions,
  repositories,
  repositoryMembers,
  users,
  userTokens,
} from '../../db/schema/index.ts';

/** How many companies a platform admin's session lists (the console searches beyond that). */
const ADMIN_COMPANY_LIMIT = 200;

/** SQL for console sessions and the session's view of its user. */
export function sessionRepo(db: Db) {
  return {
    async insertSession(row: typeof consoleSessions.$inferInsert) {
      const [inserted] = await db.insert(consoleSessions).values(row).returning();
      return inserted!;
    },

    /** The user's sessions still open at `now` (not revoked, not expired, their token valid). */
    async listOpenSessions(userId: string, now: Date, limit: number) {
      return db
        .select({
          id: consoleSessions.id,
          userAgent: consoleSessions.userAgent,
          createdAt: consoleSessions.createdAt,
          expiresAt: consoleSessions.expiresAt,
          tokenPrefix: userTokens.prefix,
        })
        .from(consoleSessions)
        .innerJoin(userTokens, eq(userTokens.id, consoleSessions.tokenId))
        .where(
          and(
            eq(consoleSessions.userId, userId),
            isNull(consoleSessions.revokedAt),
            gt(consoleSessions.expiresAt, now),
            isNull(userTokens.revokedAt),
            gt(userTokens.expiresAt, now),
          ),
        )
        .orderBy(desc(consoleSessions.createdAt), desc(consoleSessions.id))
        .limit(limit);
    },

    async findSession(id: string) {
      const [row] = await db
        .select({ id: consoleSessions.id, userId: consoleSessions.userId })
        .from(consoleSessions)
        .where(eq(consoleSessions.id, id))
        .limit(1);
      return row ?? null;
    },

    /** Deletes the sessions that ended (expired or revoked) before `before`; how many. */
    async deleteSessionsEndedBefore(before: Date): Promise<number> {
      const rows = await db
        .delete(consoleSessions)
        .where(or(lt(consoleSessions.expiresAt, before), lt(consoleSessions.revokedAt, before)))
        .returning({ id: consoleSessions.id });
      return rows.length;
    },

    /** Revokes an open session; false when it was revoked already (nothing written). */
    async revokeSession(id: string, at: Date): Promise<boolean> {
      const rows = await db
        .update(consoleSessions)
        .set({ revokedAt: at })
        .where(and(eq(consoleSessions.id, id), isNull(consoleSessions.revokedAt)))
        .returning({ id: consoleSessions.id });
      return rows.length > 0;
    },

    async findTokenExpiry(tokenId: string): Promise<Date | null> {
      const [row] = await db
        .select({ expiresAt: userTokens.expiresAt })
        .from(userTokens)
        .where(eq(userTokens.id, tokenId))
        .limit(1);
      return row?.expiresAt ?? null;
    },

    async findUser(userId: string) {
      const [row] = await db
        .select({ name: users.name, email: users.email, avatar: users.avatar })
        .from(users)
        .where(eq(users.id, userId))
        .limit(1);
      return row ?? null;
    },

    /** The given companies, or (ids = null) the first companies by name, for platform readers. */
    async findCompanies(ids: string[] | null) {
      const query = db
        .select({ id: companies.id, name: companies.name, handle: companies.handle })
        .from(companies);
      if (ids === null) return query.orderBy(asc(companies.name)).limit(ADMIN_COMPANY_LIMIT);
      if (ids.length === 0) return [];
      return query.where(inArray(companies.id, ids)).orderBy(asc(companies.name));
    },

    /** Repositories the user takes part in, with the role. */
    async findRepositoryMemberships(userId: string) {
      return db
        .select({
          id: repositories.id,
          name: repositories.name,
          companyId: repositories.companyId,
          role: repositoryMembers.role,
        })
        .from(repositoryMembers)
        .innerJoin(repositories, eq(repositories.id, repositoryMembers.repositoryId))
        .where(and(eq(repositoryMembers.userId, userId), isNull(repositoryMembers.deletedAt)))
        .orderBy(asc(repositories.name));
    },
  };
}
