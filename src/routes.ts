import type { TSchema } from '@sinclair/typebox';
import type { Container } from './container.ts';
import type { App } from './http/app-type.ts';
import { ScanTypeAvailabilitySchema } from './organization/credits/credits.schemas.ts';
import { registerAdminRoutes } from './platform/admin/admin.routes.ts';
import { CompanySchema } from './platform/admin/admin.schemas.ts';
import { registerAiRoutes } from './platform/ai/ai.routes.ts';
import { AiCitationsSchema, AiMessageSchema } from './platform/ai/ai.schemas.ts';
import { registerAuditRoutes } from './platform/audit/audit.routes.ts';
import { AuditLogEntrySchema } from './platform/audit/audit.schemas.ts';
import { registerCommentRoutes } from './platform/comments/comments.routes.ts';
import { CommentSchema, CommentThreadSchema } from './platform/comments/comments.schemas.ts';
import { registerCompanyRoutes } from './platform/companies/companies.routes.ts';
import { CompanySummarySchema } from './platform/companies/companies.schemas.ts';
import { registerDashboardRoutes } from './platform/dashboard/dashboard.routes.ts';
import { registerFindingEventRoutes } from './platform/findings/finding-events.routes.ts';
import { FindingEventListSchema, FindingEventSchema } from './platform/findings/finding-events.schemas.ts';
import { registerFindingRoutes } from './platform/findings/findings.routes.ts';
import {
  FindingPersonSchema,
  FindingRefSchema,
  FindingSchema,
  FullUserSummarySchema,
  RelatedFileSchema,
} from './platform/findings/findings.schemas.ts';
import { GuildSchema, registerGuildRoutes } from './platform/guilds/guilds.routes.ts';
import { IntegrationSchema, registerIntegrationRoutes } from './platform/integrations/integrations.routes.ts';
import { registerInvitationRoutes } from './platform/invitations/invitations.routes.ts';
import {
  CompanyInvitationListSchema,
  CompanyInvitationSchema,
} from './platform/invitations/invitations.schemas.ts';
import { registerLabelRoutes } from './platform/labels/labels.routes.ts';
import { LabelSchema } from './platform/labels/labels.schemas.ts';
import {
  LeaderboardEntrySchema,
  registerLeaderboardRoutes,
} from './platform/leaderboard/leaderboard.routes.ts';
import { registerNotificationRoutes } from './platform/notifications/notifications.routes.ts';
import {
  NotificationSchema,
  WebhookAttemptOutcomeSchema,
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
} from './platform/notifications/notifications.schemas.ts';
import { registerReportRoutes } from './platform/reports/reports.routes.ts';
import {
  FindingStatSchema,
  ReportFindingSchema,
  RelatedFileSchema as ReportRelatedFileSchema,
  ReportSchema,
} from './platform/reports/reports.schemas.ts';
import { registerRepositoryRoutes } from './platform/repositories/repositories.routes.ts';
import {
  AssetGroupSchema,
  AssetSchema,
  RepositoryEventSchema,
  RepositoryMemberSchema,
  RepositorySchema,
  RewardRangeSchema,
  SafeHarborSchema,
} from './platform/repositories/repositories.schemas.ts';
import { registerServiceKeyRoutes, ServiceKeySchema } from './platform/service-keys/service-keys.routes.ts';
import {
  ConsoleSessionSummarySchema,
  registerSessionRoutes,
  SessionSchema,
} from './platform/session/session.routes.ts';
import {
  HostedRepositorySchema,
  LinkedWorkspaceSchema,
  registerSourcehostRoutes,
  SourcehostDeliverySchema,
} from './platform/sourcehost/sourcehost.routes.ts';
import { registerSsoRoutes } from './platform/sso/sso.routes.ts';
import { SsoRuleSchema } from './platform/sso/sso.schemas.ts';
import { registerUserRoutes } from './platform/users/users.routes.ts';
import {
  AuditorPublicProfileSchema,
  BadgeSchema,
  CompanyUserSchema,
  ShortUserSummarySchema,
} from './platform/users/users.schemas.ts';
import { FindingViewSchema, registerFindingViewRoutes } from './platform/views/finding-views.routes.ts';
import { registerCreditsRoutes } from './scanner/credits/credits.routes.ts';
import { registerDraftRoutes } from './scanner/drafts/drafts.routes.ts';
import {
  DraftActorSchema,
  DraftSchema,
  FindingScanEventSchema,
  PublishedDraftSchema,
} from './scanner/drafts/drafts.schemas.ts';
import { registerScanRoutes } from './scanner/scans/scans.routes.ts';
import {
  SastVulnerabilitySchema,
  ScanAnalysisSchema,
  ScanStatusSchema,
} from './scanner/scans/scans.schemas.ts';
import { registerTicketRoutes } from './scanner/tickets/tickets.routes.ts';
import { FindingIssueExportSchema, FindingTicketSchema } from './scanner/tickets/tickets.schemas.ts';
import { registerUploadRoutes } from './scanner/uploads/uploads.routes.ts';
import { SourceUploadSessionSchema } from './scanner/uploads/uploads.schemas.ts';
import { registerScannerWorkspaceRoutes } from './scanner/workspaces/workspaces.routes.ts';
import { ScannerWorkspaceSchema } from './scanner/workspaces/workspaces.schemas.ts';

/**
 * The shapes that other shapes contain, registered once so that routes and schemas refer to them
 * with `ref()` (and the OpenAPI document names them). Top-level bodies and responses that nothing
 * else contains keep their `$id` inline; the document names those too.
 */
const SHARED_SCHEMAS: readonly TSchema[] = [
  DraftActorSchema,
  DraftSchema,
  FindingScanEventSchema,
  PublishedDraftSchema,
  AiCitationsSchema,
  AiMessageSchema,
  AssetGroupSchema,
  AssetSchema,
  AuditLogEntrySchema,
  AuditorPublicProfileSchema,
  BadgeSchema,
  CommentSchema,
  CommentThreadSchema,
  CompanySchema,
  CompanySummarySchema,
  CompanyInvitationListSchema,
  CompanyInvitationSchema,
  CompanyUserSchema,
  ConsoleSessionSummarySchema,
  FindingEventListSchema,
  FindingEventSchema,
  FindingIssueExportSchema,
  FindingPersonSchema,
  FindingRefSchema,
  FindingSchema,
  FindingStatSchema,
  FindingTicketSchema,
  FindingViewSchema,
  FullUserSummarySchema,
  GuildSchema,
  HostedRepositorySchema,
  IntegrationSchema,
  LabelSchema,
  LeaderboardEntrySchema,
  LinkedWorkspaceSchema,
  NotificationSchema,
  RelatedFileSchema,
  ReportFindingSchema,
  ReportRelatedFileSchema,
  ReportSchema,
  RepositoryEventSchema,
  RepositoryMemberSchema,
  RepositorySchema,
  RewardRangeSchema,
  SafeHarborSchema,
  SastVulnerabilitySchema,
  ScanAnalysisSchema,
  ScanStatusSchema,
  ScanTypeAvailabilitySchema,
  ScannerWorkspaceSchema,
  ServiceKeySchema,
  SessionSchema,
  ShortUserSummarySchema,
  SourceUploadSessionSchema,
  SourcehostDeliverySchema,
  SsoRuleSchema,
  WebhookAttemptOutcomeSchema,
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
];

/** Registers every module's routes. Explicit: a module not listed here has no routes. */
export async function registerRouteModules(app: App, container: Container): Promise<void> {
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  const { services } = container;
  registerAdminRoutes(app, services.admin);
  registerSessionRoutes(app, services.session, container.config.publicUrl);
  registerServiceKeyRoutes(app, services.serviceKeys);
  registerIntegrationRoutes(app, services.integrations);
  registerCreditsRoutes(app, services.credits);
  await registerUploadRoutes(app, services.uploads);
  registerScanRoutes(app, services.scans);
  registerDraftRoutes(app, services.drafts, services.draftPublishing);
  registerScannerWorkspaceRoutes(app, services.scannerWorkspaces);
  registerFindingRoutes(app, services.findings);
  registerFindingEventRoutes(app, services.findingEvents);
  registerCommentRoutes(app, services.comments);
  registerNotificationRoutes(app, services.notifications);
  registerLabelRoutes(app, services.labels);
  registerFindingViewRoutes(app, services.findingViews);
  registerCompanyRoutes(app, services.companies);
  registerDashboardRoutes(app, services.dashboard);
  registerUserRoutes(app, services.users);
  registerInvitationRoutes(app, services.invitations);
  registerAuditRoutes(app, services.audit);
  registerSsoRoutes(app, services.sso);
  registerRepositoryRoutes(app, services.repositories);
  registerReportRoutes(app, services.reports);
  registerGuildRoutes(app, services.guilds);
  registerTicketRoutes(app, services.tickets);
  await registerSourcehostRoutes(app, services.sourcehost);
  registerLeaderboardRoutes(app, services.leaderboard);
  registerAiRoutes(app, services.ai);
}
