import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  AuditorPublicProfileSchema,
  AwardBadgeRequestSchema,
  ChangeCompanyRoleRequestSchema,
  CompanyUserSchema,
  ListCompanyUsersQuerySchema,
  UpdateProfileRequestSchema,
} from './users.schemas.ts';
import type { UsersService } from './users.service.ts';

const security = [{ UserBearer: [] }];
const companyParams = Type.Object({ company_id: UuidSchema });
const memberParams = Type.Object({ company_id: UuidSchema, user_id: UuidSchema });
const userParams = Type.Object({ user_id: UuidSchema });
const ext = ['extension', 'users'];

/** Company users (v0 §4.10) and the membership and profile operations behind them (extensions). */
export function registerUserRoutes(app: App, users: UsersService): void {
  app.get(
    '/api/v0/companies/:company_id/users',
    {
      schema: {
        operationId: 'listCompanyUsers',
        tags: ['users'],
        security,
        summary: 'List the users of a company',
        description:
          'Company users of the company and admins with `read_all_companies`. By default only enabled users; `include_all=true` adds deleted and disabled users. A person invited but not yet joined is not a company user: their invitation, with only what the inviter supplied, is listed by `listCompanyInvitations`.',
        params: companyParams,
        querystring: ListCompanyUsersQuerySchema,
        response: {
          200: Type.Object({ users: Type.Array(ref(CompanyUserSchema)) }, { $id: 'CompanyUserList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({
      users: await users.listCompanyUsers(request.actor, request.params.company_id, request.query),
    }),
  );

  app.post(
    '/api/v0/companies/:company_id/users/:user_id/join',
    {
      schema: {
        operationId: 'joinCompany',
        tags: ext,
        security,
        summary: 'Join a company by an SSO rule of your e-mail domain (invitations: `acceptInvitation`)',
        params: memberParams,
        response: { 200: ref(CompanyUserSchema), ...v0Errors(404) },
      },
    },
    async (request) => users.joinCompany(request.actor, request.params.company_id, request.params.user_id),
  );

  app.post(
    '/api/v0/companies/:company_id/users/:user_id/disable',
    {
      schema: {
        operationId: 'disableCompanyUser',
        tags: ext,
        security,
        summary: "Disable a user's membership (company managers)",
        params: memberParams,
        response: { 200: ref(CompanyUserSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) => users.disableUser(request.actor, request.params.company_id, request.params.user_id),
  );

  app.post(
    '/api/v0/companies/:company_id/users/:user_id/reenable',
    {
      schema: {
        operationId: 'reenableCompanyUser',
        tags: ext,
        security,
        summary: "Re-enable a user's membership (company managers)",
        params: memberParams,
        response: { 200: ref(CompanyUserSchema), ...v0Errors(404) },
      },
    },
    async (request) => users.reenableUser(request.actor, request.params.company_id, request.params.user_id),
  );

  app.patch(
    '/api/v0/companies/:company_id/users/:user_id',
    {
      schema: {
        operationId: 'changeCompanyRole',
        tags: ext,
        security,
        summary: "Change a user's company role (company managers)",
        params: memberParams,
        body: ChangeCompanyRoleRequestSchema,
        response: { 200: ref(CompanyUserSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) =>
      users.changeCompanyRole(
        request.actor,
        request.params.company_id,
        request.params.user_id,
        request.body.role,
      ),
  );

  app.get(
    '/api/v0/users/:user_id/profile',
    {
      schema: {
        operationId: 'getAuditorProfile',
        tags: ext,
        security,
        summary: "A user's auditor public profile",
        params: userParams,
        response: { 200: ref(AuditorPublicProfileSchema), ...v0Errors(404) },
      },
    },
    async (request) => users.getProfile(request.actor, request.params.user_id),
  );

  app.patch(
    '/api/v0/users/:user_id/profile',
    {
      schema: {
        operationId: 'updateAuditorProfile',
        tags: ext,
        security,
        summary: 'Change a profile (the user; platform admins also verification, NDA, reputation, guild)',
        params: userParams,
        body: UpdateProfileRequestSchema,
        response: { 200: ref(AuditorPublicProfileSchema), ...v0Errors(404) },
      },
    },
    async (request) => users.updateProfile(request.actor, request.params.user_id, request.body),
  );

  app.post(
    '/api/v0/users/:user_id/badges',
    {
      schema: {
        operationId: 'awardBadge',
        tags: ext,
        security,
        summary: 'Award a badge to a user (platform admins)',
        params: userParams,
        body: AwardBadgeRequestSchema,
        response: { 201: ref(AuditorPublicProfileSchema), ...v0Errors(404) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await users.awardBadge(request.actor, request.params.user_id, request.body)),
  );
}
