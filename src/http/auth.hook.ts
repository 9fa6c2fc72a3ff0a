import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Actor, ANONYMOUS, requireScope } from '../auth/actor.ts';
import { type AuthService, readCredential } from '../auth/auth.service.ts';
import type { Scope } from '../auth/credentials.ts';
import { AppError } from '../errors.ts';
import { type RateLimiter, rateLimitHeaders, type TokenBucketPolicy } from './rate-limit.ts';

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

async function authenticate(
  auth: AuthService,
  request: FastifyRequest,
  requirement: AuthRequirement,
): Promise<Actor> {
  if (requirement.kind === 'none') return ANONYMOUS;
  const credential = readCredential(request.headers);
  if (!credential) {
    if (requirement.kind === 'optional-user') return ANONYMOUS;
    throw new AppError('UNAUTHENTICATED', {
      message:
        requirement.kind === 'service'
          ? 'An organization service key is required (Authorization: Bearer <key> or X-API-Key: <key>).'
          : 'A user API token is required (Authorization: Bearer <token>).',
    });
  }
  if (requirement.kind === 'service') {
    const actor = await auth.authenticateServiceKey(credential.secret);
    requireScope(actor, requirement.scope);
    return actor;
  }
  return auth.authenticateUserToken(credential.secret);
}

/**
 * Authenticates every request by its route's `config.auth` (default: a user token), then takes a
 * token from the credential's rate-limit bucket (anonymous callers: by address).
 */
export function registerAuth(
  app: FastifyInstance,
  deps: { auth: AuthService; rateLimiter: RateLimiter; policy: TokenBucketPolicy },
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
      actor = await authenticate(deps.auth, request, requirement);
    } catch (err) {
      // Failed authentications spend the caller's address bucket, so that guessing credentials
      // is throttled and the 401 carries the rate-limit headers too.
      await limit(`ip:${request.ip}`);
      throw err;
    }
    Object.defineProperty(request, 'actor', { value: actor, enumerable: true, configurable: true });
    if (requirement.kind === 'none') return;
    await limit(actor.credentialId ?? `ip:${request.ip}`);
  });
}
