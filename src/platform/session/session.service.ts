import { can, requireUser } from '../../access/policy.ts';
import type { Actor, UserActor } from '../../auth/actor.ts';
import type { AuthService } from '../../auth/auth.service.ts';
import type { CredentialThrottle } from '../../auth/credential-throttle.ts';
import { issueSessionSecret } from '../../auth/credentials.ts';
import type { SessionCodec } from '../../auth/session.ts';
import type { Database } from '../../db/client.ts';
import { AppError, isAppError } from '../../errors.ts';
import { appendSignInEntries } from '../../organization/audit/audit.repo.ts';
import { isUuid } from '../../strings.ts';
import { sessionRepo } from './session.repo.ts';

/** Ended sessions are kept this long (nothing reads them; the audit log records sign-ins). */
export const ENDED_SESSION_RETENTION_DAYS = 7;

/** The most sessions a user's list shows (newest first; sessions expire within hours). */
export const SESSION_LIST_LIMIT = 100;

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
  /** The console session's id; absent when the caller used a bearer token. */
  sessionId?: string;
}

/** One open console session of a user, as listed to them. */
export interface ConsoleSessionSummary {
  id: string;
  createdAt: string;
  expiresAt: string;
  userAgent: string | null;
  /** The visible prefix of the token the session was opened with. */
  tokenPrefix: string;
  /** True for the session that made the request. */
  current: boolean;
}

/** Where a sign-in or sign-out comes from. */
export interface SessionRequestOrigin {
  /** The caller's address, for the credential throttle. */
  address: string;
  /** The User-Agent header, kept (shortened) to recognise the session in the list. */
  userAgent?: string | undefined;
}

/**
 * Console sessions: a user API token exchanged once for a session of its own (the cookie carries
 * the session id; the routes set and clear it), listed and revoked by its user, and the
 * session's description for the console.
 */
export function createSessionService(deps: {
  database: Database;
  auth: AuthService;
  codec: SessionCodec;
  throttle: CredentialThrottle;
  /** How long a session lasts at most (it also ends with its token). */
  ttlMs: number;
  now?: () => Date;
}) {
  const repo = sessionRepo(deps.database.db);
  const now = deps.now ?? (() => new Date());

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
      ...(actor.sessionId ? { sessionId: actor.sessionId } : {}),
    };
  }

  /** The live session of a cookie through the throttle, or null when it opens none. */
  async function liveSession(secret: string, origin: SessionRequestOrigin): Promise<UserActor | null> {
    try {
      return await deps.throttle.attempt(
        'console-session',
        { address: origin.address, target: { secret } },
        () => deps.auth.authenticateSession(secret),
      );
    } catch (err) {
      if (isAppError(err, 'INVALID_CREDENTIAL')) return null;
      throw err;
    }
  }

  return {
    /**
     * Signs in: checks a user API token through the credential throttle (401 when it is not a
     * valid, unexpired user token; 429 after too many failures) and opens a session of its own,
     * lasting `ttlMs` or until the token expires. Returns the session id for the cookie, once.
     */
    async openSession(
      token: string,
      origin: SessionRequestOrigin,
    ): Promise<{ session: SessionInfo; secret: string; expiresAt: Date }> {
      const presented = token.trim();
      const actor = await deps.throttle.attempt(
        'console-sign-in',
        { address: origin.address, target: { secret: presented } },
        () => deps.auth.authenticateUserToken(presented),
      );
      const at = now();
      const tokenExpiry = (await repo.findTokenExpiry(actor.credentialId)) ?? at;
      const expiresAt = new Date(Math.min(tokenExpiry.getTime(), at.getTime() + deps.ttlMs));
      const issued = issueSessionSecret();
      // The session and the sign-in's audit entries are written together.
      const opened = await deps.database.transaction(async (tx) => {
        const row = await sessionRepo(tx.db).insertSession({
          userId: actor.userId,
          tokenId: actor.credentialId,
          hash: issued.hash,
          userAgent: origin.userAgent?.slice(0, 200) || null,
          expiresAt,
          createdAt: at,
        });
        await appendSignInEntries(tx.db, {
          userId: actor.userId,
          companyIds: actor.companies.keys(),
          via: 'console',
        });
        return row;
      });
      const session = await describe({ ...actor, sessionId: opened.id }, issued.secret);
      return { session, secret: issued.secret, expiresAt };
    },

    /** Describes the caller's session (or bearer token). */
    describeSession: describe,

    /** The caller's open console sessions, newest first. */
    async listSessions(actor: Actor): Promise<ConsoleSessionSummary[]> {
      const user = requireUser(actor);
      const rows = await repo.listOpenSessions(user.userId, now(), SESSION_LIST_LIMIT);
      return rows.map((r) => ({
        id: r.id,
        createdAt: r.createdAt.toISOString(),
        expiresAt: r.expiresAt.toISOString(),
        userAgent: r.userAgent,
        tokenPrefix: r.tokenPrefix,
        current: r.id === user.sessionId,
      }));
    },

    /**
     * Ends one of the caller's sessions (another user's, or an unknown id: 404). Ending a session
     * that has ended already changes nothing.
     */
    async revokeSession(actor: Actor, sessionId: string): Promise<void> {
      const user = requireUser(actor);
      const row = isUuid(sessionId) ? await repo.findSession(sessionId) : null;
      if (!row || !can(user, 'session.revoke', { session: row })) {
        throw new AppError('NOT_FOUND', { message: 'Session not found.', details: { sessionId } });
      }
      // In a transaction: its commit tells this process's credential cache (Database.afterCommit).
      await deps.database.transaction((tx) => sessionRepo(tx.db).revokeSession(row.id, now()));
    },

    /**
     * Signs out: ends the cookie's session. Ending a live session needs its CSRF token (no other
     * site may sign a user out); a cookie that opens no session (ended, expired, garbage) may
     * always be cleared.
     */
    async closeSession(
      sessionSecret: string,
      presentedCsrf: string | undefined,
      origin: SessionRequestOrigin,
    ): Promise<void> {
      const actor = await liveSession(sessionSecret, origin);
      if (!actor?.sessionId) return;
      if (!deps.codec.verifyCsrfToken(sessionSecret, presentedCsrf)) throw new AppError('CSRF_TOKEN_INVALID');
      const sessionId = actor.sessionId;
      await deps.database.transaction((tx) => sessionRepo(tx.db).revokeSession(sessionId, now()));
    },

    /** Deletes sessions that ended more than {@link ENDED_SESSION_RETENTION_DAYS} ago; how many. */
    async purgeEndedSessions(): Promise<number> {
      return repo.deleteSessionsEndedBefore(
        new Date(now().getTime() - ENDED_SESSION_RETENTION_DAYS * 86_400_000),
      );
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
