import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { DateTimeSchema, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import type { GuildsService } from './guilds.service.ts';

export const GuildSchema = Type.Object(
  { id: UuidSchema, name: Type.String(), createdAt: DateTimeSchema },
  { $id: 'Guild' },
);
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
        response: {
          200: Type.Object({ guilds: Type.Array(ref(GuildSchema)) }, { $id: 'GuildList' }),
          ...v0Errors(),
        },
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
          { $id: 'CreateGuildRequest', additionalProperties: false },
        ),
        response: { 201: ref(GuildSchema), ...v0Errors(409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await guilds.createGuild(request.actor, request.body.name)),
  );
}
