import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { ssoEnforcementRules } from '../../db/schema/index.ts';

export type SsoRuleRow = typeof ssoEnforcementRules.$inferSelect;

/** SQL of SSO enforcement rules. */
export function ssoRepo(db: Db) {
  return {
    /** The company's rules, oldest first. */
    async listByCompany(companyId: string): Promise<SsoRuleRow[]> {
      return db
        .select()
        .from(ssoEnforcementRules)
        .where(eq(ssoEnforcementRules.companyId, companyId))
        .orderBy(asc(ssoEnforcementRules.createdAt), asc(ssoEnforcementRules.id));
    },

    /** Inserts a rule; throws the database's unique violation when the domain is taken. */
    async insert(values: { companyId: string; domain: string; createdBy: string }): Promise<SsoRuleRow> {
      const [row] = await db.insert(ssoEnforcementRules).values(values).returning();
      return row!;
    },

    /** Deletes the company's rule; the deleted rule, or null when there was none. */
    async delete(companyId: string, ruleId: string): Promise<SsoRuleRow | null> {
      const [row] = await db
        .delete(ssoEnforcementRules)
        .where(and(eq(ssoEnforcementRules.id, ruleId), eq(ssoEnforcementRules.companyId, companyId)))
        .returning();
      return row ?? null;
    },
  };
}
