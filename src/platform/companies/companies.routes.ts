import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CompanySchema } from '../admin/admin.schemas.ts';
import { UpdateCompanyRequestSchema } from './companies.schemas.ts';
import type { CompaniesService } from './companies.service.ts';

const tags = ['extension', 'companies'];
const security = [{ UserBearer: [] }];
const params = Type.Object({ companyId: UuidSchema });

/** Company profile (extension): read by company users, changed by company managers. */
export function registerCompanyRoutes(app: App, companies: CompaniesService): void {
  app.get(
    '/api/v0/companies/:companyId',
    {
      schema: {
        operationId: 'getCompany',
        tags,
        security,
        summary: 'Get a company profile (company users; read_all_companies admins)',
        params,
        response: { 200: ref(CompanySchema), ...v0Errors(404) },
      },
    },
    async (request) => companies.getCompany(request.actor, request.params.companyId),
  );

  app.patch(
    '/api/v0/companies/:companyId',
    {
      schema: {
        operationId: 'updateCompany',
        tags,
        security,
        summary: 'Update a company profile (company managers, platform admins)',
        params,
        body: UpdateCompanyRequestSchema,
        response: { 200: ref(CompanySchema), ...v0Errors(404, 409) },
      },
    },
    async (request) => companies.updateCompany(request.actor, request.params.companyId, request.body),
  );
}
