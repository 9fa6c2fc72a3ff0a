import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { FindingEventListSchema } from './finding-events.schemas.ts';
import type { FindingEventsService } from './finding-events.service.ts';

/** A finding's timeline (extension, ADR 0036). */
export function registerFindingEventRoutes(app: App, service: FindingEventsService): void {
  app.get(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/events',
    {
      schema: {
        operationId: 'listFindingEvents',
        tags: ['extension', 'findings'],
        security: [{ UserBearer: [] }],
        summary: "A finding's timeline: its filing and every change since, oldest first",
        description:
          'Status, severity, assignee, duplicate, label and ticket changes, recorded in the transaction of each change, and what the scanner adds (still present / not reproduced in a scan). Label events show only labels the caller may read, ticket events only to company users, duplicate targets only when the caller may see them. The latest 1000 events.',
        params: Type.Object({
          repo_id: UuidSchema,
          finding_ref: Type.String({
            minLength: 1,
            maxLength: 64,
            description: 'A finding id (uuid) or number',
          }),
        }),
        response: { 200: ref(FindingEventListSchema), ...v0Errors(404) },
      },
    },
    async (request) =>
      service.listFindingEvents(request.actor, request.params.repo_id, request.params.finding_ref),
  );
}
