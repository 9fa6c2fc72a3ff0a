import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { findingEvents, findings, labels, users } from '../../db/schema/index.ts';
import type { JsonObject } from '../../json.ts';

/** The most events a finding's timeline shows (its latest ones). */
export const MAX_FINDING_EVENTS = 1000;

/** A finding event as stored, with its actor's user row when there is one. */
export interface FindingEventRow {
  id: number;
  kind: string;
  data: JsonObject;
  createdAt: Date;
  actor: Pick<typeof users.$inferSelect, 'id' | 'name' | 'username' | 'avatar' | 'disabledAt'> | null;
}

/** The change log of findings (`finding_events`, written by the triggers of migration 0038). */
export function findingEventsRepo(db: Db) {
  return {
    /**
     * Names the user the current transaction acts for, so that the events its writes cause carry
     * them as actor; transaction-local (`set_config(…, true)`), gone at commit or rollback.
     */
    async actAs(userId: string): Promise<void> {
      await db.execute(sql`select set_config('vigil.actor', ${userId}, true)`);
    },

    /**
     * Adds an event that no trigger writes (the scanner's "still present" / "not reproduced", …).
     * `kind` is free: the timeline shows kinds it does not know generically.
     */
    async record(event: { findingId: string; kind: string; data?: JsonObject; actorId?: string | null }) {
      await db.insert(findingEvents).values({
        findingId: event.findingId,
        kind: event.kind,
        data: event.data ?? {},
        actorId: event.actorId ?? null,
      });
    },

    /** The latest {@link MAX_FINDING_EVENTS} events of a finding, oldest first. */
    async list(findingId: string): Promise<FindingEventRow[]> {
      const rows = await db
        .select({
          id: findingEvents.id,
          kind: findingEvents.kind,
          data: findingEvents.data,
          createdAt: findingEvents.createdAt,
          actorId: users.id,
          actorName: users.name,
          actorUsername: users.username,
          actorAvatar: users.avatar,
          actorDisabledAt: users.disabledAt,
        })
        .from(findingEvents)
        .leftJoin(users, eq(users.id, findingEvents.actorId))
        .where(eq(findingEvents.findingId, findingId))
        .orderBy(desc(findingEvents.createdAt), desc(findingEvents.id))
        .limit(MAX_FINDING_EVENTS);
      return rows.reverse().map((r) => ({
        id: r.id,
        kind: r.kind,
        data: r.data,
        createdAt: r.createdAt,
        actor:
          r.actorId === null || r.actorUsername === null || r.actorName === null
            ? null
            : {
                id: r.actorId,
                name: r.actorName,
                username: r.actorUsername,
                avatar: r.actorAvatar,
                disabledAt: r.actorDisabledAt,
              },
      }));
    },

    /** Users named by events (assignees), by id. */
    async users(ids: string[]) {
      if (ids.length === 0) return [];
      return db
        .select({
          id: users.id,
          name: users.name,
          username: users.username,
          avatar: users.avatar,
          disabledAt: users.disabledAt,
        })
        .from(users)
        .where(inArray(users.id, ids));
    },

    /**
     * Labels named by events that belong to the repository or to its company, by id (a deleted
     * label is simply absent).
     */
    async labels(repository: { id: string; companyId: string }, ids: string[]) {
      if (ids.length === 0) return [];
      return db
        .select({ id: labels.id, name: labels.name, reviewerRead: labels.reviewerRead })
        .from(labels)
        .where(
          and(
            inArray(labels.id, ids),
            or(
              eq(labels.repositoryId, repository.id),
              and(isNull(labels.repositoryId), eq(labels.companyId, repository.companyId)),
            ),
          ),
        );
    },

    /** Findings of the repository named by events (duplicate targets), with what visibility needs. */
    async findings(repositoryId: string, ids: string[]) {
      if (ids.length === 0) return [];
      return db
        .select({
          id: findings.id,
          number: findings.number,
          title: findings.title,
          createdBy: findings.createdBy,
          published: findings.published,
        })
        .from(findings)
        .where(and(inArray(findings.id, ids), eq(findings.repositoryId, repositoryId)))
        .orderBy(asc(findings.number));
    },
  };
}
