import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  BulkTriageSchema,
  CreateFindingSchema,
  FILTER_FOR_VALUES,
  FINDING_ORDERS,
  FindingPeopleSchema,
  FindingSchema,
  FindingStatusSchema,
  REPOSITORY_ROLES,
  SeveritySchema,
} from './findings.schemas.ts';
import type { FindingsService } from './findings.service.ts';
import { DEFAULT_FINDINGS_LIMIT, MAX_FINDINGS_LIMIT } from './findings-listing.ts';

function StringEnum<T extends string>(values: readonly T[], options: { description?: string } = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

const security = [{ UserBearer: [] }];
const extensionTags = ['extension', 'findings'];
const repoParams = Type.Object({ repo_id: UuidSchema });
const findingParams = Type.Object({
  repo_id: UuidSchema,
  finding_ref: Type.String({ minLength: 1, maxLength: 64, description: 'A finding id (uuid) or number' }),
});

/** Query parameters of the all-findings listing (v0 §4.4). */
export const AllFindingsQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Nullable(Type.Integer({ minimum: 0, maximum: MAX_FINDINGS_LIMIT, default: DEFAULT_FINDINGS_LIMIT })),
    ),
    order_by: Type.Optional(StringEnum(FINDING_ORDERS, { description: 'Default: number ascending' })),
    next: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    with_unread_comments: Type.Optional(Type.Boolean()),
    repositories: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Repository ids; repeat the parameter or separate with commas',
      }),
    ),
    role: Type.Optional(StringEnum(REPOSITORY_ROLES)),
    path: Type.Optional(Type.String({ maxLength: 1000 })),
    status: Type.Optional(Type.String({ description: 'Comma-separated finding statuses' })),
    duplicates: Type.Optional(Type.Boolean({ default: true })),
    severity: Type.Optional(Type.String({ description: 'Comma-separated severities' })),
    label: Type.Optional(
      Type.String({ description: 'Comma-separated label names (OR); exclusive with unlabeled' }),
    ),
    unlabeled: Type.Optional(Type.Boolean()),
    filter_for: Type.Optional(StringEnum(FILTER_FOR_VALUES)),
    created_by: Type.Optional(Type.String({ description: 'Comma-separated usernames (OR)' })),
    assigned_to: Type.Optional(Type.String({ maxLength: 200 })),
    q: Type.Optional(Type.String({ maxLength: 500 })),
    s: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

/** Findings: the all-findings listing (v0 §4.4) and the write extensions on repository findings. */
export function registerFindingRoutes(app: App, service: FindingsService): void {
  app.get(
    '/api/v0/repositories/all-findings',
    {
      schema: {
        operationId: 'listAllFindings',
        tags: ['findings'],
        security,
        summary: 'List findings across the repositories the user has access to',
        description:
          'Filters combine by AND. `next` is an opaque keyset cursor bound to the filters and ordering it was made under; reusing it with other filters answers 400. Nulls sort last in both directions; ties break by id.',
        querystring: AllFindingsQuerySchema,
        response: {
          200: Type.Object(
            {
              findings: Type.Array(ref(FindingSchema)),
              filteredTotal: Type.Integer({ format: 'int32' }),
              nextValue: Nullable(Type.String()),
            },
            { $id: 'FindingPage' },
          ),
          ...v0Errors(),
        },
      },
    },
    async (request) => service.listAllFindings(request.actor, request.query),
  );

  app.post(
    '/api/v0/repositories/:repo_id/findings',
    {
      schema: {
        operationId: 'createFinding',
        tags: extensionTags,
        security,
        summary: 'File a finding on a repository (reviewers, judges, triagers, admins)',
        params: repoParams,
        body: CreateFindingSchema,
        response: { 201: ref(FindingSchema), ...v0Errors(404) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await service.createFinding(request.actor, request.params.repo_id, request.body)),
  );

  app.get(
    '/api/v0/repositories/:repo_id/findings/:finding_ref',
    {
      schema: {
        operationId: 'getFinding',
        tags: extensionTags,
        security,
        summary: 'Read one finding by id or number',
        params: findingParams,
        response: { 200: ref(FindingSchema), ...v0Errors(404) },
      },
    },
    async (request) => service.getFinding(request.actor, request.params.repo_id, request.params.finding_ref),
  );

  app.put(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/status',
    {
      schema: {
        operationId: 'changeFindingStatus',
        tags: extensionTags,
        security,
        summary: 'Change the status of a finding along the transition table',
        params: findingParams,
        body: Type.Object(
          {
            status: FindingStatusSchema,
            reason: Type.Optional(
              Type.String({
                maxLength: 5000,
                description:
                  'Why; required for a move to rejected, spam, disputed or withdrawn and for reopening a fixed finding. Posted on the finding as a public comment.',
              }),
            ),
          },
          { $id: 'ChangeFindingStatusRequest', additionalProperties: false },
        ),
        response: { 200: ref(FindingSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) =>
      service.changeStatus(
        request.actor,
        request.params.repo_id,
        request.params.finding_ref,
        request.body.status,
        request.body.reason,
      ),
  );

  app.get(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/people',
    {
      schema: {
        operationId: 'listFindingPeople',
        tags: extensionTags,
        security,
        summary: 'The users who see a finding: whom it may be assigned to and whom @username reaches',
        params: findingParams,
        response: { 200: FindingPeopleSchema, ...v0Errors(404) },
      },
    },
    async (request) => service.people(request.actor, request.params.repo_id, request.params.finding_ref),
  );

  app.post(
    '/api/v0/repositories/findings/bulk-triage',
    {
      schema: {
        operationId: 'bulkTriageFindings',
        tags: extensionTags,
        security,
        summary: 'Change status, severity, assignee or labels of many findings at once (all or nothing)',
        body: BulkTriageSchema,
        response: {
          200: Type.Object({ findings: Type.Array(ref(FindingSchema)) }, { $id: 'BulkTriageResponse' }),
          ...v0Errors(404, 409),
        },
      },
    },
    async (request) => service.bulkTriage(request.actor, request.body),
  );

  app.put(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/severity',
    {
      schema: {
        operationId: 'changeFindingSeverity',
        tags: extensionTags,
        security,
        summary: 'Change the severity of a finding (judges, triagers, admins)',
        params: findingParams,
        body: Type.Object(
          { severity: SeveritySchema },
          { $id: 'ChangeFindingSeverityRequest', additionalProperties: false },
        ),
        response: { 200: ref(FindingSchema), ...v0Errors(404) },
      },
    },
    async (request) =>
      service.changeSeverity(
        request.actor,
        request.params.repo_id,
        request.params.finding_ref,
        request.body.severity,
      ),
  );

  app.put(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/assignee',
    {
      schema: {
        operationId: 'assignFinding',
        tags: extensionTags,
        security,
        summary: 'Assign a finding to a user by username, or unassign it with null',
        params: findingParams,
        body: Type.Object(
          { assignee: Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength: 200 })]) },
          { $id: 'AssignFindingRequest', additionalProperties: false },
        ),
        response: { 200: ref(FindingSchema), ...v0Errors(404) },
      },
    },
    async (request) =>
      service.assign(
        request.actor,
        request.params.repo_id,
        request.params.finding_ref,
        request.body.assignee,
      ),
  );

  app.patch(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/labels',
    {
      schema: {
        operationId: 'updateFindingLabels',
        tags: extensionTags,
        security,
        summary: 'Add and remove labels of a finding (reviewers: labels with reviewerUse only)',
        params: findingParams,
        body: Type.Object(
          {
            add: Type.Optional(Type.Array(UuidSchema, { maxItems: 50 })),
            remove: Type.Optional(Type.Array(UuidSchema, { maxItems: 50 })),
          },
          { $id: 'UpdateFindingLabelsRequest', additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: ref(FindingSchema), ...v0Errors(404) },
      },
    },
    async (request) =>
      service.updateLabels(request.actor, request.params.repo_id, request.params.finding_ref, request.body),
  );

  app.put(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/duplicate-of',
    {
      schema: {
        operationId: 'markFindingDuplicate',
        tags: extensionTags,
        security,
        summary: 'Mark a finding a duplicate of another (status duplicate), or unmark it with null',
        params: findingParams,
        body: Type.Object(
          {
            duplicateOf: Type.Union([
              Type.Null(),
              Type.String({ minLength: 1, maxLength: 64, description: 'A finding id or number' }),
            ]),
            description: Type.Optional(
              Type.String({ maxLength: 5000, description: 'Description of the duplicate group' }),
            ),
          },
          { $id: 'MarkFindingDuplicateRequest', additionalProperties: false },
        ),
        response: { 200: ref(FindingSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) =>
      service.markDuplicate(request.actor, request.params.repo_id, request.params.finding_ref, request.body),
  );

  app.put(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/read',
    {
      schema: {
        operationId: 'markFindingRead',
        tags: extensionTags,
        security,
        summary: "Mark the finding's comments read for the caller",
        params: findingParams,
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.markRead(request.actor, request.params.repo_id, request.params.finding_ref);
      return reply.code(204).send(null);
    },
  );
}
