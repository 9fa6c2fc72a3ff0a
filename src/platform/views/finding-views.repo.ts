import { and, asc, eq, or } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { findingViews } from '../../db/schema/index.ts';

/** SQL of saved finding views. */
export function findingViewsRepo(db: Db) {
  return {
    /** Inserts a view; returns its id. */
    async insert(values: typeof findingViews.$inferInsert): Promise<string> {
      const [row] = await db.insert(findingViews).values(values).returning({ id: findingViews.id });
      return row!.id;
    },

    /** One view of the repository (null: none). */
    async find(repositoryId: string, id: string) {
      const [row] = await db
        .select({ id: findingViews.id, personal: findingViews.personal, userId: findingViews.userId })
        .from(findingViews)
        .where(and(eq(findingViews.repositoryId, repositoryId), eq(findingViews.id, id)));
      return row ?? null;
    },

    /** Deletes a view. */
    async remove(id: string): Promise<void> {
      await db.delete(findingViews).where(eq(findingViews.id, id));
    },

    /** The repository's shared views and the user's own personal views, by name. */
    async listVisible(repositoryId: string, userId: string | null) {
      const mine = userId ? eq(findingViews.userId, userId) : undefined;
      return db
        .select({
          id: findingViews.id,
          personal: findingViews.personal,
          name: findingViews.name,
          filter: findingViews.filter,
          description: findingViews.description,
          columns: findingViews.columns,
          createdAt: findingViews.createdAt,
        })
        .from(findingViews)
        .where(and(eq(findingViews.repositoryId, repositoryId), or(eq(findingViews.personal, false), mine)))
        .orderBy(asc(findingViews.name), asc(findingViews.id));
    },
  };
}
