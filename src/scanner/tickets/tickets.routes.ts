import type { ServiceActor } from '../../auth/actor.ts';
import type { App } from '../../http/app-type.ts';
import { v1Errors } from '../../http/schemas.ts';
import {
  FindingParamsSchema,
  FindingProviderParamsSchema,
  IssueTrackerSendResultSchema,
  LinkFindingTicketBodySchema,
  TicketLinkResultSchema,
  TicketListResultSchema,
} from './tickets.schemas.ts';
import type { TicketsService } from './tickets.service.ts';

const security: Array<Record<string, string[]>> = [{ ServiceBearer: [] }, { ServiceApiKey: [] }];

/** getFindingTickets, linkFindingTicket, sendFindingToIssueTracker. */
export function registerTicketRoutes(app: App, tickets: TicketsService): void {
  app.get(
    '/api/scanner/v1/findings/:findingId/tickets',
    {
      schema: {
        operationId: 'getFindingTickets',
        tags: ['tickets'],
        summary: "Tickets linked to a finding of the key's organization",
        security,
        params: FindingParamsSchema,
        response: { 200: TicketListResultSchema, ...v1Errors(404) },
      },
      config: { auth: { kind: 'service', scope: 'findings:read' } },
    },
    async (request) => tickets.listTickets(request.actor as ServiceActor, request.params.findingId),
  );

  app.post(
    '/api/scanner/v1/findings/:findingId/tickets',
    {
      schema: {
        operationId: 'linkFindingTicket',
        tags: ['tickets'],
        summary: 'Link a finding to an existing ticket, verified read-only through the integration',
        security,
        params: FindingParamsSchema,
        body: LinkFindingTicketBodySchema,
        response: { 200: TicketLinkResultSchema, ...v1Errors(404, 409, 502) },
      },
      config: { auth: { kind: 'service', scope: 'findings:write' } },
    },
    async (request) =>
      tickets.linkTicket(request.actor as ServiceActor, request.params.findingId, request.body),
  );

  app.post(
    '/api/scanner/v1/findings/:findingId/issue-trackers/:provider',
    {
      schema: {
        operationId: 'sendFindingToIssueTracker',
        tags: ['tickets'],
        summary: 'Create a ticket from a finding in the saved destination, at most once',
        description:
          'The export is recorded before the provider is called. After a 502 with `ambiguous: true`, sending again first looks for the ticket the earlier attempt may have created and links it instead of creating another.',
        security,
        params: FindingProviderParamsSchema,
        response: { 200: IssueTrackerSendResultSchema, ...v1Errors(404, 409, 502) },
      },
      config: { auth: { kind: 'service', scope: 'findings:write' } },
    },
    async (request) =>
      tickets.sendFinding(request.actor as ServiceActor, request.params.findingId, request.params.provider),
  );
}
