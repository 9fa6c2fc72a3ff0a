import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  CreateRepositoryRequestSchema,
  PutMemberRequestSchema,
  RepositoryEventSchema,
  RepositoryMemberSchema,
  RepositorySchema,
  UpdateRepositoryRequestSchema,
} from './repositories.schemas.ts';
import type { RepositoriesService } from './repositories.service.ts';

const security = [{ UserBearer: [] }];
const ext = ['extension', 'repositories'];
const repoParams = Type.Object({ repo_id: UuidSchema });
const memberParams = Type.Object({ repo_id: UuidSchema, user_id: UuidSchema });

/** Repositories of a company (v0 §4.2), the change log (v0 §4.7), and their management (extensions). */
export function registerRepositoryRoutes(app: App, repositories: RepositoriesService): void {
  app.get(
    '/api/v0/companies/:company_id/repositories',
    {
      schema: {
        operationId: 'listCompanyRepositories',
        tags: ['repositories'],
        security,
        summary: 'List the repositories of a company that the user has joined or can join',
        description:
          'Company users see all of their company’s repositories, as do admins with `read_all_companies`; other users see the repositories where they have a role and the public (joinable) ones. `rank` ranks the caller among the reviewers by accepted findings, then reputation (0 when not a reviewer); `reward` sums the rewards of the caller’s published findings.',
        params: Type.Object({ company_id: UuidSchema }),
        response: {
          200: Type.Object({ items: Type.Array(ref(RepositorySchema)) }, { $id: 'RepositoryList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({
      items: await repositories.listCompanyRepositories(request.actor, request.params.company_id),
    }),
  );

  app.post(
    '/api/v0/companies/:company_id/repositories',
    {
      schema: {
        operationId: 'createRepository',
        tags: ext,
        security,
        summary: 'Create a repository with asset groups and safe harbor (company managers, platform admins)',
        params: Type.Object({ company_id: UuidSchema }),
        body: CreateRepositoryRequestSchema,
        response: { 201: ref(RepositorySchema), ...v0Errors(404) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await repositories.createRepository(request.actor, request.params.company_id, request.body)),
  );

  app.get(
    '/api/v0/repositories/:repo_id',
    {
      schema: {
        operationId: 'getRepository',
        tags: ext,
        security,
        summary: 'Get a repository the user can see',
        params: repoParams,
        response: { 200: ref(RepositorySchema), ...v0Errors(404) },
      },
    },
    async (request) => repositories.getRepository(request.actor, request.params.repo_id),
  );

  app.patch(
    '/api/v0/repositories/:repo_id',
    {
      schema: {
        operationId: 'updateRepository',
        tags: ext,
        security,
        summary: 'Update a repository (repository admins, company managers); writes one change-log event',
        params: repoParams,
        body: UpdateRepositoryRequestSchema,
        response: { 200: ref(RepositorySchema), ...v0Errors(404) },
      },
    },
    async (request) => repositories.updateRepository(request.actor, request.params.repo_id, request.body),
  );

  app.post(
    '/api/v0/repositories/:repo_id/finish',
    {
      schema: {
        operationId: 'finishRepository',
        tags: ext,
        security,
        summary: 'Mark the engagement finished (repository admins, company managers)',
        params: repoParams,
        response: { 200: ref(RepositorySchema), ...v0Errors(404) },
      },
    },
    async (request) => repositories.finishRepository(request.actor, request.params.repo_id),
  );

  app.get(
    '/api/v0/repositories/:repo_id/log',
    {
      schema: {
        operationId: 'getRepositoryLog',
        tags: ['repositories'],
        security,
        summary: 'The change log of a repository, newest first',
        description:
          'Repository admins and clients (also company users, who act as the client, platform admins and `read_all_companies` admins). Each event holds the old and new values of the fields one change touched.',
        params: repoParams,
        response: {
          200: Type.Object(
            { events: Type.Array(ref(RepositoryEventSchema)) },
            { $id: 'RepositoryChangeLog' },
          ),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ events: await repositories.listEvents(request.actor, request.params.repo_id) }),
  );

  app.get(
    '/api/v0/repositories/:repo_id/members',
    {
      schema: {
        operationId: 'listRepositoryMembers',
        tags: ext,
        security,
        summary: 'Members of a repository (repository admins and clients, company users)',
        params: repoParams,
        response: {
          200: Type.Object(
            { members: Type.Array(ref(RepositoryMemberSchema)) },
            { $id: 'RepositoryMemberList' },
          ),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ members: await repositories.listMembers(request.actor, request.params.repo_id) }),
  );

  app.put(
    '/api/v0/repositories/:repo_id/members/:user_id',
    {
      schema: {
        operationId: 'putRepositoryMember',
        tags: ext,
        security,
        summary:
          'Add a user with a repository role, or change the role, team or pings (repository admins, company managers)',
        params: memberParams,
        body: PutMemberRequestSchema,
        response: { 200: ref(RepositoryMemberSchema), ...v0Errors(404) },
      },
    },
    async (request) =>
      repositories.putMember(request.actor, request.params.repo_id, request.params.user_id, request.body),
  );

  app.delete(
    '/api/v0/repositories/:repo_id/members/:user_id',
    {
      schema: {
        operationId: 'removeRepositoryMember',
        tags: ext,
        security,
        summary: 'Remove a member (repository admins, company managers)',
        params: memberParams,
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await repositories.removeMember(request.actor, request.params.repo_id, request.params.user_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v0/repositories/:repo_id/join',
    {
      schema: {
        operationId: 'joinRepository',
        tags: ext,
        security,
        summary: 'Join a public repository as a reviewer',
        params: repoParams,
        response: { 200: ref(RepositoryMemberSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) => repositories.joinRepository(request.actor, request.params.repo_id),
  );
}
