import { and, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../db/client.ts';
import { findings, repositoryMembers } from '../../db/schema/index.ts';

/** Statuses that count as a confirmed finding on the leaderboard. */
export const CONFIRMED_STATUSES = ['confirmed', 'acknowledged', 'fixed'] as const;

/**
 * Points per confirmed finding by severity. Informational and gas findings count as findings but
 * earn no points.
 */
export const SEVERITY_POINTS = {
  critical: 10,
  high: 5,
  medium: 2,
  low: 1,
  informational: 0,
  gas_optimization: 0,
} as const;

export interface LeaderboardRow {
  /** The user id (by reviewers) or team id (by teams). */
  key: string;
  score: number;
  rewards: string;
  confirmed: number;
  critical: number;
  high: number;
  medium: number;
  low: number;
  rank: number;
  members: string[];
}

/** The ranking key of a row, for keyset pages: score and rewards descending, then key ascending. */
export interface LeaderboardAfter {
  score: number;
  rewards: string;
  confirmed: number;
  key: string;
}

const points = sql.raw(
  `case ${Object.entries(SEVERITY_POINTS)
    .map(([severity, p]) => `when f.severity = '${severity}' then ${p}`)
    .join(' ')} else 0 end`,
);

/** SQL of the leaderboard. */
export function leaderboardRepo(db: Db) {
  return {
    /**
     * One page of a repository's ranking over the findings `visible` selects (the caller's view),
     * confirmed statuses only, grouped by the finding's author or the author's team. Ties of score
     * and rewards share a rank; the order among them is stable (by id).
     */
    async page(options: {
      repositoryId: string;
      visible: SQL;
      by: 'reviewers' | 'teams';
      teamId: string | undefined;
      after: LeaderboardAfter | undefined;
      limit: number;
    }): Promise<LeaderboardRow[]> {
      const { repositoryId, visible, by, teamId, after, limit } = options;
      const member = sql`(select m.team_id from ${repositoryMembers} m where m.repository_id = ${repositoryId} and m.user_id = ${findings.createdBy} and m.deleted_at is null)`;
      const group = by === 'teams' ? member : sql`${findings.createdBy}`;
      const scoped = db
        .select({
          key: sql<string>`${group}`.as('key'),
          userId: sql<string>`${findings.createdBy}`.as('user_id'),
          severity: sql<string>`${findings.severity}`.as('severity'),
          reward: sql<string>`coalesce(${findings.reward}, 0)`.as('reward'),
        })
        .from(findings)
        .where(
          and(
            visible,
            eq(findings.repositoryId, repositoryId),
            inArray(findings.status, [...CONFIRMED_STATUSES]),
            sql`${findings.createdBy} is not null`,
            teamId !== undefined ? sql`${member} = ${teamId}::uuid` : undefined,
          ),
        )
        .as('f');
      const result = await db.execute(sql`
        with scored as (
          select f.key::text as key,
                 sum(${points})::int as score,
                 sum(f.reward)::numeric as rewards,
                 count(*)::int as confirmed,
                 count(*) filter (where f.severity = 'critical')::int as critical,
                 count(*) filter (where f.severity = 'high')::int as high,
                 count(*) filter (where f.severity = 'medium')::int as medium,
                 count(*) filter (where f.severity = 'low')::int as low,
                 array_agg(distinct f.user_id::text) as members
          from ${scoped}
          where f.key is not null
          group by f.key
        ), ranked as (
          select *, rank() over (order by score desc, rewards desc)::int as rank from scored
        )
        select key, score, rewards::text as rewards, confirmed, critical, high, medium, low, rank, members
        from ranked
        ${
          after
            ? sql`where (score < ${after.score})
                 or (score = ${after.score} and rewards < ${after.rewards}::numeric)
                 or (score = ${after.score} and rewards = ${after.rewards}::numeric and confirmed < ${after.confirmed})
                 or (score = ${after.score} and rewards = ${after.rewards}::numeric and confirmed = ${after.confirmed} and key > ${after.key})`
            : sql``
        }
        order by score desc, rewards desc, confirmed desc, key asc
        limit ${limit + 1}`);
      return rowsOf(result).map((r) => ({
        key: String(r.key),
        score: Number(r.score),
        rewards: String(r.rewards),
        confirmed: Number(r.confirmed),
        critical: Number(r.critical),
        high: Number(r.high),
        medium: Number(r.medium),
        low: Number(r.low),
        rank: Number(r.rank),
        members: (r.members as string[]) ?? [],
      }));
    },

    /** Whether the repository has an active member in the team. */
    async teamExists(repositoryId: string, teamId: string): Promise<boolean> {
      const [row] = await db
        .select({ n: sql<number>`1` })
        .from(repositoryMembers)
        .where(
          and(
            eq(repositoryMembers.repositoryId, repositoryId),
            eq(repositoryMembers.teamId, teamId),
            isNull(repositoryMembers.deletedAt),
          ),
        )
        .limit(1);
      return row !== undefined;
    },
  };
}
