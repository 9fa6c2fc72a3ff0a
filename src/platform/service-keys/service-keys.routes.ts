import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../auth/credentials.ts';
import type { App } from '../../http/app-type.ts';
import { DateTimeSchema, Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import type { ServiceKeysService } from '../../organization/service-keys/service-keys.service.ts';

const ScopeSchema = Type.Union(SCOPES.map((s) => Type.Literal(s)));
export const ServiceKeySchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    prefix: Type.String(),
    scopes: Type.Array(ScopeSchema),
    expiresAt: Nullable(DateTimeSchema),
    revokedAt: Nullable(DateTimeSchema),
    createdAt: DateTimeSchema,
    /** When the key last authenticated a request (to the minute); null: never. */
    lastUsedAt: Nullable(DateTimeSchema),
  },
  { $id: 'ServiceKey' },
);
const tags = ['extension', 'service-keys'];
const security = [{ UserBearer: [] }];
const params = Type.Object({ companyId: UuidSchema });

/** Company service keys (extension; company managers and platform admins). */
export function registerServiceKeyRoutes(app: App, keys: ServiceKeysService): void {
  app.post(
    '/api/v0/companies/:companyId/service-keys',
    {
      schema: {
        operationId: 'createServiceKey',
        tags,
        security,
        summary: 'Create an organization service key (the key is shown once)',
        description:
          'Without `scopes` the key gets every scope except `findings:write`, which must be granted explicitly.',
        params,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            scopes: Type.Optional(Type.Array(ScopeSchema, { minItems: 1, uniqueItems: true })),
            expiresAt: Type.Optional(DateTimeSchema),
          },
          { $id: 'CreateServiceKeyRequest', additionalProperties: false },
        ),
        response: {
          201: Type.Composite([ServiceKeySchema, Type.Object({ key: Type.String() })], {
            $id: 'CreatedServiceKey',
          }),
          ...v0Errors(404),
        },
      },
    },
    async (request, reply) => {
      const { name, scopes, expiresAt } = request.body;
      const created = await keys.createKey(request.actor, request.params.companyId, {
        name,
        scopes,
        expiresAt: expiresAt ? new Date(expiresAt) : undefined,
      });
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/v0/companies/:companyId/service-keys',
    {
      schema: {
        operationId: 'listServiceKeys',
        tags,
        security,
        summary: 'List the organization service keys (without secrets)',
        params,
        response: {
          200: Type.Object({ items: Type.Array(ref(ServiceKeySchema)) }, { $id: 'ServiceKeyList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ items: await keys.listKeys(request.actor, request.params.companyId) }),
  );

  app.delete(
    '/api/v0/companies/:companyId/service-keys/:keyId',
    {
      schema: {
        operationId: 'revokeServiceKey',
        tags,
        security,
        summary: 'Revoke a service key (repeating it is safe)',
        params: Type.Object({ companyId: UuidSchema, keyId: UuidSchema }),
        response: { 200: ref(ServiceKeySchema), ...v0Errors(404) },
      },
    },
    async (request) => keys.revokeKey(request.actor, request.params.companyId, request.params.keyId),
  );
}
