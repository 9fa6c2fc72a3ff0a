import { and, asc, eq, inArray, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies, companyMembers, ssoEnforcementRules, users } from '../../db/schema/index.ts';
import { isoMillis, keptStatements, plainRows } from '../../db/sql.ts';
import { escapeLike, isUuid } from '../../strings.ts';
import type { ShortUserSummary } from './users.schemas.ts';
import { toShortUserSummary } from './users.views.ts';

export type UserRow = typeof users.$inferSelect;
export type MemberRow = typeof companyMembers.$inferSelect;

/**
 * The columns of a company user (`CompanyUser`), timestamps as the API writes them: the list
 * returns every user of a company at once, so it skips parsing and re-formatting them.
 */
const companyUserColumns = {
  userId: users.id,
  name: users.name,
  username: users.username,
  email: users.email,
  isActivated: users.isActivated,
  createdAt: isoMillis<string>(users.createdAt),
  isBot: users.isBot,
  companyId: companyMembers.companyId,
  avatar: users.avatar,
  isGeneratedAvatar: users.isGeneratedAvatar,
  chat_a: users.chatA,
  chat_b: users.chatB,
  timezone: users.timezone,
  memberDisabledAt: isoMillis(companyMembers.disabledAt),
  userDisabledAt: isoMillis(users.disabledAt),
  companyRole: companyMembers.role,
  invitedAt: isoMillis<string>(companyMembers.invitedAt),
  joinedAt: isoMillis(companyMembers.joinedAt),
  deletedAt: isoMillis(users.deletedAt),
};

/**
 * The company's users, built once per database handle and filter variant (prepared on each
 * connection, run by {@link plainRows}):
 * without `includeAll`, joined, enabled memberships of accounts that are neither disabled nor
 * deleted; with `q`, the name or username matches `pattern`, case-insensitively.
 */
function prepareCompanyUserList(db: Db, includeAll: boolean, withPattern: boolean) {
  const conditions: SQL[] = [eq(companyMembers.companyId, sql.placeholder('companyId'))];
  if (!includeAll) {
    conditions.push(
      isNotNull(companyMembers.joinedAt),
      isNull(companyMembers.disabledAt),
      isNull(users.disabledAt),
      isNull(users.deletedAt),
    );
  }
  if (withPattern) {
    const pattern = sql.placeholder('pattern');
    conditions.push(sql`(${users.name} ilike ${pattern} or ${users.username} ilike ${pattern})`);
  }
  return db
    .select(companyUserColumns)
    .from(companyMembers)
    .innerJoin(users, eq(users.id, companyMembers.userId))
    .where(and(...conditions))
    .orderBy(asc(sql`lower(${users.username})`), asc(users.id));
}
const companyUserLists = keptStatements<ReturnType<typeof prepareCompanyUserList>>();

/** SQL of users and their company memberships. */
export function usersRepo(db: Db) {
  return {
    /**
     * The company's users. Without `includeAll`: joined, enabled memberships of accounts that are
     * neither disabled nor deleted. `q` matches name or username, case-insensitively.
     */
    async listCompanyUsers(companyId: string, options: { includeAll: boolean; q?: string }) {
      const variant = `${options.includeAll ? 'all' : 'active'}${options.q ? '_q' : ''}`;
      const query = companyUserLists(db, variant, () =>
        prepareCompanyUserList(db, options.includeAll, !!options.q),
      );
      return plainRows(db, companyUserColumns, query, {
        companyId,
        pattern: options.q ? `%${escapeLike(options.q)}%` : undefined,
      });
    },

    async findMember(companyId: string, userId: string) {
      const [row] = await db
        .select({ user: users, member: companyMembers })
        .from(companyMembers)
        .innerJoin(users, eq(users.id, companyMembers.userId))
        .where(and(eq(companyMembers.companyId, companyId), eq(companyMembers.userId, userId)));
      return row ?? null;
    },

    async findUserById(userId: string): Promise<UserRow | null> {
      const [row] = await db.select().from(users).where(eq(users.id, userId));
      return row ?? null;
    },

    async findUserByUsername(username: string): Promise<UserRow | null> {
      const [row] = await db.select().from(users).where(sql`lower(${users.username}) = lower(${username})`);
      return row ?? null;
    },

    /** Users with this email (case-insensitively); emails are not unique, so possibly several. */
    async findUsersByEmail(email: string): Promise<UserRow[]> {
      return db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(2);
    },

    async insertUser(values: typeof users.$inferInsert): Promise<UserRow> {
      const [row] = await db.insert(users).values(values).returning();
      return row!;
    },

    async updateUser(userId: string, values: Partial<typeof users.$inferInsert>): Promise<UserRow> {
      const [row] = await db.update(users).set(values).where(eq(users.id, userId)).returning();
      return row!;
    },

    async insertMember(values: typeof companyMembers.$inferInsert): Promise<MemberRow> {
      const [row] = await db.insert(companyMembers).values(values).returning();
      return row!;
    },

    async updateMember(
      companyId: string,
      userId: string,
      values: Partial<typeof companyMembers.$inferInsert>,
    ) {
      const [row] = await db
        .update(companyMembers)
        .set(values)
        .where(and(eq(companyMembers.companyId, companyId), eq(companyMembers.userId, userId)))
        .returning();
      return row!;
    },

    /**
     * Locks the company row. Every membership change of one company takes it first, so that checks
     * such as "not the last active manager" cannot race with each other.
     */
    async lockCompany(companyId: string) {
      const [row] = await db
        .select({ id: companies.id })
        .from(companies)
        .where(eq(companies.id, companyId))
        .for('update');
      return row ?? null;
    },

    /** Joined, enabled managers whose accounts are enabled. */
    async countActiveManagers(companyId: string): Promise<number> {
      const [row] = await db
        .select({ count: sql<number>`count(*)::int` })
        .from(companyMembers)
        .innerJoin(users, eq(users.id, companyMembers.userId))
        .where(
          and(
            eq(companyMembers.companyId, companyId),
            eq(companyMembers.role, 'manager'),
            isNotNull(companyMembers.joinedAt),
            isNull(companyMembers.disabledAt),
            isNull(users.disabledAt),
            isNull(users.deletedAt),
          ),
        );
      return row?.count ?? 0;
    },

    /** The company's SSO rule for an email domain, if any. */
    async findSsoRuleForDomain(companyId: string, domain: string) {
      const [row] = await db
        .select()
        .from(ssoEnforcementRules)
        .where(
          and(
            eq(ssoEnforcementRules.companyId, companyId),
            sql`lower(${ssoEnforcementRules.domain}) = lower(${domain})`,
          ),
        );
      return row ?? null;
    },

    /** Short summaries of the given users, by id (missing ids are absent from the map). */
    async shortSummaries(userIds: Iterable<string | null>): Promise<Map<string, ShortUserSummary>> {
      const ids = [...new Set([...userIds].filter((id): id is string => id !== null))];
      if (ids.length === 0) return new Map();
      const rows = await db
        .select({
          id: users.id,
          name: users.name,
          username: users.username,
          avatar: users.avatar,
          disabledAt: users.disabledAt,
        })
        .from(users)
        .where(inArray(users.id, ids));
      return new Map(rows.map((r) => [r.id, toShortUserSummary(r)]));
    },

    /**
     * The ids of users named by id or username (case-insensitive). Unknown references resolve to
     * nothing, so a filter naming only unknown users matches no rows.
     */
    async resolveUserRefs(refs: readonly string[]): Promise<string[]> {
      const ids = refs.filter(isUuid).map((r) => r.toLowerCase());
      const names = refs.filter((r) => !isUuid(r)).map((r) => r.toLowerCase());
      if (names.length > 0) {
        const rows = await db
          .select({ id: users.id })
          .from(users)
          .where(inArray(sql`lower(${users.username})`, names));
        ids.push(...rows.map((r) => r.id));
      }
      return [...new Set(ids)];
    },
  };
}
