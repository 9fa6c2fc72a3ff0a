import { visibleFindingsCondition } from '../../access/access.repo.ts';
import { loadFindingAccess, requireVisibleRepository } from '../../access/access.service.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { isUuid } from '../../strings.ts';
import { type CursorCodec, hashFilters, invalidCursor } from '../pagination/cursor.ts';
import { usersRepo } from '../users/users.repo.ts';
import type { ShortUserSummary } from '../users/users.schemas.ts';
import { type LeaderboardAfter, leaderboardRepo } from './leaderboard.repo.ts';

export interface LeaderboardQuery {
  by?: 'reviewers' | 'teams' | undefined;
  team?: string | undefined;
  limit?: number | undefined;
  next?: string | undefined;
}

export interface LeaderboardEntry {
  rank: number;
  user: ShortUserSummary | null;
  teamId: string | null;
  members: ShortUserSummary[];
  score: number;
  rewards: string;
  confirmedFindings: number;
  bySeverity: { critical: number; high: number; medium: number; low: number };
}

const DEFAULT_LIMIT = 50;

/** The leaderboard of a repository: reviewers or teams ranked by their confirmed findings. */
export function createLeaderboardService(deps: { database: Database; cursors: CursorCodec }) {
  const { database } = deps;
  return {
    /**
     * One page of the ranking, computed over the findings the caller may see (a reviewer who sees
     * only their own findings sees a board of their own). Score: confirmed findings weighted by
     * severity; ties broken by rewards, then by the number of confirmed findings, then by id.
     */
    async getLeaderboard(
      actor: Actor,
      repositoryId: string,
      query: LeaderboardQuery,
    ): Promise<{ items: LeaderboardEntry[]; nextValue: string | null }> {
      const access = await loadFindingAccess(database.db, actor);
      await requireVisibleRepository(database.db, access, repositoryId);
      const by = query.by ?? 'reviewers';
      const repo = leaderboardRepo(database.db);
      if (query.team !== undefined && !(await repo.teamExists(repositoryId, query.team))) {
        throw new AppError('NOT_FOUND', { message: 'No such team in this repository.' });
      }
      const filterHash = hashFilters({ repositoryId, by, team: query.team, board: 'leaderboard' });
      const keys = query.next === undefined ? [] : deps.cursors.decode(query.next, filterHash);
      let after: LeaderboardAfter | undefined;
      if (keys.length > 0) {
        const [score, rewards, confirmed, key] = keys;
        if (
          keys.length !== 4 ||
          !Number.isSafeInteger(score) ||
          typeof rewards !== 'string' ||
          !/^-?\d{1,30}(\.\d{1,30})?$/.test(rewards) ||
          !Number.isSafeInteger(confirmed) ||
          typeof key !== 'string' ||
          !isUuid(key)
        ) {
          throw invalidCursor();
        }
        after = { score: score as number, rewards, confirmed: confirmed as number, key };
      }
      const limit = query.limit ?? DEFAULT_LIMIT;
      const rows = await repo.page({
        repositoryId,
        visible: visibleFindingsCondition(access),
        by,
        teamId: query.team,
        after,
        limit,
      });
      const page = deps.cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(query.next !== undefined ? { given: query.next } : {}),
        keyOf: (r) => [r.score, r.rewards, r.confirmed, r.key],
      });
      const summaries = await usersRepo(database.db).shortSummaries(
        page.items.flatMap((r) => (by === 'reviewers' ? [r.key] : r.members)),
      );
      return {
        items: page.items.map((r) => ({
          rank: r.rank,
          user: by === 'reviewers' ? (summaries.get(r.key) ?? null) : null,
          teamId: by === 'teams' ? r.key : null,
          members: (by === 'teams' ? r.members : [r.key])
            .map((id) => summaries.get(id))
            .filter((s): s is ShortUserSummary => s !== undefined),
          score: r.score,
          rewards: r.rewards,
          confirmedFindings: r.confirmed,
          bySeverity: { critical: r.critical, high: r.high, medium: r.medium, low: r.low },
        })),
        nextValue: page.nextValue,
      };
    },
  };
}

export type LeaderboardService = ReturnType<typeof createLeaderboardService>;
