import type { ServiceActor } from '../../auth/actor.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../../http/app-type.ts';
import { ref, v1Errors } from '../../http/schemas.ts';
import { parseIdempotencyKey } from '../idempotency/idempotency.service.ts';
import {
  AcceptedScanSchema,
  CancelledScanSchema,
  CreateScanRequestSchema,
  FindingsReportSchema,
  IdempotencyKeyHeadersSchema,
  ListScansQuerySchema,
  ScanFindingsQuerySchema,
  ScanIdParamsSchema,
  ScanListSchema,
  ScanStatusSchema,
  ThreatModelMarkdownSchema,
  ThreatModelSchema,
} from './scans.schemas.ts';
import type { ScansService } from './scans.service.ts';

const security: Array<Record<string, string[]>> = [{ ServiceBearer: [] }, { ServiceApiKey: [] }];

/** createScan, getScan, cancelScan, getScanFindings and getScanThreatModel. */
export function registerScanRoutes(app: App, scans: ScansService): void {
  app.post(
    '/api/scanner/v1/scans',
    {
      schema: {
        operationId: 'createScan',
        tags: ['scans'],
        summary: 'Create a scan (202, status preparing); retry with the same Idempotency-Key',
        description:
          'Reserves the scan type’s credits and starts the unattended threat model; the paid scan starts when it completes. One Idempotency-Key stands for one intended scan: retry a transport error, a 5xx or a 503 with the same key and the identical body; after a definitive 4xx, use a new key. Keys are scoped to the organization and kept 24 hours (VIGIL_IDEMPOTENCY_TTL_HOURS).',
        security,
        headers: IdempotencyKeyHeadersSchema,
        body: CreateScanRequestSchema,
        response: {
          202: AcceptedScanSchema,
          ...v1Errors(402, 404, 409, 422, 503),
        },
      },
      config: { auth: { kind: 'service', scope: 'scans:create' } },
      // Before schema validation: a missing key is its own error code, not a generic header error.
      preValidation: async (request) => {
        if (request.headers['idempotency-key'] === undefined) throw new AppError('IDEMPOTENCY_KEY_REQUIRED');
      },
    },
    async (request, reply) => {
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      const outcome = await scans.createScan(request.actor as ServiceActor, key, request.body);
      if (outcome.replayed) reply.header('idempotent-replayed', 'true');
      // Only 202 is stored as a success; replayed 4xx answers are thrown again by the service.
      return reply.code(202).send(outcome.body);
    },
  );

  app.get(
    '/api/scanner/v1/scans',
    {
      schema: {
        operationId: 'listScans',
        tags: ['scans', 'extension'],
        summary:
          'The organization’s scans, newest first (optionally of one workspace, in one status; cursor pages)',
        security,
        querystring: ListScansQuerySchema,
        response: { 200: ScanListSchema, ...v1Errors(400, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) =>
      scans.listScans(request.actor as ServiceActor, {
        ...(request.query.status ? { status: request.query.status } : {}),
        ...(request.query.workspaceId ? { workspaceId: request.query.workspaceId } : {}),
        ...(request.query.limit ? { limit: request.query.limit } : {}),
        ...(request.query.next !== undefined ? { next: request.query.next } : {}),
      }),
  );

  app.get(
    '/api/scanner/v1/scans/:scanId',
    {
      schema: {
        operationId: 'getScan',
        tags: ['scans'],
        summary: 'Scan status and progress',
        security,
        params: ScanIdParamsSchema,
        response: { 200: ref(ScanStatusSchema), ...v1Errors(404, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) => scans.getScan(request.actor as ServiceActor, request.params.scanId),
  );

  app.post(
    '/api/scanner/v1/scans/:scanId/cancel',
    {
      schema: {
        operationId: 'cancelScan',
        tags: ['scans'],
        summary: 'Cancel a queued or running scan (safe to repeat)',
        security,
        params: ScanIdParamsSchema,
        response: { 200: CancelledScanSchema, ...v1Errors(404, 409, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:create' } },
    },
    async (request) => scans.cancelScan(request.actor as ServiceActor, request.params.scanId),
  );

  app.get(
    '/api/scanner/v1/scans/:scanId/findings',
    {
      schema: {
        operationId: 'getScanFindings',
        tags: ['scans'],
        summary: 'Findings report of a completed scan (GitLab SAST, or SARIF with format=sarif)',
        description:
          'Includes the unpublished draft findings of the scan. Vulnerability ids are finding ids (the ticket endpoints take them).',
        security,
        params: ScanIdParamsSchema,
        querystring: ScanFindingsQuerySchema,
        response: { 200: FindingsReportSchema, ...v1Errors(404, 409, 503) },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request) =>
      scans.getScanFindings(
        request.actor as ServiceActor,
        request.params.scanId,
        request.query.format ?? 'sast',
      ),
  );

  app.get(
    '/api/scanner/v1/scans/:scanId/threat-model',
    {
      schema: {
        operationId: 'getScanThreatModel',
        tags: ['scans', 'extension'],
        summary: 'The scan’s threat model as JSON, or Markdown with Accept: text/markdown',
        security,
        params: ScanIdParamsSchema,
        response: {
          200: {
            description: 'The threat model',
            content: {
              'application/json': { schema: ThreatModelSchema },
              'text/markdown': { schema: ThreatModelMarkdownSchema },
            },
          },
          ...v1Errors(404, 409, 503),
        },
      },
      config: { auth: { kind: 'service', scope: 'scans:read' } },
    },
    async (request, reply) => {
      const accept = request.headers.accept ?? '';
      const wantsMarkdown = /\btext\/markdown\b/.test(accept) && !/\bapplication\/json\b/.test(accept);
      const model = await scans.getThreatModel(
        request.actor as ServiceActor,
        request.params.scanId,
        wantsMarkdown ? 'markdown' : 'json',
      );
      if (typeof model === 'string') return reply.type('text/markdown; charset=utf-8').send(model);
      return reply.type('application/json; charset=utf-8').send(model);
    },
  );
}
