import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { CreatedIdSchema, DateTimeSchema, Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import {
  FINDING_VIEW_COLUMNS,
  type FindingViewColumn,
  type FindingViewsService,
} from './finding-views.service.ts';

const FindingViewColumnSchema = Type.Unsafe<FindingViewColumn>({
  type: 'string',
  enum: [...FINDING_VIEW_COLUMNS],
});

/** Finding view (v0 §2.4), create body. */
export const CreateFindingViewSchema = Type.Object(
  {
    personal: Type.Boolean(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    filter: Type.String({
      maxLength: 2000,
      description: 'A search string in the `s` syntax of all-findings.',
    }),
    // Null first: with type coercion on, a null would otherwise be coerced into the other branch.
    description: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 2000 })])),
    columns: Type.Optional(
      Type.Union([
        Type.Null(),
        Type.Array(FindingViewColumnSchema, { maxItems: FINDING_VIEW_COLUMNS.length, uniqueItems: true }),
      ]),
    ),
  },
  { $id: 'CreateFindingView', additionalProperties: false },
);

/** A saved finding view as listed (extension). */
export const FindingViewSchema = Type.Object(
  {
    id: UuidSchema,
    personal: Type.Boolean(),
    name: Type.String(),
    filter: Type.String(),
    description: Nullable(Type.String()),
    columns: Nullable(Type.Array(FindingViewColumnSchema)),
    createdAt: DateTimeSchema,
  },
  { $id: 'FindingView' },
);

/** POST /api/v0/repositories/{repo_id}/finding-views (v0 §4.3), and the list (extension). */
export function registerFindingViewRoutes(app: App, service: FindingViewsService): void {
  app.get(
    '/api/v0/repositories/:repo_id/finding-views',
    {
      schema: {
        operationId: 'listFindingViews',
        tags: ['extension', 'finding-views'],
        security: [{ UserBearer: [] }],
        summary: "List a repository's shared finding views and the caller's personal ones",
        params: Type.Object({ repo_id: UuidSchema }),
        response: {
          200: Type.Object({ views: Type.Array(ref(FindingViewSchema)) }, { $id: 'FindingViewList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ views: await service.listViews(request.actor, request.params.repo_id) }),
  );

  app.post(
    '/api/v0/repositories/:repo_id/finding-views',
    {
      schema: {
        operationId: 'createFindingView',
        tags: ['finding-views'],
        security: [{ UserBearer: [] }],
        summary: 'Save a finding view (a named filter) on a repository',
        description:
          'Anyone who sees the repository may save a personal view; shared views (`personal: false`) are for repository admins and clients. `filter` must parse in the `s` search syntax.',
        params: Type.Object({ repo_id: UuidSchema }),
        body: CreateFindingViewSchema,
        response: { 201: CreatedIdSchema, ...v0Errors(404) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await service.createView(request.actor, request.params.repo_id, request.body)),
  );

  app.delete(
    '/api/v0/repositories/:repo_id/finding-views/:view_id',
    {
      schema: {
        operationId: 'deleteFindingView',
        tags: ['extension', 'finding-views'],
        security: [{ UserBearer: [] }],
        summary: 'Delete a saved finding view',
        description:
          'A personal view by its owner; a shared view by repository admins and clients (those who may share views).',
        params: Type.Object({ repo_id: UuidSchema, view_id: UuidSchema }),
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      await service.deleteView(request.actor, request.params.repo_id, request.params.view_id);
      return reply.code(204).send(null);
    },
  );
}
