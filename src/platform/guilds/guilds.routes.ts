import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { DateTimeSchema, UuidSchema, v0Errors } from '../../http/schemas.ts';
import type { GuildsService } from './guilds.service.ts';

const GuildSchema = Type.Object({ id: UuidSchema, name: Type.String(), createdAt: DateTimeSchema });
const tags = ['extension', 'guilds'];

/** Guilds (extension): a public list, creation by platform admins. */
export function registerGuildRoutes(app: App, guilds: GuildsService): void {
  app.get(
    '/api/v0/guilds',
    {
      schema: {
        operationId: 'listGuilds',
        tags,
        security: [{ UserBearer: [] }, {}],
        summary: 'List guilds (public)',
        response: { 200: Type.Object({ guilds: Type.Array(GuildSchema) }), ...v0Errors() },
      },
      config: { auth: { kind: 'optional-user' } },
    },
    async () => ({ guilds: await guilds.listGuilds() }),
  );

  app.post(
    '/api/v0/guilds',
    {
      schema: {
        operationId: 'createGuild',
        tags,
        security: [{ UserBearer: [] }],
        summary: 'Create a guild (platform admins)',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }) },
          { additionalProperties: false },
        ),
        response: { 201: GuildSchema, ...v0Errors(409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await guilds.createGuild(request.actor, request.body.name)),
  );
}
