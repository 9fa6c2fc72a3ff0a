import { Type } from '@sinclair/typebox';
import type { App } from '../../http/app-type.ts';
import { Nullable, ref, UuidSchema, v0Errors } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';
import type { LeaderboardService } from './leaderboard.service.ts';

export const LeaderboardEntrySchema = Type.Object(
  {
    rank: Type.Integer({
      description: 'Position by score, then rewards; equal scores and rewards share a rank',
    }),
    user: Nullable(ref(ShortUserSummarySchema)),
    teamId: Nullable(UuidSchema),
    members: Type.Array(ref(ShortUserSummarySchema), {
      description: 'The reviewer, or the team members who scored',
    }),
    score: Type.Integer({
      description: 'Confirmed findings weighted by severity: critical 10, high 5, medium 2, low 1',
    }),
    rewards: Type.String({ description: 'Sum of the rewards of the confirmed findings' }),
    confirmedFindings: Type.Integer(),
    bySeverity: Type.Object({
      critical: Type.Integer(),
      high: Type.Integer(),
      medium: Type.Integer(),
      low: Type.Integer(),
    }),
  },
  { $id: 'LeaderboardEntry' },
);

/** The leaderboard of a repository (extension). */
export function registerLeaderboardRoutes(app: App, service: LeaderboardService): void {
  app.get(
    '/api/v0/repositories/:repoId/leaderboard',
    {
      schema: {
        operationId: 'getLeaderboard',
        tags: ['extension', 'repositories'],
        security: [{ UserBearer: [] }],
        summary:
          'Reviewers or teams ranked by confirmed findings (confirmed, acknowledged, fixed) weighted by severity, then rewards',
        description:
          'Computed over the findings the caller may see. `by=teams` ranks teams (repository members with a team), `team` limits the board to one team. Cursor paging with `next`.',
        params: Type.Object({ repoId: UuidSchema }),
        querystring: Type.Object(
          {
            by: Type.Optional(Type.Union([Type.Literal('reviewers'), Type.Literal('teams')])),
            team: Type.Optional(UuidSchema),
            limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 50 })),
            next: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              items: Type.Array(ref(LeaderboardEntrySchema)),
              nextValue: Nullable(Type.String()),
            },
            { $id: 'Leaderboard' },
          ),
          ...v0Errors(400, 401, 404),
        },
      },
    },
    async (request) => service.getLeaderboard(request.actor, request.params.repoId, request.query),
  );
}
