import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import type { SourcehostService } from './sourcehost.service.ts';

const tags = ['extension', 'sourcehost'];
const security = [{ UserBearer: [] }];
/** The largest webhook body taken (GitHub caps payloads at 25 MB; pushes are far smaller). */
const WEBHOOK_BODY_LIMIT = 10 * 1024 * 1024;

const ScanTypeSchema = Type.Union([Type.Literal('lite'), Type.Literal('standard'), Type.Literal('audit')]);
const FailOnSchema = Type.Union(
  [
    Type.Literal('critical'),
    Type.Literal('high'),
    Type.Literal('medium'),
    Type.Literal('low'),
    Type.Literal('informational'),
  ],
  { description: 'Lowest finding severity that makes the commit status `failure`' },
);

export const SourcehostDeliverySchema = Type.Object(
  {
    id: UuidSchema,
    deliveryId: Type.String({ description: 'X-GitHub-Delivery of the delivery' }),
    event: Type.String({ description: 'X-GitHub-Event: push, pull_request, ping, …' }),
    action: Nullable(Type.String()),
    repository: Nullable(Type.String()),
    ref: Nullable(Type.String()),
    commit: Nullable(Type.String()),
    outcome: Type.Union(
      ['received', 'scanned', 'ignored', 'no_credits', 'failed'].map((s) => Type.Literal(s)),
      {
        description: 'What was done: a scan created, ignored (reason says why), refused for credits, failed',
      },
    ),
    reason: Nullable(Type.String()),
    scanIds: Type.Array(UuidSchema),
    duplicate: Type.Boolean({
      description: 'True when this delivery id had been received before (nothing done again)',
    }),
    receivedAt: DateTimeSchema,
    processedAt: Nullable(DateTimeSchema),
  },
  { $id: 'SourcehostDelivery' },
);

export const LinkedWorkspaceSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    prefix: Type.String(),
    watchBranches: Type.Array(Type.String(), { description: 'Empty: the default branch' }),
    autoScanType: ScanTypeSchema,
    failOn: FailOnSchema,
  },
  { $id: 'LinkedWorkspace' },
);

export const HostedRepositorySchema = Type.Object(
  {
    fullName: Type.String(),
    private: Type.Boolean(),
    defaultBranch: Type.String(),
    htmlUrl: Nullable(Type.String()),
    linked: Type.Boolean(),
    workspaces: Type.Array(ref(LinkedWorkspaceSchema)),
  },
  { $id: 'HostedRepository' },
);

const RepositoryParams = Type.Object({
  companyId: UuidSchema,
  owner: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }),
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }),
});

/** Source-host extension operations: inbound webhook, deliveries, accessible repositories, linking. */
export async function registerSourcehostRoutes(app: App, service: SourcehostService): Promise<void> {
  // Encapsulated: the signature is computed over the raw body, so this route's body stays bytes.
  await app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      ['application/json', 'application/x-www-form-urlencoded'],
      { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      '/api/v0/webhooks/sourcehost/:integrationId',
      {
        schema: {
          operationId: 'receiveSourcehostWebhook',
          tags,
          summary: 'Inbound source-host webhook (GitHub format: push and pull_request start scans)',
          description: [
            'Signed with `X-Hub-Signature-256: sha256=HMAC-SHA256(webhookSecret, raw body)`, the `webhookSecret` credential of the sourcehost integration; `X-GitHub-Event` and `X-GitHub-Delivery` name the event and the delivery. Send the body as `application/json`.',
            'A bad or missing signature → 401 and nothing stored; after too many bad signatures from one address or for one integration → 429 with `Retry-After`, the signature not checked. A delivery id received before → 200 and nothing done again. A push to a watched branch of a linked repository, or a pull request opened, reopened or updated against one, creates a scan of its commit per linked workspace (type and fail-on severity from the workspace) → 202; anything else → 202 with outcome `ignored` and the reason recorded. No credits → 202 with outcome `no_credits`.',
          ].join('\n\n'),
          security: [{ WebhookSignature: [] }],
          params: Type.Object({ integrationId: Type.String({ maxLength: 64 }) }),
          response: {
            200: ref(SourcehostDeliverySchema),
            202: ref(SourcehostDeliverySchema),
            ...v0Errors(400, 401, 413, 415),
          },
        },
        config: { auth: { kind: 'none' } },
      },
      async (request, reply) => {
        const header = (name: string) => {
          const value = request.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const result = await service.receiveWebhook({
          address: request.ip,
          integrationId: request.params.integrationId,
          rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          signature: header('x-hub-signature-256'),
          event: header('x-github-event'),
          deliveryId: header('x-github-delivery'),
        });
        return reply.code(result.status).send(result.body);
      },
    );
  });

  app.get(
    '/api/v0/companies/:companyId/sourcehost/deliveries',
    {
      schema: {
        operationId: 'listSourcehostDeliveries',
        tags,
        security,
        summary: 'Webhook deliveries of the last 7 days, newest first (company managers)',
        params: Type.Object({ companyId: UuidSchema }),
        querystring: Type.Object(
          {
            limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
            next: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              items: Type.Array(ref(SourcehostDeliverySchema)),
              nextValue: Nullable(Type.String()),
            },
            { $id: 'SourcehostDeliveryList' },
          ),
          ...v0Errors(400, 404),
        },
      },
    },
    async (request) => service.listDeliveries(request.actor, request.params.companyId, request.query),
  );

  app.post(
    '/api/v0/companies/:companyId/sourcehost/deliveries/:deliveryId/redeliver',
    {
      schema: {
        operationId: 'redeliverSourcehostDelivery',
        tags,
        security,
        summary: 'Process a stored delivery again (a scan it already created is not created twice)',
        params: Type.Object({ companyId: UuidSchema, deliveryId: UuidSchema }),
        response: { 200: ref(SourcehostDeliverySchema), ...v0Errors(404) },
      },
    },
    async (request) => service.redeliver(request.actor, request.params.companyId, request.params.deliveryId),
  );

  app.get(
    '/api/v0/companies/:companyId/sourcehost/repositories',
    {
      schema: {
        operationId: 'listSourcehostRepositories',
        tags,
        security,
        summary: 'Repositories the sourcehost integration can reach, with the workspaces linked to each',
        description:
          'Read from the source host (`GET /installation/repositories`, or `GET /user/repos` with settings.repositoryListing `user`; every page of the `Link` header) and kept for 60 s; `refresh=true` reads again.',
        params: Type.Object({ companyId: UuidSchema }),
        querystring: Type.Object({ refresh: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        response: {
          200: Type.Object(
            {
              items: Type.Array(ref(HostedRepositorySchema)),
              truncated: Type.Boolean({
                description: 'True when the host had more pages than are read (50 × 100)',
              }),
            },
            { $id: 'HostedRepositoryList' },
          ),
          ...v0Errors(404, 409, 502),
        },
      },
    },
    async (request) =>
      service.listRepositories(request.actor, request.params.companyId, {
        refresh: request.query.refresh === true,
      }),
  );

  app.put(
    '/api/v0/companies/:companyId/sourcehost/repositories/:owner/:name/link',
    {
      schema: {
        operationId: 'linkSourcehostRepository',
        tags,
        security,
        summary:
          'Link a repository (and prefix) to a workspace that scans it on push, or change its settings',
        params: RepositoryParams,
        body: Type.Object(
          {
            prefix: Type.Optional(Type.String({ maxLength: 1024 })),
            watchBranches: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 }),
            ),
            scanType: Type.Optional(ScanTypeSchema),
            failOn: Type.Optional(FailOnSchema),
          },
          { $id: 'LinkSourcehostRepositoryRequest', additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            { repository: Type.String(), workspace: ref(LinkedWorkspaceSchema) },
            { $id: 'LinkedSourcehostRepository' },
          ),
          ...v0Errors(400, 404, 409),
        },
      },
    },
    async (request) =>
      service.linkRepository(
        request.actor,
        request.params.companyId,
        `${request.params.owner}/${request.params.name}`,
        request.body ?? {},
      ),
  );

  app.delete(
    '/api/v0/companies/:companyId/sourcehost/repositories/:owner/:name/link',
    {
      schema: {
        operationId: 'unlinkSourcehostRepository',
        tags,
        security,
        summary: 'Stop scanning a repository (and prefix) on push; its workspace and scans stay',
        params: RepositoryParams,
        querystring: Type.Object(
          { prefix: Type.Optional(Type.String({ maxLength: 1024 })) },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.unlinkRepository(
        request.actor,
        request.params.companyId,
        `${request.params.owner}/${request.params.name}`,
        request.query.prefix,
      );
      return reply.code(204).send(null);
    },
  );
}
