import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import type { Actor, CompanyRole, ServiceActor, UserActor } from './actor.ts';
import { authRepo } from './auth.repo.ts';
import { type CredentialCache, createCredentialCache } from './credential-cache.ts';
import { classifySecret, hashSecret, isSessionSecretFormat, type Scope } from './credentials.ts';
import { COMPANY_HEADER } from './session.ts';

/** A presented credential: where it came from (for error messages) and what its format says it is. */
export interface PresentedCredential {
  secret: string;
  scheme: 'bearer' | 'api-key';
  /** A user token (`vgl_u_…`), a service key (`vgl_sk_…`), or null when malformed. */
  kind: 'user' | 'service' | null;
}

/** Reads `Authorization: Bearer …` or `X-API-Key: …`; null when neither is present. */
export function readCredential(
  headers: Record<string, string | string[] | undefined>,
): PresentedCredential | null {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) return presented(apiKey.trim(), 'api-key');
  const authorization = headers.authorization;
  if (typeof authorization !== 'string' || authorization.length === 0) return null;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (!match?.[1])
    throw new AppError('INVALID_CREDENTIAL', { message: 'Authorization must be "Bearer <token>".' });
  return presented(match[1].trim(), 'bearer');
}

function presented(secret: string, scheme: PresentedCredential['scheme']): PresentedCredential {
  return { secret, scheme, kind: classifySecret(secret) };
}

/** Why a presented secret is not the credential an endpoint takes: the other kind, or malformed. */
function describeWrongSecret(secret: string, kind: 'user' | 'service' | null, wanted: string): string {
  if (kind !== null)
    return `This endpoint takes ${wanted}, not ${kind === 'user' ? 'a user token' : 'a service key'}.`;
  const prefix = /^vgl_(u|sk)_/.exec(secret)?.[0];
  if (prefix)
    return `Malformed credential: a ${prefix}… credential has exactly 40 letters and digits after "${prefix}" (got ${secret.length - prefix.length}); copy it again in full.`;
  return `This endpoint takes ${wanted}.`;
}

/**
 * Resolves presented secrets into Actors. With a `cache` (kept right by database notifications,
 * see credential-cache.ts) a known credential resolves without a query; without one, every call
 * reads the database.
 */
export function createAuthService(deps: {
  db: Db;
  now?: () => Date;
  cache?: CredentialCache<ServiceActor | UserActor>;
}) {
  const repo = authRepo(deps.db);
  const now = deps.now ?? (() => new Date());
  const cache = deps.cache ?? createCredentialCache<ServiceActor | UserActor>({ maxEntries: 0 });

  async function userActorOf(user: { id: string; username: string }, tokenId: string): Promise<UserActor> {
    const [memberships, permissions] = await Promise.all([
      repo.findActiveMemberships(user.id),
      repo.findPermissions(user.id),
    ]);
    return {
      kind: 'user',
      credentialId: tokenId,
      userId: user.id,
      username: user.username,
      companies: new Map(memberships.map((m) => [m.companyId, m.role as CompanyRole])),
      permissions: new Set(permissions),
    };
  }

  /** When this process last stamped each service key's last use. */
  const touched = new Map<string, number>();
  /**
   * Records a service key's use for its "last used" column, at most once a minute per key and
   * process: a write per request would cost more than the request.
   */
  async function touch(keyId: string): Promise<void> {
    const at = now().getTime();
    const last = touched.get(keyId);
    if (last !== undefined && at - last < 60_000) return;
    touched.set(keyId, at);
    if (touched.size > 10_000) touched.clear();
    await repo.touchServiceKey(keyId);
  }

  return {
    /** An organization service key → ServiceActor; 401 when malformed, unknown, expired or revoked. */
    async authenticateServiceKey(secret: string): Promise<ServiceActor> {
      const kind = classifySecret(secret);
      if (kind !== 'service') {
        throw new AppError('INVALID_CREDENTIAL', {
          message:
            kind === 'user'
              ? `This endpoint takes an organization service key (vgl_sk_…), or a user token with the ${COMPANY_HEADER} header naming the company it acts for.`
              : describeWrongSecret(secret, kind, 'an organization service key (vgl_sk_…)'),
        });
      }
      const hash = hashSecret(secret);
      const cached = cache.get(hash, now());
      if (cached?.kind === 'service') {
        await touch(cached.credentialId);
        return cached;
      }
      const generation = cache.begin();
      const key = await repo.findServiceKeyByHash(hash);
      if (!key) throw new AppError('INVALID_CREDENTIAL', { message: 'Unknown service key.' });
      if (key.revokedAt)
        throw new AppError('INVALID_CREDENTIAL', { message: 'This service key has been revoked.' });
      if (key.expiresAt && key.expiresAt <= now()) {
        throw new AppError('INVALID_CREDENTIAL', { message: 'This service key has expired.' });
      }
      const actor: ServiceActor = {
        kind: 'service',
        credentialId: key.id,
        organizationId: key.companyId,
        scopes: new Set(key.scopes as Scope[]),
      };
      cache.store(hash, generation, { value: actor, expiresAt: key.expiresAt });
      await touch(key.id);
      return actor;
    },

    /** A user API token → UserActor; 401 when malformed, unknown, expired, revoked or disabled. */
    async authenticateUserToken(secret: string): Promise<UserActor> {
      const kind = classifySecret(secret);
      if (kind !== 'user') {
        throw new AppError('INVALID_CREDENTIAL', {
          message: describeWrongSecret(secret, kind, 'a user API token (vgl_u_…)'),
        });
      }
      const hash = hashSecret(secret);
      const cached = cache.get(hash, now());
      if (cached?.kind === 'user') return cached;
      const generation = cache.begin();
      const row = await repo.findUserTokenByHash(hash);
      if (!row) throw new AppError('INVALID_CREDENTIAL', { message: 'Unknown token.' });
      if (row.token.revokedAt)
        throw new AppError('INVALID_CREDENTIAL', { message: 'This token has been revoked.' });
      if (row.token.expiresAt <= now())
        throw new AppError('INVALID_CREDENTIAL', { message: 'This token has expired.' });
      if (row.user.disabledAt || row.user.deletedAt) {
        throw new AppError('INVALID_CREDENTIAL', { message: 'This user is disabled.' });
      }
      const actor = await userActorOf(row.user, row.token.id);
      cache.store(hash, generation, { value: actor, expiresAt: row.token.expiresAt });
      return actor;
    },

    /**
     * A console session id (the `vigil_session` cookie) → UserActor of its user, acting with the
     * token the session was opened with; 401 when malformed (a user token in the cookie
     * included), unknown, expired or revoked, or when its token or user no longer is valid.
     */
    async authenticateSession(secret: string): Promise<UserActor> {
      if (!isSessionSecretFormat(secret)) {
        throw new AppError('INVALID_CREDENTIAL', {
          message: 'The session cookie does not hold a console session; sign in again.',
        });
      }
      const hash = hashSecret(secret);
      const cached = cache.get(hash, now());
      if (cached?.kind === 'user' && cached.sessionId) return cached;
      const generation = cache.begin();
      const row = await repo.findSessionByHash(hash);
      const at = now();
      if (!row) throw new AppError('INVALID_CREDENTIAL', { message: 'Unknown session; sign in again.' });
      if (row.session.revokedAt || row.token.revokedAt)
        throw new AppError('INVALID_CREDENTIAL', { message: 'This session has ended; sign in again.' });
      if (row.session.expiresAt <= at || row.token.expiresAt <= at)
        throw new AppError('INVALID_CREDENTIAL', { message: 'This session has expired; sign in again.' });
      if (row.user.disabledAt || row.user.deletedAt) {
        throw new AppError('INVALID_CREDENTIAL', { message: 'This user is disabled.' });
      }
      const actor: UserActor = { ...(await userActorOf(row.user, row.token.id)), sessionId: row.session.id };
      const expiresAt = new Date(Math.min(row.session.expiresAt.getTime(), row.token.expiresAt.getTime()));
      cache.store(hash, generation, { value: actor, expiresAt });
      return actor;
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
export type { Actor };
