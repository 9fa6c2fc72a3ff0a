import type { Scope } from './credentials.ts';

export type CompanyRole = 'manager' | 'member';

/** A caller holding an organization service key (v1). */
export interface ServiceActor {
  readonly kind: 'service';
  readonly credentialId: string;
  readonly organizationId: string;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * Set when a user acts for the organization with a console session or a user token and
   * X-Vigil-Company (no service key is involved): `credentialId` is then the user token's id, not
   * a service key's.
   */
  readonly sessionUserId?: string;
}

/** A caller holding a user API token (v0), acting as that user. */
export interface UserActor {
  readonly kind: 'user';
  /** The user token's id (for a console session: the token it was opened with). */
  readonly credentialId: string;
  /** Set when the caller is a console session: its id. */
  readonly sessionId?: string;
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
