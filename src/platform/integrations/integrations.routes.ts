import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { DateTimeSchema, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  INTEGRATION_PROVIDERS,
  type IntegrationsService,
} from '../../organization/integrations/integrations.service.ts';

const ProviderSchema = Type.Union(INTEGRATION_PROVIDERS.map((p) => Type.Literal(p)));
export const IntegrationSchema = Type.Object(
  {
    id: UuidSchema,
    provider: ProviderSchema,
    site: Type.String({ description: 'The site of a tracker_b connection; empty for single connections' }),
    settings: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Base URLs and destination routing; never secrets',
    }),
    credentialFields: Type.Array(Type.String(), { description: 'Names of the stored credential fields' }),
    createdAt: DateTimeSchema,
    updatedAt: DateTimeSchema,
  },
  { $id: 'Integration' },
);
const tags = ['extension', 'integrations'];
const security = [{ UserBearer: [] }];

/** Company integrations (extension; company managers and platform admins). */
export function registerIntegrationRoutes(app: App, service: IntegrationsService): void {
  app.put(
    '/api/v0/companies/:companyId/integrations/:provider',
    {
      schema: {
        operationId: 'putIntegration',
        tags,
        security,
        summary: 'Connect or update an integration (credentials are stored encrypted and never returned)',
        description: [
          '`tracker_a`: credentials `apiKey` (sent raw) or `accessToken` (Bearer); settings `baseUrl`, `workspaceUrlKey`, `appUrl`, `destination: {teamId, labelIds?, priority?}`.',
          "`tracker_b`: `site` (https://SITE); credentials `email` + `apiToken` (Basic) or `accessToken` (Bearer); settings `baseUrl` (gateway), `destination: {projectKey, issueType?}`, `default` (this site's destination wins when several have one).",
          '`sourcehost`: credentials `token` and `webhookSecret` (signs inbound webhooks); settings `baseUrl` (git), `apiBaseUrl` (REST API; default baseUrl), `repositoryListing` (`installation` or `user`), `accountName`.',
          "Settings are checked against the provider's: an unknown setting, a destination without its `teamId` or `projectKey`, or a value of the wrong type answers 400 naming the setting.",
        ].join('\n\n'),
        params: Type.Object({ companyId: UuidSchema, provider: ProviderSchema }),
        body: Type.Object(
          {
            site: Type.Optional(Type.String({ maxLength: 2048 })),
            credentials: Type.Record(Type.String(), Type.String({ maxLength: 8192 })),
            settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { $id: 'PutIntegrationRequest', additionalProperties: false },
        ),
        response: { 200: ref(IntegrationSchema), 201: ref(IntegrationSchema), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      const { view, created } = await service.putIntegration(
        request.actor,
        request.params.companyId,
        request.params.provider,
        request.body,
      );
      return reply.code(created ? 201 : 200).send(view);
    },
  );

  app.get(
    '/api/v0/companies/:companyId/integrations',
    {
      schema: {
        operationId: 'listIntegrations',
        tags,
        security,
        summary: 'List connected integrations (without secrets)',
        params: Type.Object({ companyId: UuidSchema }),
        response: {
          200: Type.Object({ items: Type.Array(ref(IntegrationSchema)) }, { $id: 'IntegrationList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ items: await service.listIntegrations(request.actor, request.params.companyId) }),
  );

  app.get(
    '/api/v0/companies/:companyId/trackers',
    {
      schema: {
        operationId: 'listConnectedTrackers',
        tags,
        security,
        summary: 'The issue trackers connected to the company (for its users; no settings)',
        params: Type.Object({ companyId: UuidSchema }),
        response: {
          200: Type.Object(
            {
              items: Type.Array(
                Type.Object({
                  provider: Type.Union([Type.Literal('tracker_a'), Type.Literal('tracker_b')]),
                  site: Type.String(),
                }),
              ),
            },
            { $id: 'ConnectedTrackerList' },
          ),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ items: await service.listTrackers(request.actor, request.params.companyId) }),
  );

  app.delete(
    '/api/v0/companies/:companyId/integrations/:provider',
    {
      schema: {
        operationId: 'deleteIntegration',
        tags,
        security,
        summary: 'Disconnect an integration (one site with ?site=, else every connection of the provider)',
        params: Type.Object({ companyId: UuidSchema, provider: ProviderSchema }),
        querystring: Type.Object({ site: Type.Optional(Type.String()) }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.deleteIntegration(
        request.actor,
        request.params.companyId,
        request.params.provider,
        request.query.site,
      );
      return reply.code(204).send(null);
    },
  );
}
