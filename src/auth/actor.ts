import { AppError } from '../errors.ts';
import type { Scope } from './credentials.ts';

export type CompanyRole = 'manager' | 'member';

/** A caller holding an organization service key (v1). */
export interface ServiceActor {
  readonly kind: 'service';
  readonly credentialId: string;
  readonly organizationId: string;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * Set when a user's console session acts for the organization (no service key is involved):
   * `credentialId` is then the user token's id, not a service key's.
   */
  readonly sessionUserId?: string;
}

/** A caller holding a user API token (v0), acting as that user. */
export interface UserActor {
  readonly kind: 'user';
  readonly credentialId: string;
  readonly userId: string;
  readonly username: string;
  /** The companies the user is an active member of, with the role in each. */
  readonly companies: ReadonlyMap<string, CompanyRole>;
  /** Platform permissions such as `read_all_companies`. */
  readonly permissions: ReadonlySet<string>;
}

export interface AnonymousActor {
  readonly kind: 'anonymous';
  readonly credentialId: null;
}

/** Identity, organization, scopes and roles of a caller, as services see it. */
export type Actor = ServiceActor | UserActor | AnonymousActor;

export const ANONYMOUS: AnonymousActor = { kind: 'anonymous', credentialId: null };

/** Platform permissions. `admin` grants every management operation. */
export const PLATFORM_PERMISSIONS = ['admin', 'read_all_companies'] as const;

/** Throws INSUFFICIENT_SCOPE unless the service actor holds the scope. */
export function requireScope(actor: ServiceActor, scope: Scope): void {
  if (!actor.scopes.has(scope)) {
    throw new AppError('INSUFFICIENT_SCOPE', { message: `This operation requires the ${scope} scope.` });
  }
}

/** Throws unless the actor is a user (401 for anonymous callers). */
export function requireUser(actor: Actor): UserActor {
  if (actor.kind === 'user') return actor;
  throw new AppError(actor.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
}

/** Throws FORBIDDEN unless the user is a platform admin. */
export function requirePlatformAdmin(actor: Actor): UserActor {
  const user = requireUser(actor);
  if (!user.permissions.has('admin')) throw new AppError('FORBIDDEN', { message: 'Platform admins only.' });
  return user;
}

export function isPlatformAdmin(actor: Actor): boolean {
  return actor.kind === 'user' && actor.permissions.has('admin');
}

/** True when the user may read everything of the company: a member, or a cross-company reader. */
export function canReadCompany(actor: Actor, companyId: string): boolean {
  if (actor.kind !== 'user') return false;
  return (
    actor.companies.has(companyId) ||
    actor.permissions.has('read_all_companies') ||
    actor.permissions.has('admin')
  );
}

/** True when the user manages the company (its manager, or a platform admin). */
export function canManageCompany(actor: Actor, companyId: string): boolean {
  if (actor.kind !== 'user') return false;
  return actor.companies.get(companyId) === 'manager' || actor.permissions.has('admin');
}

/**
 * Throws NOT_FOUND (never 403) when the user may not see the company, so that other companies'
 * ids reveal nothing; FORBIDDEN when they see it but may not manage it.
 */
export function requireCompanyManager(actor: Actor, companyId: string): UserActor {
  const user = requireUser(actor);
  if (!canReadCompany(user, companyId)) throw new AppError('NOT_FOUND', { message: 'Company not found.' });
  if (!canManageCompany(user, companyId)) {
    throw new AppError('FORBIDDEN', { message: 'Only company managers may do this.' });
  }
  return user;
}
