import { eq } from 'drizzle-orm';
import {
  type Actor,
  canReadCompany,
  requireCompanyManager,
  requireUser,
  type UserActor,
} from '../../auth/actor.ts';
import type { Db } from '../../db/client.ts';
import { companies } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';

/** 404 for a company the caller may not see, so that ids of other companies reveal nothing. */
export function companyNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Company not found.' });
}

/** True for platform users who may read every company (`read_all_companies`, or `admin`). */
export function readsAllCompanies(actor: Actor): boolean {
  return (
    actor.kind === 'user' && (actor.permissions.has('read_all_companies') || actor.permissions.has('admin'))
  );
}

/** Loads the company row; 404 when it does not exist. */
export async function loadCompany(db: Db, companyId: string) {
  const [row] = await db.select().from(companies).where(eq(companies.id, companyId));
  if (!row) throw companyNotFound();
  return row;
}

/** A company user of the company, or a cross-company reader; 404 for anyone else. */
export function requireCompanyReader(actor: Actor, companyId: string): UserActor {
  const user = requireUser(actor);
  if (!canReadCompany(user, companyId)) throw companyNotFound();
  return user;
}

/**
 * A company manager, or a cross-company reader (`read_all_companies`, platform admins): the
 * readers of a company's administrative data (audit log, SSO rules). Other company users → 403,
 * anyone else → 404.
 */
export function requireCompanyOverseer(actor: Actor, companyId: string): UserActor {
  const user = requireCompanyReader(actor, companyId);
  if (user.companies.get(companyId) === 'manager' || readsAllCompanies(user)) return user;
  throw new AppError('FORBIDDEN', { message: 'Only company managers may see this.' });
}

/**
 * The company exists and the actor manages it (its manager, or a platform admin); 404 when the
 * actor may not see the company or it does not exist, 403 when they see it but do not manage it.
 */
export async function requireManagedCompany(db: Db, actor: Actor, companyId: string): Promise<UserActor> {
  const user = requireCompanyManager(actor, companyId);
  await loadCompany(db, companyId);
  return user;
}
