import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireUser } from '../../access/policy.ts';
import { SESSION_COOKIE } from '../../auth/session.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../../http/app-type.ts';
import { readSessionCookie } from '../../http/auth.hook.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import type { SessionService } from './session.service.ts';

const tags = ['extension', 'session'];

/** The console's signed-in user. */
export const SessionSchema = Type.Object(
  {
    userId: UuidSchema,
    username: Type.String(),
    name: Type.String(),
    email: Nullable(Type.String()),
    permissions: Type.Array(Type.String()),
    companies: Type.Array(
      Type.Object({
        id: UuidSchema,
        name: Type.String(),
        handle: Type.String(),
        role: Nullable(Type.Union([Type.Literal('manager'), Type.Literal('member')])),
      }),
    ),
    repositories: Type.Array(
      Type.Object({ id: UuidSchema, name: Type.String(), companyId: UuidSchema, role: Type.String() }),
    ),
    csrfToken: Nullable(
      Type.String({ description: 'Echo it in X-CSRF-Token on cookie-authenticated writes' }),
    ),
    expiresAt: Type.Optional(DateTimeSchema),
  },
  { $id: 'Session' },
);

const OpenSessionRequestSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200, description: 'A user API token (vgl_u_…)' }) },
  { $id: 'OpenSessionRequest', additionalProperties: false },
);

/** Secure when the request came over HTTPS or the public URL is HTTPS. */
function cookieOptions(request: FastifyRequest, publicUrl: string | null) {
  return {
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: request.protocol === 'https' || (publicUrl?.startsWith('https:') ?? false),
    path: '/',
  };
}

/**
 * Console sessions (extension): `POST /api/v0/session` exchanges a user API token for an HttpOnly
 * session cookie, `GET` describes the session, `DELETE` signs out.
 */
export function registerSessionRoutes(app: App, sessions: SessionService, publicUrl: string | null): void {
  app.post(
    '/api/v0/session',
    {
      schema: {
        operationId: 'openSession',
        tags,
        summary: 'Sign in to the console: exchange a user API token for a session cookie',
        description:
          'Sets the HttpOnly, SameSite=Strict `vigil_session` cookie (Secure over HTTPS) until the token expires. Writes made with the cookie must carry `X-CSRF-Token` with the returned `csrfToken`.',
        // The credential is the user API token in the body: no scheme is needed to call it.
        security: [{}],
        body: OpenSessionRequestSchema,
        response: { 200: ref(SessionSchema), ...v0Errors() },
      },
      config: { auth: { kind: 'none' } },
    },
    async (request, reply) => {
      const { session, expiresAt } = await sessions.openSession(request.body.token);
      reply.setCookie(SESSION_COOKIE, request.body.token.trim(), {
        ...cookieOptions(request, publicUrl),
        expires: expiresAt,
      });
      return { ...session, expiresAt: expiresAt.toISOString() };
    },
  );

  app.get(
    '/api/v0/session',
    {
      schema: {
        operationId: 'getSession',
        tags,
        security: [{ ConsoleSession: [] }, { UserBearer: [] }],
        summary: 'The signed-in user: companies, repositories, permissions and the CSRF token',
        response: { 200: ref(SessionSchema), ...v0Errors() },
      },
    },
    async (request) => sessions.describeSession(requireUser(request.actor), readSessionCookie(request)),
  );

  app.delete(
    '/api/v0/session',
    {
      schema: {
        operationId: 'closeSession',
        tags,
        summary: 'Sign out of the console: clear the session cookie',
        description:
          'Clears the cookie; the user API token itself stays valid until it expires or is revoked. Needs the CSRF token when the session is still valid.',
        security: [{ ConsoleSession: [] }, {}],
        response: { 204: Type.Null(), ...v0Errors() },
      },
      config: { auth: { kind: 'none' } },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const secret = readSessionCookie(request);
      const presented = request.headers['x-csrf-token'];
      if (
        secret &&
        !(await sessions.acceptsSignOut(secret, typeof presented === 'string' ? presented : undefined))
      ) {
        throw new AppError('CSRF_TOKEN_INVALID');
      }
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, publicUrl));
      return reply.code(204).send();
    },
  );
}
