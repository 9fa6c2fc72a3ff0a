import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { UuidSchema, v0Errors } from '../../http/schemas.ts';
import { AuditLogPageSchema, AuditLogQuerySchema } from './audit.schemas.ts';
import type { AuditService } from './audit.service.ts';

/** The company audit log (v0 §4.9). */
export function registerAuditRoutes(app: App, audit: AuditService): void {
  app.get(
    '/api/v0/companies/:company_id/audit-log',
    {
      schema: {
        operationId: 'getCompanyAuditLog',
        tags: ['audit-log'],
        security: [{ UserBearer: [] }],
        summary: 'List the audit log of a company',
        description:
          'Company managers and admins with `read_all_companies`. Keyset pagination: pass `nextValue` as `next` with the same filters (other filters → 400). `limit=0` returns no entries and a `nextValue` that continues from the same position (null when no entry follows).',
        params: Type.Object({ company_id: UuidSchema }),
        querystring: AuditLogQuerySchema,
        response: { 200: AuditLogPageSchema, ...v0Errors(404) },
      },
    },
    async (request) => audit.listAuditLog(request.actor, request.params.company_id, request.query),
  );
}
