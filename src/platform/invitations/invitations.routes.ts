import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CompanyUserSchema } from '../users/users.schemas.ts';
import {
  CompanyInvitationListSchema,
  CompanyInvitationSchema,
  InviteUserRequestSchema,
  ListInvitationsQuerySchema,
  RespondToInvitationRequestSchema,
} from './invitations.schemas.ts';
import type { InvitationsService } from './invitations.service.ts';

const security = [{ UserBearer: [] }];
const tags = ['extension', 'users'];
const companyParams = Type.Object({ company_id: UuidSchema });
const companyInvitationParams = Type.Object({ company_id: UuidSchema, invitation_id: UuidSchema });
const invitationParams = Type.Object({ invitation_id: UuidSchema });

/** An answer without a body (an invitation by username needs no secret) reads as `{}`. */
async function emptyBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

/** Company invitations (extensions, ADR 0016): invite, list, revoke; the invitee lists, accepts, declines. */
export function registerInvitationRoutes(app: App, invitations: InvitationsService): void {
  app.post(
    '/api/v0/companies/:company_id/users',
    {
      schema: {
        operationId: 'inviteCompanyUser',
        tags,
        security,
        summary: 'Invite someone to a company by username or e-mail address (company managers)',
        description:
          'Answers 202 with the invitation, which holds only what was supplied: the same answer whether or not a user has that name or address, and no user is created. An e-mail goes out to the supplied address (else to the invited user’s own). The invitee becomes a company user when they accept (`acceptInvitation`).',
        params: companyParams,
        body: InviteUserRequestSchema,
        response: { 202: ref(CompanyInvitationSchema), ...v0Errors(404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await invitations.invite(request.actor, request.params.company_id, request.body)),
  );

  app.get(
    '/api/v0/companies/:company_id/invitations',
    {
      schema: {
        operationId: 'listCompanyInvitations',
        tags,
        security,
        summary: "A company's invitations, newest first (company managers and cross-company readers)",
        params: companyParams,
        querystring: ListInvitationsQuerySchema,
        response: { 200: ref(CompanyInvitationListSchema), ...v0Errors(404) },
      },
    },
    async (request) => ({
      invitations: await invitations.listCompanyInvitations(
        request.actor,
        request.params.company_id,
        request.query,
      ),
    }),
  );

  app.post(
    '/api/v0/companies/:company_id/invitations/:invitation_id/revoke',
    {
      schema: {
        operationId: 'revokeCompanyInvitation',
        tags,
        security,
        summary: 'Revoke a pending invitation (company managers); revoking a revoked one changes nothing',
        params: companyInvitationParams,
        response: { 200: ref(CompanyInvitationSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) =>
      invitations.revoke(request.actor, request.params.company_id, request.params.invitation_id),
  );

  app.get(
    '/api/v0/invitations',
    {
      schema: {
        operationId: 'listMyInvitations',
        tags,
        security,
        summary: "The caller's pending invitations (those naming their username)",
        response: { 200: ref(CompanyInvitationListSchema), ...v0Errors() },
      },
    },
    async (request) => ({ invitations: await invitations.listMine(request.actor) }),
  );

  app.post(
    '/api/v0/invitations/:invitation_id/accept',
    {
      schema: {
        operationId: 'acceptInvitation',
        tags,
        security,
        summary: 'Accept an invitation with your own token: you become a user of the company',
        description:
          'An invitation by username is accepted by the user of that name; one by e-mail address alone needs `secret`, the one-time secret of its e-mail. Any other caller gets 404.',
        params: invitationParams,
        body: RespondToInvitationRequestSchema,
        response: { 200: ref(CompanyUserSchema), ...v0Errors(404, 409) },
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) =>
      invitations.accept(request.actor, request.params.invitation_id, request.body, { address: request.ip }),
  );

  app.post(
    '/api/v0/invitations/:invitation_id/decline',
    {
      schema: {
        operationId: 'declineInvitation',
        tags,
        security,
        summary: 'Decline an invitation (the invitee, as for accepting)',
        params: invitationParams,
        body: RespondToInvitationRequestSchema,
        response: { 200: ref(CompanyInvitationSchema), ...v0Errors(404, 409) },
      },
      preValidation: emptyBodyIsEmptyObject,
    },
    async (request) =>
      invitations.decline(request.actor, request.params.invitation_id, request.body, { address: request.ip }),
  );
}
