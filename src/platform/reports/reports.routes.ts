import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  CreateReportRequestSchema,
  ListReportsQuerySchema,
  PublishReportRequestSchema,
  ReportSchema,
  UpdateReportRequestSchema,
} from './reports.schemas.ts';
import type { ReportsService } from './reports.service.ts';

const security = [{ UserBearer: [] }];
const ext = ['extension', 'reports'];
const params = Type.Object({ report_id: UuidSchema });

/** Reports (v0 §4.6) and their making and publishing (extensions). */
export function registerReportRoutes(app: App, reports: ReportsService): void {
  app.get(
    '/api/v0/reports',
    {
      schema: {
        operationId: 'listReports',
        tags: ['reports'],
        security: [{ UserBearer: [] }, {}],
        summary: 'List reports of finished audit engagements',
        description:
          'Anonymous callers see public reports (published, not private); company users also see their company’s private reports and drafts, repository admins those of their repositories. Newest published first, drafts before them. Keyset pagination: pass `nextValue` as `next` with the same `q` and `guild` (others → 400). `limit=0` returns no reports and a `nextValue` at the same position (null when no report follows).',
        querystring: ListReportsQuerySchema,
        response: {
          200: Type.Object(
            { reports: Type.Array(ref(ReportSchema)), nextValue: Nullable(Type.String()) },
            { $id: 'ReportPage' },
          ),
          ...v0Errors(),
        },
      },
      config: { auth: { kind: 'optional-user' } },
    },
    async (request) => reports.listReports(request.actor, request.query),
  );

  app.get(
    '/api/v0/reports/:report_id',
    {
      schema: {
        operationId: 'getReport',
        tags: ext,
        security: [{ UserBearer: [] }, {}],
        summary: 'Get one report (the same visibility as the listing)',
        params,
        response: { 200: ref(ReportSchema), ...v0Errors(404) },
      },
      config: { auth: { kind: 'optional-user' } },
    },
    async (request) => reports.getReport(request.actor, request.params.report_id),
  );

  app.post(
    '/api/v0/reports',
    {
      schema: {
        operationId: 'createReport',
        tags: ext,
        security,
        summary:
          'Make a report of a finished repository (company managers, repository admins, platform admins)',
        description:
          'The report is a private draft until published. 404 for a repository the caller does not see, 403 for one they see but whose reports they may not make.',
        body: CreateReportRequestSchema,
        response: { 201: ref(ReportSchema), ...v0Errors(404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await reports.createReport(request.actor, request.body)),
  );

  app.patch(
    '/api/v0/reports/:report_id',
    {
      schema: {
        operationId: 'updateReport',
        tags: ext,
        security,
        summary:
          'Change a report: texts, findings, privacy, guild (company managers, repository admins, platform admins)',
        params,
        body: UpdateReportRequestSchema,
        response: { 200: ref(ReportSchema), ...v0Errors(404) },
      },
    },
    async (request) => reports.updateReport(request.actor, request.params.report_id, request.body),
  );

  app.post(
    '/api/v0/reports/:report_id/publish',
    {
      schema: {
        operationId: 'publishReport',
        tags: ext,
        security,
        summary: 'Publish a report (`isPrivate: false` makes it public; those who may change it)',
        params,
        body: Type.Optional(PublishReportRequestSchema),
        response: { 200: ref(ReportSchema), ...v0Errors(404) },
      },
    },
    async (request) => reports.publishReport(request.actor, request.params.report_id, request.body ?? {}),
  );
}
