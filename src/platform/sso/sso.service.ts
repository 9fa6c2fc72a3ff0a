import { requireCompany } from '../../access/access.service.ts';
import { requireCompanyManager, requireCompanyOverseer } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { usersRepo } from '../users/users.repo.ts';
import { type SsoRuleRow, ssoRepo } from './sso.repo.ts';
import type { SsoRule } from './sso.schemas.ts';

/** SSO enforcement rules: listed by company managers and cross-company readers, changed by managers. */
export function createSsoService(deps: { database: Database }) {
  const { database } = deps;

  async function render(rows: SsoRuleRow[]): Promise<SsoRule[]> {
    const summaries = await usersRepo(database.db).shortSummaries(rows.map((r) => r.createdBy));
    return rows.map((r) => ({
      id: r.id,
      companyId: r.companyId,
      domain: r.domain,
      createdAt: r.createdAt.toISOString(),
      createdBy: (r.createdBy && summaries.get(r.createdBy)) || null,
    }));
  }

  return {
    /** The company's rules, oldest first. */
    async listRules(actor: Actor, companyId: string): Promise<SsoRule[]> {
      requireCompanyOverseer(actor, companyId);
      await requireCompany(database.db, companyId);
      return render(await ssoRepo(database.db).listByCompany(companyId));
    },

    /** Adds a rule for an email domain (stored lower-case); 409 when any company has that domain. */
    async createRule(actor: Actor, companyId: string, domain: string): Promise<SsoRule> {
      const user = requireCompanyManager(actor, companyId);
      await requireCompany(database.db, companyId);
      const normalized = domain.trim().toLowerCase();
      try {
        const row = await database.transaction(async (tx) => {
          const inserted = await ssoRepo(tx.db).insert({
            companyId,
            domain: normalized,
            createdBy: user.userId,
          });
          await appendAuditEntry(tx.db, {
            companyId,
            action: 'sso_rule_added',
            performedBy: user.userId,
            details: { ruleId: inserted.id, domain: inserted.domain },
          });
          return inserted;
        });
        const [rule] = await render([row]);
        return rule!;
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('ALREADY_EXISTS', { message: `An SSO rule for ${normalized} already exists.` });
        }
        throw err;
      }
    },

    async deleteRule(actor: Actor, companyId: string, ruleId: string): Promise<void> {
      const user = requireCompanyManager(actor, companyId);
      await database.transaction(async (tx) => {
        const deleted = await ssoRepo(tx.db).delete(companyId, ruleId);
        if (!deleted) throw new AppError('NOT_FOUND', { message: 'SSO rule not found.' });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'sso_rule_removed',
          performedBy: user.userId,
          details: { ruleId, domain: deleted.domain },
        });
      });
    },
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
