import { Type } from '@sinclair/typebox';
import type { ServiceActor } from '../../auth/actor.ts';
import type { App } from '../../http/app-type.ts';
import { UuidSchema, v0Errors, v1Errors } from '../../http/schemas.ts';
import { ScanIdParamsSchema } from '../scans/scans.schemas.ts';
import type { DraftPublishing } from './drafts.publish.ts';
import {
  DraftListSchema,
  DraftPageSchema,
  DraftSettingsSchema,
  FindingScanTimelineSchema,
  PublishDraftsRequestSchema,
  PublishedDraftListSchema,
  ScanComparisonSchema,
  ScanDraftsQuerySchema,
  TriageDraftsRequestSchema,
  WorkspaceDraftsQuerySchema,
  WorkspaceIdParamsSchema,
} from './drafts.schemas.ts';
import type { DraftsService } from './drafts.service.ts';

const serviceSecurity: Array<Record<string, string[]>> = [{ ServiceBearer: [] }, { ServiceApiKey: [] }];
const userSecurity = [{ UserBearer: [] }];
const tags = ['drafts', 'extension'];

/**
 * Draft triage (extension, ADR 0023): listings, triage, publishing and comparisons on the scanner
 * API (service keys, and people: console sessions or user tokens with X-Vigil-Company, ADR 0002);
 * a published finding's scan timeline and the company's draft settings on API v0.
 */
export function registerDraftRoutes(app: App, drafts: DraftsService, publishing: DraftPublishing): void {
  app.get(
    '/api/scanner/v1/workspaces/:workspaceId/drafts',
    {
      schema: {
        operationId: 'listWorkspaceDrafts',
        tags,
        summary: 'A workspace’s draft findings across its scans, critical first (cursor pages)',
        security: serviceSecurity,
        params: WorkspaceIdParamsSchema,
        querystring: WorkspaceDraftsQuerySchema,
        response: { 200: DraftPageSchema, ...v1Errors(400, 404, 503) },
      },
      config: { auth: { kind: 'service', scope: 'findings:read' } },
    },
    async (request) =>
      drafts.listWorkspaceDrafts(request.actor as ServiceActor, request.params.workspaceId, request.query),
  );

  app.get(
    '/api/scanner/v1/scans/:scanId/drafts',
    {
      schema: {
        operationId: 'listScanDrafts',
        tags,
        summary: 'The drafts a completed scan found, with how each compares with its baseline',
        description:
          'Each draft carries `baselineState` (new, unchanged, reopened). `baselineState=fixed` lists instead the drafts of the baseline this scan did not find.',
        security: serviceSecurity,
        params: ScanIdParamsSchema,
        querystring: ScanDraftsQuerySchema,
        response: { 200: DraftPageSchema, ...v1Errors(400, 404, 409, 503) },
      },
      config: { auth: { kind: 'service', scope: 'findings:read' } },
    },
    async (request) =>
      drafts.listScanDrafts(request.actor as ServiceActor, request.params.scanId, request.query),
  );

  app.get(
    '/api/scanner/v1/scans/:scanId/comparison',
    {
      schema: {
        operationId: 'getScanComparison',
        tags,
        summary: 'A completed scan against its baseline: new, unchanged, fixed, reopened',
        security: serviceSecurity,
        params: ScanIdParamsSchema,
        response: { 200: ScanComparisonSchema, ...v1Errors(404, 409, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) => drafts.getScanComparison(request.actor as ServiceActor, request.params.scanId),
  );

  app.post(
    '/api/scanner/v1/drafts/triage',
    {
      schema: {
        operationId: 'triageDrafts',
        tags,
        summary: 'Dismiss (with a reason) or reopen one or many drafts',
        description:
          'All or none. Service keys need findings:write; a console session or a user token with `X-Vigil-Company`: company managers, or members a manager allows (draft settings). A published draft → 409.',
        security: serviceSecurity,
        body: TriageDraftsRequestSchema,
        response: { 200: DraftListSchema, ...v1Errors(400, 404, 409, 503) },
      },
      config: { auth: { kind: 'service', scope: 'findings:read' } },
    },
    async (request) => drafts.triageDrafts(request.actor as ServiceActor, request.body),
  );

  app.post(
    '/api/scanner/v1/drafts/publish',
    {
      schema: {
        operationId: 'publishDrafts',
        tags,
        summary: 'Publish one or many drafts as findings of a repository (idempotent per draft)',
        description:
          'A person: a console session, or a user token with `X-Vigil-Company` naming the company, of a company manager or of a member a manager allows (the finding’s author); service keys → 403. Each draft becomes one finding (title, description, chosen severity, related file with lines and code, rule as category, a link to the scan); publishing it again answers the same finding with created: false.',
        security: serviceSecurity,
        body: PublishDraftsRequestSchema,
        response: { 200: PublishedDraftListSchema, ...v1Errors(400, 404, 503) },
      },
      config: { auth: { kind: 'service', scope: 'findings:read' } },
    },
    async (request) => publishing.publishDrafts(request.actor as ServiceActor, request.body),
  );

  app.get(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/scan-timeline',
    {
      schema: {
        operationId: 'getFindingScanTimeline',
        tags: ['extension', 'findings'],
        summary: 'What later scans said of a finding published from a scan draft',
        security: userSecurity,
        params: Type.Object({
          repo_id: UuidSchema,
          finding_ref: Type.String({
            minLength: 1,
            maxLength: 64,
            description: 'A finding id (uuid) or number',
          }),
        }),
        response: { 200: FindingScanTimelineSchema, ...v0Errors(404) },
      },
    },
    async (request) =>
      publishing.getTimeline(request.actor, request.params.repo_id, request.params.finding_ref),
  );

  const companyParams = Type.Object({ company_id: UuidSchema });
  app.get(
    '/api/v0/companies/:company_id/draft-settings',
    {
      schema: {
        operationId: 'getDraftSettings',
        tags: ['extension', 'companies'],
        summary: 'Who triages the company’s scan drafts, and whether published findings are marked fixed',
        security: userSecurity,
        params: companyParams,
        response: { 200: DraftSettingsSchema, ...v0Errors(404) },
      },
    },
    async (request) => drafts.getSettings(request.actor, request.params.company_id),
  );

  app.put(
    '/api/v0/companies/:company_id/draft-settings',
    {
      schema: {
        operationId: 'updateDraftSettings',
        tags: ['extension', 'companies'],
        summary: 'Replace the company’s draft settings (managers)',
        security: userSecurity,
        params: companyParams,
        body: DraftSettingsSchema,
        response: { 200: DraftSettingsSchema, ...v0Errors(400, 404) },
      },
    },
    async (request) => drafts.updateSettings(request.actor, request.params.company_id, request.body),
  );
}
