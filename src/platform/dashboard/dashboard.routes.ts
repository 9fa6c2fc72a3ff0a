import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CompanyDashboardSchema, DashboardQuerySchema } from './dashboard.schemas.ts';
import type { DashboardService } from './dashboard.service.ts';

/** The company dashboard (extension): aggregates for the console's overview. */
export function registerDashboardRoutes(app: App, dashboard: DashboardService): void {
  app.get(
    '/api/v0/companies/:company_id/dashboard',
    {
      schema: {
        operationId: 'getCompanyDashboard',
        tags: ['extension', 'companies'],
        security: [{ UserBearer: [] }],
        summary:
          'Company dashboard: open findings by status and severity, new and fixed per week, time to fix',
        description:
          'Company users and cross-company readers; anyone else gets 404. Counts the published findings of the company’s repositories. Weeks start on Monday 00:00 UTC.',
        params: Type.Object({ company_id: UuidSchema }),
        querystring: DashboardQuerySchema,
        response: { 200: CompanyDashboardSchema, ...v0Errors(404) },
      },
    },
    async (request) => dashboard.companyDashboard(request.actor, request.params.company_id, request.query),
  );
}
