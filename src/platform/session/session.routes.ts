import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireUser } from '../../access/policy.ts';
import { SESSION_COOKIE } from '../../auth/session.ts';
import type { App } from '../../http/app-type.ts';
import { readSessionCookie } from '../../http/auth.hook.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { SESSION_LIST_LIMIT, type SessionService } from './session.service.ts';

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
    sessionId: Type.Optional(
      Type.String({ format: 'uuid', description: 'The console session; absent with a bearer token' }),
    ),
  },
  { $id: 'Session' },
);

/** One open console session of the caller. */
export const ConsoleSessionSummarySchema = Type.Object(
  {
    id: UuidSchema,
    createdAt: DateTimeSchema,
    expiresAt: DateTimeSchema,
    userAgent: Nullable(Type.String({ description: 'The browser at sign-in' })),
    tokenPrefix: Type.String({ description: 'The visible prefix of the token it was opened with' }),
    current: Type.Boolean({ description: 'True for the session that made the request' }),
  },
  { $id: 'ConsoleSessionSummary' },
);

const SessionIdParamsSchema = Type.Object({ sessionId: Type.String({ maxLength: 64 }) });

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
 * Console sessions (extension): `POST /api/v0/session` exchanges a user API token for a session
 * of its own in an HttpOnly cookie, `GET` describes the session, `DELETE` signs out; `/sessions`
 * lists and revokes the user's sessions.
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
          'Opens a console session: sets the HttpOnly, SameSite=Strict `vigil_session` cookie (Secure over HTTPS) holding a random session id of its own (`vgl_cs_…`), never the token. The session lasts `VIGIL_SESSION_TTL_HOURS` (12 by default) or until the token expires, whichever comes first, and ends when it is revoked, when its token is revoked or when its user is disabled. Writes made with the cookie must carry `X-CSRF-Token` with the returned `csrfToken`. Failed sign-ins are throttled per address and per token (429 with `Retry-After`).',
        // The credential is the user API token in the body: no scheme is needed to call it.
        security: [{}],
        body: OpenSessionRequestSchema,
        response: { 200: ref(SessionSchema), ...v0Errors() },
      },
      config: { auth: { kind: 'none' } },
    },
    async (request, reply) => {
      const { session, secret, expiresAt } = await sessions.openSession(
        request.body.token,
        originOf(request),
      );
      reply.setCookie(SESSION_COOKIE, secret, {
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
        summary: 'Sign out of the console: end the session and clear its cookie',
        description:
          'Ends the cookie’s session and clears the cookie; the user API token itself stays valid until it expires or is revoked. Needs the CSRF token when the session is still valid.',
        security: [{ ConsoleSession: [] }, {}],
        response: { 204: Type.Null(), ...v0Errors() },
      },
      config: { auth: { kind: 'none' } },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const secret = readSessionCookie(request);
      const presented = request.headers['x-csrf-token'];
      if (secret) {
        await sessions.closeSession(
          secret,
          typeof presented === 'string' ? presented : undefined,
          originOf(request),
        );
      }
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, publicUrl));
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/v0/sessions',
    {
      schema: {
        operationId: 'listConsoleSessions',
        tags,
        security: [{ ConsoleSession: [] }, { UserBearer: [] }],
        summary: 'The caller’s open console sessions, newest first',
        description: `Sessions neither expired nor revoked, opened with any of the user’s tokens (at most ${SESSION_LIST_LIMIT}); \`current\` marks the session that asks.`,
        response: {
          200: Type.Object(
            { sessions: Type.Array(ref(ConsoleSessionSummarySchema)) },
            { $id: 'ConsoleSessionList' },
          ),
          ...v0Errors(),
        },
      },
    },
    async (request) => ({ sessions: await sessions.listSessions(request.actor) }),
  );

  app.delete(
    '/api/v0/sessions/:sessionId',
    {
      schema: {
        operationId: 'revokeConsoleSession',
        tags,
        security: [{ ConsoleSession: [] }, { UserBearer: [] }],
        summary: 'End one of the caller’s console sessions',
        description:
          'The session’s cookie stops working at once on every replica. Another user’s session, or an unknown id → 404. A session that has ended already → 204, nothing changed.',
        params: SessionIdParamsSchema,
        response: { 204: Type.Null(), ...v0Errors() },
      },
    },
    async (request, reply) => {
      await sessions.revokeSession(request.actor, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );
}

/** The caller's address and browser, for the throttle and the session list. */
function originOf(request: FastifyRequest) {
  const userAgent = request.headers['user-agent'];
  return { address: request.ip, userAgent: typeof userAgent === 'string' ? userAgent : undefined };
}
