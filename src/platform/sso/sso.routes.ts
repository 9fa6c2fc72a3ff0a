import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CreateSsoRuleRequestSchema, SsoRuleSchema } from './sso.schemas.ts';
import type { SsoService } from './sso.service.ts';

const security = [{ UserBearer: [] }];
const params = Type.Object({ company_id: UuidSchema });

/** Company SSO enforcement rules (v0 §4.5) and their management (extension). */
export function registerSsoRoutes(app: App, sso: SsoService): void {
  app.get(
    '/api/v0/companies/:company_id/sso-enforcement-rules',
    {
      schema: {
        operationId: 'listSsoEnforcementRules',
        tags: ['sso'],
        security,
        summary: 'List the SSO enforcement rules of a company',
        description: 'Company managers and admins with `read_all_companies`.',
        params,
        response: {
          200: Type.Array(ref(SsoRuleSchema), { $id: 'SsoEnforcementRuleList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => sso.listRules(request.actor, request.params.company_id),
  );

  app.post(
    '/api/v0/companies/:company_id/sso-enforcement-rules',
    {
      schema: {
        operationId: 'createSsoEnforcementRule',
        tags: ['extension', 'sso'],
        security,
        summary: 'Add an SSO enforcement rule for an email domain (company managers)',
        params,
        body: CreateSsoRuleRequestSchema,
        response: { 201: ref(SsoRuleSchema), ...v0Errors(404, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await sso.createRule(request.actor, request.params.company_id, request.body.domain)),
  );

  app.delete(
    '/api/v0/companies/:company_id/sso-enforcement-rules/:rule_id',
    {
      schema: {
        operationId: 'deleteSsoEnforcementRule',
        tags: ['extension', 'sso'],
        security,
        summary: 'Delete an SSO enforcement rule (company managers)',
        params: Type.Object({ company_id: UuidSchema, rule_id: UuidSchema }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await sso.deleteRule(request.actor, request.params.company_id, request.params.rule_id);
      return reply.code(204).send(null);
    },
  );
}
