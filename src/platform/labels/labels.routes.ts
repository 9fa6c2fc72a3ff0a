import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CreateLabelSchema, LabelSchema, UpdateLabelSchema } from './labels.schemas.ts';
import type { LabelsService } from './labels.service.ts';

const tags = ['extension', 'labels'];
const security = [{ UserBearer: [] }];
const params = Type.Object({ repo_id: UuidSchema });
const labelParams = Type.Object({ repo_id: UuidSchema, label_id: UuidSchema });

/** Repository labels (extension): list for everyone who sees the repository, manage for its admins. */
export function registerLabelRoutes(app: App, service: LabelsService): void {
  app.get(
    '/api/v0/repositories/:repo_id/labels',
    {
      schema: {
        operationId: 'listLabels',
        tags,
        security,
        summary: 'List the labels usable on a repository',
        params,
        response: {
          200: Type.Object({ labels: Type.Array(ref(LabelSchema)) }, { $id: 'LabelList' }),
          ...v0Errors(404),
        },
      },
    },
    async (request) => ({ labels: await service.listLabels(request.actor, request.params.repo_id) }),
  );

  app.post(
    '/api/v0/repositories/:repo_id/labels',
    {
      schema: {
        operationId: 'createLabel',
        tags,
        security,
        summary: 'Create a label (repository admins)',
        params,
        body: CreateLabelSchema,
        response: { 201: ref(LabelSchema), ...v0Errors(404, 409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await service.createLabel(request.actor, request.params.repo_id, request.body)),
  );

  app.patch(
    '/api/v0/repositories/:repo_id/labels/:label_id',
    {
      schema: {
        operationId: 'updateLabel',
        tags,
        security,
        summary: 'Update or archive a label (repository admins)',
        params: labelParams,
        body: UpdateLabelSchema,
        response: { 200: ref(LabelSchema), ...v0Errors(404, 409) },
      },
    },
    async (request) =>
      service.updateLabel(request.actor, request.params.repo_id, request.params.label_id, request.body),
  );

  app.delete(
    '/api/v0/repositories/:repo_id/labels/:label_id',
    {
      schema: {
        operationId: 'deleteLabel',
        tags,
        security,
        summary: 'Delete a label and remove it from every finding (repository admins)',
        params: labelParams,
        response: { 204: Type.Null(), ...v0Errors(404, 409) },
      },
    },
    async (request, reply) => {
      await service.deleteLabel(request.actor, request.params.repo_id, request.params.label_id);
      return reply.code(204).send(null);
    },
  );
}
