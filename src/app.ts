import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger, { type SwaggerOptions } from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalar from '@scalar/fastify-api-reference';
import { Type } from '@sinclair/typebox';
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions, LogController } from 'fastify';
import type { Container } from './container.ts';
import type { App } from './http/app-type.ts';
import { registerAuth } from './http/auth.hook.ts';
import { registerConsole } from './http/console.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { handleClientError, handleFrameworkError, registerHostileInputChecks } from './http/hostile-input.ts';
import { lazySerializers } from './http/lazy-serializers.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerRequestLog } from './http/request-log.ts';
import { requireResponseSchemas } from './http/response-schemas.ts';
import { registerRuleDocs } from './http/rule-docs.ts';
import { ErrorV0Schema, ErrorV1Schema, namedSchemaTransforms } from './http/schemas.ts';
import { registerRouteModules } from './routes.ts';

export type { App };

export const API_VERSION = '1.7.0';

/** Trusts the `hops` proxies nearest the server (proxy-addr's hop count). */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/** Builds the HTTP app on a container: plugins, hooks and every route, without listening. */
export async function buildApp(container: Container): Promise<App> {
  const app = Fastify(fastifyOptions(container)).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  registerErrorHandling(app);
  // An API operation that declares no query parameters takes none: an unknown one is a 400 like
  // on every list, instead of being silently ignored.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/') || route.schema?.querystring !== undefined) return;
    route.schema = { ...(route.schema ?? {}), querystring: Type.Object({}, { additionalProperties: false }) };
  });
  requireResponseSchemas(app);
  registerHostileInputChecks(app);
  registerRequestLog(app);
  app.addSchema(ErrorV1Schema);
  app.addSchema(ErrorV0Schema);

  await app.register(swagger, openApiOptions());

  await app.register(cookie);
  registerAuth(app, {
    auth: container.services.auth,
    sessions: container.sessionCodec,
    throttle: container.credentialThrottle,
    rateLimiter: container.rateLimiter,
    policy: container.config.rateLimit,
  });
  registerMetrics(app, { token: container.config.metrics.token });

  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () =>
    app.swagger(),
  );
  registerRuleDocs(app);
  await app.register(scalar, {
    routePrefix: '/docs',
    configuration: { url: '/openapi.json', title: 'Vigil API' },
  });

  registerHealthRoutes(app, container);
  await registerRouteModules(app, container);
  await registerConsole(app, { objectStore: container.config.objectStore });
  return app;
}

/** Fastify's settings: body limit, trusted proxies, request ids, validation, lazy serializers. */
function fastifyOptions(container: Container) {
  return {
    loggerInstance: container.log as FastifyBaseLogger,
    bodyLimit: container.config.bodyLimitBytes,
    // The client address behind the proxies the operator trusts: the source address of the rate
    // limit and of the credential throttle.
    trustProxy:
      typeof container.config.trustProxy === 'number'
        ? trustHops(container.config.trustProxy)
        : container.config.trustProxy,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    // Response serializers compile on first use: start-up does not pay for every route's.
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    return503OnClosing: true,
    forceCloseConnections: false,
    frameworkErrors: handleFrameworkError,
    // One line per request, written by registerRequestLog with secrets redacted.
    logController: new LogController({ disableRequestLogging: true }),
    clientErrorHandler: handleClientError,
  } satisfies FastifyServerOptions;
}

/** The OpenAPI document's header (security schemes included); the routes add their operations. */
function openApiOptions(): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vigil API',
        version: API_VERSION,
        description:
          'Scanner API v1 (`/api/scanner/v1`: scans, source uploads, credits, finding tickets) and Platform API v0 (`/api/v0`: repositories, findings, views, reports, audit log, users). Operations tagged `extension` are management endpoints beyond the published documents.',
      },
      // Relative: the document describes the server that serves it, wherever it is deployed.
      servers: [{ url: '/', description: 'The Vigil server that serves this document' }],
      components: {
        securitySchemes: {
          ServiceBearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'Organization service key `vgl_sk_…`',
          },
          ServiceApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'Organization service key',
          },
          UserBearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'User API token `vgl_u_…`; on the scanner API with `X-Vigil-Company`, it acts for that company as its user.',
          },
          WebhookSignature: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Hub-Signature-256',
            description:
              '`sha256=` and the HMAC-SHA256 of the raw body under the integration’s webhook secret',
          },
          ConsoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'vigil_session',
            description:
              'Console session cookie from `POST /api/v0/session`; accepted wherever a user token is, and on the scanner API with `X-Vigil-Company`. Writes need `X-CSRF-Token`.',
          },
        },
      },
    },
    ...namedSchemaTransforms(),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}`,
    },
  };
}

/** `/healthz` (the process answers) and `/readyz` (the database answers), without credentials. */
function registerHealthRoutes(app: App, container: Container): void {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['health'],
        security: [],
        summary: 'Liveness: the process answers',
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' }) },
      },
      config: { auth: { kind: 'none' } },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['health'],
        security: [],
        summary: 'Readiness: the database answers',
        response: {
          200: Type.Object(
            { status: Type.Literal('ready'), database: Type.Literal('ok') },
            { $id: 'Readiness' },
          ),
          503: Type.Object(
            { status: Type.Literal('unavailable'), database: Type.Literal('unreachable') },
            { $id: 'Unready' },
          ),
        },
      },
      config: { auth: { kind: 'none' } },
    },
    async (_request, reply) => {
      if (await container.database.ping()) return { status: 'ready' as const, database: 'ok' as const };
      return reply.code(503).send({ status: 'unavailable' as const, database: 'unreachable' as const });
    },
  );
}
