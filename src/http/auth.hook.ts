import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, companyNotFound, requireScope } from '../access/policy.ts';
import { type Actor, ANONYMOUS, type ServiceActor, type UserActor } from '../auth/actor.ts';
import { type AuthService, readCredential } from '../auth/auth.service.ts';
import { type CredentialThrottle, isThrottleOutcome } from '../auth/credential-throttle.ts';
import { DEFAULT_SCOPES, SCOPES, type Scope } from '../auth/credentials.ts';
import { COMPANY_HEADER, CSRF_HEADER, SESSION_COOKIE, type SessionCodec } from '../auth/session.ts';
import { AppError } from '../errors.ts';
import { type RateLimiter, rateLimitHeaders, type TokenBucketPolicy } from '../rate-limit.ts';

/** What a route requires of its caller. */
export type AuthRequirement =
  | { kind: 'service'; scope: Scope }
  | { kind: 'user' }
  | { kind: 'optional-user' }
  | { kind: 'none' };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    actor: Actor;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The console session's id from its cookie, or null. */
export function readSessionCookie(request: FastifyRequest): string | null {
  const value = request.cookies?.[SESSION_COOKIE];
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * A person on the scanner API (a console session, or a user token) acts for one company it names
 * in X-Vigil-Company, with the scopes of a service key: every scope for the company's managers and
 * platform admins, the default scopes (no `findings:write`) for members. Another company → 404, as
 * for every resource.
 */
function sessionServiceActor(user: UserActor, request: FastifyRequest): ServiceActor {
  const companyId = request.headers[COMPANY_HEADER];
  if (typeof companyId !== 'string' || companyId.length === 0) {
    throw new AppError('UNAUTHENTICATED', {
      message: `A console session or user token names the company it acts for in the ${COMPANY_HEADER} header on the scanner API.`,
    });
  }
  if (!can(user, 'company.act_for', { companyId })) throw companyNotFound();
  return {
    kind: 'service',
    credentialId: user.credentialId,
    sessionUserId: user.userId,
    organizationId: companyId,
    scopes: new Set<Scope>(can(user, 'company.manage', { companyId }) ? SCOPES : DEFAULT_SCOPES),
  };
}

interface AuthDeps {
  auth: AuthService;
  sessions: SessionCodec;
  throttle: CredentialThrottle;
}

async function authenticate(
  deps: AuthDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  requirement: AuthRequirement,
): Promise<Actor> {
  if (requirement.kind === 'none') return ANONYMOUS;
  const { auth, sessions, throttle } = deps;
  const setHeaders = (headers: Record<string, string>) => void reply.headers(headers);
  const credential = readCredential(request.headers);
  const sessionSecret = credential ? null : readSessionCookie(request);
  if (sessionSecret) {
    // Browsers send cookies on requests other sites cause; writes must prove they come from the
    // console by echoing the session's CSRF token, which other origins cannot read.
    if (!SAFE_METHODS.has(request.method)) {
      const presented = request.headers[CSRF_HEADER];
      if (!sessions.verifyCsrfToken(sessionSecret, typeof presented === 'string' ? presented : undefined)) {
        throw new AppError('CSRF_TOKEN_INVALID');
      }
    }
    const user = await throttle.attempt(
      'console-session',
      { address: request.ip, target: { secret: sessionSecret } },
      () => auth.authenticateSession(sessionSecret),
      setHeaders,
    );
    if (requirement.kind !== 'service') return user;
    const actor = sessionServiceActor(user, request);
    requireScope(actor, requirement.scope);
    return actor;
  }
  if (!credential) {
    if (requirement.kind === 'optional-user') return ANONYMOUS;
    throw new AppError('UNAUTHENTICATED', {
      message:
        requirement.kind === 'service'
          ? 'An organization service key is required (Authorization: Bearer <key> or X-API-Key: <key>).'
          : 'A user API token is required (Authorization: Bearer <token>).',
    });
  }
  const attempt = { address: request.ip, target: { secret: credential.secret } };
  if (
    requirement.kind === 'service' &&
    credential.kind === 'user' &&
    request.headers[COMPANY_HEADER] !== undefined
  ) {
    // A user token naming its company acts for it as the user's console session would.
    const user = await throttle.attempt(
      'user-token',
      attempt,
      () => auth.authenticateUserToken(credential.secret),
      setHeaders,
    );
    const actor = sessionServiceActor(user, request);
    requireScope(actor, requirement.scope);
    return actor;
  }
  if (requirement.kind === 'service') {
    const actor = await throttle.attempt(
      'service-key',
      attempt,
      () => auth.authenticateServiceKey(credential.secret),
      setHeaders,
    );
    requireScope(actor, requirement.scope);
    return actor;
  }
  return throttle.attempt(
    'user-token',
    attempt,
    () => auth.authenticateUserToken(credential.secret),
    setHeaders,
  );
}

/**
 * Authenticates every request by its route's `config.auth` (default: a user token), then takes a
 * token from the credential's rate-limit bucket (anonymous callers: by address). Without an
 * Authorization or X-API-Key header, the console's session cookie is the credential. On the
 * scanner API, a user token or a session with X-Vigil-Company acts for that company. Every
 * credential check goes through the credential throttle (see credential-throttle.ts).
 */
export function registerAuth(
  app: FastifyInstance,
  deps: AuthDeps & { rateLimiter: RateLimiter; policy: TokenBucketPolicy },
): void {
  app.decorateRequest('actor', { getter: () => ANONYMOUS, setter: () => {} });
  app.addHook('onRequest', async (request, reply) => {
    const url = request.routeOptions.url;
    if (url === undefined) return; // unknown route: the not-found handler answers
    // API routes require a user token unless they say otherwise; plugin pages (/docs) are public.
    const requirement =
      request.routeOptions.config.auth ?? (url.startsWith('/api/') ? { kind: 'user' } : { kind: 'none' });
    const limit = async (key: string) => {
      const decision = await deps.rateLimiter.take(key);
      reply.headers(rateLimitHeaders(deps.policy, decision));
      if (!decision.allowed) {
        throw new AppError('RATE_LIMITED', {
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }
    };
    let actor: Actor;
    try {
      actor = await authenticate(deps, request, reply, requirement);
    } catch (err) {
      // A failed credential check has spent the throttle's buckets already. Other refusals (no
      // credential, a malformed Authorization header, no CSRF token, another company) spend the
      // caller's address bucket, so that they are bounded too and carry the rate-limit headers.
      if (isThrottleOutcome(err)) throw err;
      await limit(`ip:${request.ip}`);
      throw err;
    }
    Object.defineProperty(request, 'actor', { value: actor, enumerable: true, configurable: true });
    if (requirement.kind === 'none') return;
    await limit(actor.credentialId ?? `ip:${request.ip}`);
  });
}
