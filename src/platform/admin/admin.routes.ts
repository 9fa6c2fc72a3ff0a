import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CreditBalancesSchema } from '../../organization/credits/credits.schemas.ts';
import {
  AdminUserSchema,
  CompanySchema,
  CreateCompanyRequestSchema,
  CreatedTokenSchema,
  CreateTokenRequestSchema,
  CreateUserRequestSchema,
  GrantCreditsRequestSchema,
} from './admin.schemas.ts';
import type { AdminService } from './admin.service.ts';

const tags = ['extension', 'admin'];
const security = [{ UserBearer: [] }];

/** Platform-admin management endpoints (extension). */
export function registerAdminRoutes(app: App, admin: AdminService): void {
  app.post(
    '/api/v0/admin/companies',
    {
      schema: {
        operationId: 'adminCreateCompany',
        tags,
        security,
        summary: 'Create a company (platform admin)',
        body: CreateCompanyRequestSchema,
        response: { 201: ref(CompanySchema), ...v0Errors(409) },
      },
    },
    async (request, reply) => {
      const row = await admin.createCompany(request.actor, request.body);
      return reply.code(201).send({ ...row, createdAt: row.createdAt.toISOString() });
    },
  );

  app.get(
    '/api/v0/admin/companies',
    {
      schema: {
        operationId: 'adminListCompanies',
        tags,
        security,
        summary: 'List every company, by handle (platform admin)',
        response: {
          200: Type.Object({ companies: Type.Array(ref(CompanySchema)) }, { $id: 'CompanyList' }),
          ...v0Errors(),
        },
      },
    },
    async (request) => {
      const rows = await admin.listCompanies(request.actor);
      return { companies: rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString() })) };
    },
  );

  app.post(
    '/api/v0/admin/users',
    {
      schema: {
        operationId: 'adminCreateUser',
        tags,
        security,
        summary: 'Create a user, optionally in a company (platform admin)',
        body: CreateUserRequestSchema,
        response: { 201: AdminUserSchema, ...v0Errors(404, 409) },
      },
    },
    async (request, reply) => {
      const user = await admin.createUser(request.actor, request.body);
      return reply.code(201).send({
        id: user.id,
        username: user.username,
        name: user.name,
        email: user.email,
        companyId: user.companyId,
        companyRole: user.companyRole,
        createdAt: user.createdAt.toISOString(),
      });
    },
  );

  app.post(
    '/api/v0/admin/users/:userId/tokens',
    {
      schema: {
        operationId: 'adminCreateUserToken',
        tags,
        security,
        summary: 'Issue a user API token (shown once; expiry required, default 90 days)',
        params: Type.Object({ userId: UuidSchema }),
        body: Type.Optional(CreateTokenRequestSchema),
        response: { 201: CreatedTokenSchema, ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const created = await admin.createUserToken(request.actor, request.params.userId, {
        expiresAt: body.expiresAt ? new Date(body.expiresAt) : undefined,
        name: body.name,
      });
      return reply.code(201).send({ ...created, expiresAt: created.expiresAt.toISOString() });
    },
  );

  app.delete(
    '/api/v0/admin/users/:userId/tokens/:tokenId',
    {
      schema: {
        operationId: 'adminRevokeUserToken',
        tags,
        security,
        summary: 'Revoke a user API token',
        params: Type.Object({ userId: UuidSchema, tokenId: UuidSchema }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await admin.revokeUserToken(request.actor, request.params.userId, request.params.tokenId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v0/admin/companies/:companyId/credits',
    {
      schema: {
        operationId: 'adminGrantCredits',
        tags,
        security,
        summary: 'Grant scan credits to a company',
        params: Type.Object({ companyId: UuidSchema }),
        body: GrantCreditsRequestSchema,
        response: { 200: CreditBalancesSchema, ...v0Errors(404) },
      },
    },
    async (request) =>
      admin.grantCredits(request.actor, request.params.companyId, request.body.amount, request.body.note),
  );
}
