import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { CreatedIdSchema, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { CommentThreadsSchema, CreateCommentSchema, UpdateCommentSchema } from './comments.schemas.ts';
import type { CommentsService } from './comments.service.ts';

const security = [{ UserBearer: [] }];
const extensionTags = ['extension', 'comments'];
const findingRef = Type.String({ minLength: 1, maxLength: 64, description: 'A finding id (uuid) or number' });
const findingParams = Type.Object({ repo_id: UuidSchema, finding_ref: findingRef });
const commentParams = Type.Object({ repo_id: UuidSchema, finding_ref: findingRef, comment_id: UuidSchema });

/** Comments on findings (v0 §4.8) and their read, edit and delete extensions. */
export function registerCommentRoutes(app: App, service: CommentsService): void {
  app.post(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/comment',
    {
      schema: {
        operationId: 'addFindingComment',
        tags: ['comments'],
        security,
        summary: 'Comment on a finding',
        description:
          'The content is markdown, stored as sent. `@project` pings the active company users of the repository’s company (a reviewer spends one of pingsLeft; with none left the comment is refused and nothing is stored); `@username` pings a reviewer, judge or triager of the repository. Mentions inside code spans and blocks do not ping. Reviewers may write only public comments.',
        params: findingParams,
        body: CreateCommentSchema,
        response: { 201: CreatedIdSchema, ...v0Errors(404, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await service.createComment(
            request.actor,
            request.params.repo_id,
            request.params.finding_ref,
            request.body,
          ),
        ),
  );

  app.get(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/comments',
    {
      schema: {
        operationId: 'listFindingComments',
        tags: extensionTags,
        security,
        summary: 'The comment threads of a finding the caller may read; marks them read',
        description:
          'Threads oldest first, each with its replies oldest first. Deleted comments keep their place with content null.',
        params: findingParams,
        response: { 200: CommentThreadsSchema, ...v0Errors(404) },
      },
    },
    async (request) =>
      service.listComments(request.actor, request.params.repo_id, request.params.finding_ref),
  );

  app.patch(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/comments/:comment_id',
    {
      schema: {
        operationId: 'editFindingComment',
        tags: extensionTags,
        security,
        summary: "Edit one's own comment",
        params: commentParams,
        body: UpdateCommentSchema,
        response: { 204: Type.Null(), ...v0Errors(404, 409) },
      },
    },
    async (request, reply) => {
      const { repo_id, finding_ref, comment_id } = request.params;
      await service.editComment(request.actor, repo_id, finding_ref, comment_id, request.body.content);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/api/v0/repositories/:repo_id/findings/:finding_ref/comments/:comment_id',
    {
      schema: {
        operationId: 'deleteFindingComment',
        tags: extensionTags,
        security,
        summary: "Delete one's own comment (admins: any); replies stay in the thread",
        params: commentParams,
        response: { 204: Type.Null(), ...v0Errors(404) },
      },
    },
    async (request, reply) => {
      const { repo_id, finding_ref, comment_id } = request.params;
      await service.deleteComment(request.actor, repo_id, finding_ref, comment_id);
      return reply.code(204).send(null);
    },
  );
}
