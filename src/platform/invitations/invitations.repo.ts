import { and, desc, eq, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { companies, companyInvitations, companyMembers, users } from '../../db/schema/index.ts';

export type InvitationRow = typeof companyInvitations.$inferSelect;
type InvitationState = InvitationRow['state'];

/** An invitation with the company it is for. */
export interface InvitationWithCompany {
  invitation: InvitationRow;
  company: { id: string; name: string; handle: string };
}

/** SQL of company invitations. */
export function invitationsRepo(db: Db) {
  const withCompany = () =>
    db
      .select({
        invitation: companyInvitations,
        company: { id: companies.id, name: companies.name, handle: companies.handle },
      })
      .from(companyInvitations)
      .innerJoin(companies, eq(companies.id, companyInvitations.companyId));

  return {
    async insert(values: typeof companyInvitations.$inferInsert): Promise<InvitationRow> {
      const [row] = await db.insert(companyInvitations).values(values).returning();
      return row!;
    },

    async find(invitationId: string): Promise<InvitationWithCompany | null> {
      const [row] = await withCompany().where(eq(companyInvitations.id, invitationId));
      return row ?? null;
    },

    /** Locks one invitation row, so that two answers to it cannot both apply. */
    async lock(invitationId: string): Promise<InvitationRow | null> {
      const [row] = await db
        .select()
        .from(companyInvitations)
        .where(eq(companyInvitations.id, invitationId))
        .for('update');
      return row ?? null;
    },

    /** The company's invitations, newest first, optionally in one stored state. */
    async listForCompany(companyId: string, state?: InvitationState): Promise<InvitationWithCompany[]> {
      const conditions: SQL[] = [eq(companyInvitations.companyId, companyId)];
      if (state) conditions.push(eq(companyInvitations.state, state));
      return withCompany()
        .where(and(...conditions))
        .orderBy(desc(companyInvitations.createdAt), desc(companyInvitations.id));
    },

    /** Pending invitations naming this username (any company), newest first. */
    async listPendingForUsername(username: string): Promise<InvitationWithCompany[]> {
      return withCompany()
        .where(
          and(
            eq(companyInvitations.state, 'pending'),
            sql`lower(${companyInvitations.username}) = lower(${username})`,
          ),
        )
        .orderBy(desc(companyInvitations.createdAt), desc(companyInvitations.id));
    },

    /**
     * Marks the company's pending invitations past their expiry as `expired`, so that they stop
     * holding the "one open invitation per name" index.
     */
    async expirePending(companyId: string, at: Date): Promise<void> {
      await db
        .update(companyInvitations)
        .set({ state: 'expired', mailSecretSealed: null })
        .where(
          and(
            eq(companyInvitations.companyId, companyId),
            eq(companyInvitations.state, 'pending'),
            sql`${companyInvitations.expiresAt} <= ${at}`,
          ),
        );
    },

    async update(invitationId: string, values: Partial<typeof companyInvitations.$inferInsert>) {
      const [row] = await db
        .update(companyInvitations)
        .set(values)
        .where(eq(companyInvitations.id, invitationId))
        .returning();
      return row ?? null;
    },

    /**
     * Whether a user of the company (any membership state) has this username or this e-mail
     * address: the company's own users, whom its managers see anyway.
     */
    async companyHasUserNamed(companyId: string, refs: { username?: string; email?: string }) {
      const matches: SQL[] = [];
      if (refs.username) matches.push(sql`lower(${users.username}) = lower(${refs.username})`);
      if (refs.email) matches.push(sql`lower(${users.email}) = lower(${refs.email})`);
      if (matches.length === 0) return false;
      const [row] = await db
        .select({ id: users.id })
        .from(companyMembers)
        .innerJoin(users, eq(users.id, companyMembers.userId))
        .where(and(eq(companyMembers.companyId, companyId), sql`(${sql.join(matches, sql` or `)})`))
        .limit(1);
      return row !== undefined;
    },

    /** The e-mail address of the user with this username, for the invitation e-mail only. */
    async emailOfUsername(username: string): Promise<string | null> {
      const [row] = await db
        .select({ email: users.email })
        .from(users)
        .where(and(sql`lower(${users.username}) = lower(${username})`, sql`${users.deletedAt} is null`));
      return row?.email ?? null;
    },
  };
}
