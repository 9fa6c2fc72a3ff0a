import type { App } from './app.ts';
import type { Container } from './container.ts';
import { registerAdminRoutes } from './platform/admin/admin.routes.ts';
import { registerAuditRoutes } from './platform/audit/audit.routes.ts';
import { registerCompanyRoutes } from './platform/companies/companies.routes.ts';
import { registerFindingRoutes } from './platform/findings/findings.routes.ts';
import { registerGuildRoutes } from './platform/guilds/guilds.routes.ts';
import { registerIntegrationRoutes } from './platform/integrations/integrations.routes.ts';
import { registerLabelRoutes } from './platform/labels/labels.routes.ts';
import { registerReportRoutes } from './platform/reports/reports.routes.ts';
import { registerRepositoryRoutes } from './platform/repositories/repositories.routes.ts';
import { registerServiceKeyRoutes } from './platform/service-keys/service-keys.routes.ts';
import { registerSsoRoutes } from './platform/sso/sso.routes.ts';
import { registerUserRoutes } from './platform/users/users.routes.ts';
import { registerFindingViewRoutes } from './platform/views/finding-views.routes.ts';
import { registerCreditsRoutes } from './scanner/credits/credits.routes.ts';
import { registerScanRoutes } from './scanner/scans/scans.routes.ts';
import { registerTicketRoutes } from './scanner/tickets/tickets.routes.ts';
import { registerUploadRoutes } from './scanner/uploads/uploads.routes.ts';

/** Registers every module's routes. Explicit: a module not listed here has no routes. */
export async function registerRouteModules(app: App, container: Container): Promise<void> {
  const { services } = container;
  registerAdminRoutes(app, services.admin);
  registerServiceKeyRoutes(app, services.serviceKeys);
  registerIntegrationRoutes(app, services.integrations);
  registerCreditsRoutes(app, services.credits);
  await registerUploadRoutes(app, services.uploads);
  registerScanRoutes(app, services.scans);
  registerFindingRoutes(app, services.findings);
  registerLabelRoutes(app, services.labels);
  registerFindingViewRoutes(app, services.findingViews);
  registerCompanyRoutes(app, services.companies);
  registerUserRoutes(app, services.users);
  registerAuditRoutes(app, services.audit);
  registerSsoRoutes(app, services.sso);
  registerRepositoryRoutes(app, services.repositories);
  registerReportRoutes(app, services.reports);
  registerGuildRoutes(app, services.guilds);
  registerTicketRoutes(app, services.tickets);
}
