import { requireCompany } from '../../access/access.service.ts';
import { requireCompanyManager, requireCompanyReader } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { type CompanyRow, companiesRepo } from './companies.repo.ts';
import type { CompanySummary, UpdateCompanyRequest } from './companies.schemas.ts';

/** The company summary of a company row. */
export function toCompanySummary(row: CompanyRow): CompanySummary {
  return {
    id: row.id,
    name: row.name,
    handle: row.handle,
    logo: row.logo,
    website: row.website,
    sourcehost: row.sourcehost,
    microblog: row.microblog,
  };
}

function toCompanyView(row: CompanyRow) {
  return { ...toCompanySummary(row), createdAt: row.createdAt.toISOString() };
}

/** Company profiles: read by company users and cross-company readers, changed by managers. */
export function createCompaniesService(deps: { database: Database }) {
  const { database } = deps;
  return {
    async getCompany(actor: Actor, companyId: string) {
      requireCompanyReader(actor, companyId);
      return toCompanyView(await requireCompany(database.db, companyId));
    },

    /** Changes the given profile fields (company managers, platform admins); 409 for a taken handle. */
    async updateCompany(actor: Actor, companyId: string, input: UpdateCompanyRequest) {
      requireCompanyManager(actor, companyId);
      await requireCompany(database.db, companyId);
      try {
        const row = await companiesRepo(database.db).update(companyId, input);
        return toCompanyView(row!);
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('ALREADY_EXISTS', { message: `The handle "${input.handle}" is taken.` });
        }
        throw err;
      }
    },
  };
}

export type CompaniesService = ReturnType<typeof createCompaniesService>;
