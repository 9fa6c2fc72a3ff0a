import { and, asc, eq, isNull, or } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { labels } from '../../db/schema/index.ts';

export type LabelRow = typeof labels.$inferSelect;

/** SQL of labels. */
export function labelsRepo(db: Db) {
  return {
    /** The repository's label with that id, or null. */
    async findInRepository(repositoryId: string, labelId: string): Promise<LabelRow | null> {
      const [row] = await db
        .select()
        .from(labels)
        .where(and(eq(labels.id, labelId), eq(labels.repositoryId, repositoryId)));
      return row ?? null;
    },

    /** Labels usable on the repository: its own and its company's shared ones, by name. */
    async listUsable(repositoryId: string, companyId: string): Promise<LabelRow[]> {
      return db
        .select()
        .from(labels)
        .where(
          or(
            eq(labels.repositoryId, repositoryId),
            and(isNull(labels.repositoryId), eq(labels.companyId, companyId)),
          ),
        )
        .orderBy(asc(labels.name));
    },

    /** Inserts a label; throws the unique violation `labels_repository_name_key` for a taken name. */
    async insert(values: typeof labels.$inferInsert): Promise<LabelRow> {
      const [row] = await db.insert(labels).values(values).returning();
      return row!;
    },

    async update(labelId: string, values: Partial<typeof labels.$inferInsert>): Promise<LabelRow> {
      const [row] = await db.update(labels).set(values).where(eq(labels.id, labelId)).returning();
      return row!;
    },

    async delete(labelId: string): Promise<void> {
      await db.delete(labels).where(eq(labels.id, labelId));
    },
  };
}
