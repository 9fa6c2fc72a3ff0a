import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { UuidSchema, v0Errors } from '../../http/schemas.ts';
import { AiAnswerSchema, AiConversationSchema, AiStatusSchema, AskAiSchema } from './ai.schemas.ts';
import type { AiService } from './ai.service.ts';

const security = [{ UserBearer: [] }];
const params = Type.Object({ repo_id: UuidSchema });

/** The repository assistant: ask (v0 §4.1), and its status and conversations (extensions). */
export function registerAiRoutes(app: App, service: AiService): void {
  app.post(
    '/api/v0/repositories/:repo_id/ai/ask',
    {
      schema: {
        operationId: 'askAi',
        tags: ['ai'],
        security,
        summary: 'Ask the repository assistant a question',
        description:
          'Answers from the repository data the caller may see (scope, instructions, asset groups, safe harbor, findings, comments), citing findings as #N and files by path. Without a configured model the answer lists the most relevant items. 429 when the per-user rate limit or the company monthly token budget is exhausted; 502, 503 and 504 when the model fails, is busy or does not answer in time.',
        params,
        body: AskAiSchema,
        response: { 200: AiAnswerSchema, ...v0Errors(404, 502, 503, 504) },
      },
    },
    async (request, reply) => {
      const answer = await service.ask(request.actor, request.params.repo_id, request.body);
      // The contract is a JSON string: written by the route's serializer, sent as JSON (a string
      // given to `send` as it is would leave as text/plain).
      const json = reply.serialize(answer);
      return reply
        .type('application/json; charset=utf-8')
        .send(typeof json === 'string' ? json : String(json));
    },
  );

  app.get(
    '/api/v0/repositories/:repo_id/ai/status',
    {
      schema: {
        operationId: 'getAiStatus',
        tags: ['extension', 'ai'],
        security,
        summary: 'Whether the repository assistant is available, and on which model',
        params,
        response: { 200: AiStatusSchema, ...v0Errors(404) },
      },
    },
    async (request) => service.status(request.actor, request.params.repo_id),
  );

  app.get(
    '/api/v0/repositories/:repo_id/ai/conversations/:conversation_id',
    {
      schema: {
        operationId: 'getAiConversation',
        tags: ['extension', 'ai'],
        security,
        summary: "One of the caller's conversations with the repository assistant",
        params: Type.Object({ repo_id: UuidSchema, conversation_id: UuidSchema }),
        response: { 200: AiConversationSchema, ...v0Errors(404) },
      },
    },
    async (request) =>
      service.conversation(request.actor, request.params.repo_id, request.params.conversation_id),
  );
}
