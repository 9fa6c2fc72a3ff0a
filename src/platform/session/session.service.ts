import { can } from '../../access/policy.ts';
import type { UserActor } from '../../auth/actor.ts';
import type { AuthService } from '../../auth/auth.service.ts';
import type { SessionCodec } from '../../auth/session.ts';
import type { Database } from '../../db/client.ts';
import { appendSignInEntries } from '../../organization/audit/audit.repo.ts';
import { sessionRepo } from './session.repo.ts';

/** What the console knows of its signed-in user. */
export interface SessionInfo {
  userId: string;
  username: string;
  name: string;
  email: string | null;
  permissions: string[];
  companies: Array<{ id: string; name: string; handle: string; role: 'manager' | 'member' | null }>;
  repositories: Array<{ id: string; name: string; companyId: string; role: string }>;
  /** The token to echo in X-CSRF-Token on writes; null when the caller used a bearer token. */
  csrfToken: string | null;
}

/**
 * Console sessions: a user API token exchanged for a session cookie (the routes set and clear it),
 * and the session's description for the console.
 */
export function createSessionService(deps: { database: Database; auth: AuthService; codec: SessionCodec }) {
  const repo = sessionRepo(deps.database.db);

  async function describe(actor: UserActor, sessionSecret: string | null): Promise<SessionInfo> {
    const readsAll = can(actor, 'companies.read_all', null);
    const [user, companyRows, repositories] = await Promise.all([
      repo.findUser(actor.userId),
      repo.findCompanies(readsAll ? null : [...actor.companies.keys()]),
      repo.findRepositoryMemberships(actor.userId),
    ]);
    // A platform reader also sees the companies it belongs to beyond the first page of all companies.
    const missing = [...actor.companies.keys()].filter((id) => !companyRows.some((c) => c.id === id));
    const extra = readsAll && missing.length > 0 ? await repo.findCompanies(missing) : [];
    return {
      userId: actor.userId,
      username: actor.username,
      name: user?.name ?? actor.username,
      email: user?.email ?? null,
      permissions: [...actor.permissions].sort(),
      companies: [...companyRows, ...extra].map((c) => ({ ...c, role: actor.companies.get(c.id) ?? null })),
      repositories,
      csrfToken: sessionSecret ? deps.codec.csrfTokenFor(sessionSecret) : null,
    };
  }

  return {
    /**
     * Checks a user API token for a new session (401 when it is not a valid, unexpired user
     * token) and describes the session it opens.
     */
    async openSession(token: string): Promise<{ session: SessionInfo; expiresAt: Date }> {
      const actor = await deps.auth.authenticateUserToken(token.trim());
      await appendSignInEntries(deps.database.db, {
        userId: actor.userId,
        companyIds: actor.companies.keys(),
        via: 'console',
      });
      const expiresAt = (await repo.findTokenExpiry(actor.credentialId)) ?? new Date();
      return { session: await describe(actor, token.trim()), expiresAt };
    },

    /** Describes the caller's session (or bearer token). */
    describeSession: describe,

    /**
     * Signing out of a valid session needs its CSRF token (no other site may sign a user out); a
     * cookie that no longer opens a session (expired, revoked, garbage) may always be cleared.
     */
    async acceptsSignOut(sessionSecret: string, presented: string | undefined): Promise<boolean> {
      if (deps.codec.verifyCsrfToken(sessionSecret, presented)) return true;
      try {
        await deps.auth.authenticateUserToken(sessionSecret);
        return false;
      } catch {
        return true;
      }
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
