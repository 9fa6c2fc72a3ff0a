import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalar from '@scalar/fastify-api-reference';
import { Type } from '@sinclair/typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Container } from './container.ts';
import { registerAuth } from './http/auth.hook.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerMetrics } from './http/metrics.ts';
import { ErrorV0Schema, ErrorV1Schema } from './http/schemas.ts';
import { registerRouteModules } from './routes.ts';

/** The Fastify instance with the TypeBox type provider. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export const API_VERSION = '1.7.0';

/** Builds the HTTP app on a container: plugins, hooks and every route, without listening. */
export async function buildApp(container: Container): Promise<App> {
  const app = Fastify({
    loggerInstance: container.log as FastifyBaseLogger,
    bodyLimit: container.config.bodyLimitBytes,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    return503OnClosing: true,
    forceCloseConnections: false,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  registerErrorHandling(app);
  app.addSchema(ErrorV1Schema);
  app.addSchema(ErrorV0Schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vigil API',
        version: API_VERSION,
        description:
          'Scanner API v1 (`/api/scanner/v1`: scans, source uploads, credits, finding tickets) and Platform API v0 (`/api/v0`: repositories, findings, views, reports, audit log, users). Operations tagged `extension` are management endpoints beyond the published documents.',
      },
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
          UserBearer: { type: 'http', scheme: 'bearer', description: 'User API token `vgl_u_…`' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}`,
    },
  });

  registerAuth(app, {
    auth: container.services.auth,
    rateLimiter: container.rateLimiter,
    policy: container.config.rateLimit,
  });
  registerMetrics(app);

  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { kind: 'none' } } }, async () =>
    app.swagger(),
  );
  await app.register(scalar, {
    routePrefix: '/docs',
    configuration: { url: '/openapi.json', title: 'Vigil API' },
  });

  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'getHealth',
        tags: ['health'],
        summary: 'Liveness: the process answers',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
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
        summary: 'Readiness: the database answers',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), database: Type.Literal('ok') }),
          503: Type.Object({ status: Type.Literal('unavailable'), database: Type.Literal('unreachable') }),
        },
      },
      config: { auth: { kind: 'none' } },
    },
    async (_request, reply) => {
      if (await container.database.ping()) return { status: 'ready' as const, database: 'ok' as const };
      return reply.code(503).send({ status: 'unavailable' as const, database: 'unreachable' as const });
    },
  );

  await registerRouteModules(app, container);
  return app;
}
