import { and, eq, inArray, lt, lte, notExists, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { archives, scanArchives, sourceUploads } from '../../db/schema/index.ts';

export type SourceUploadRow = typeof sourceUploads.$inferSelect;
export type ArchiveRow = typeof archives.$inferSelect;

/** SQL of upload sessions and archives. */
export function uploadsRepo(db: Db) {
  return {
    async insertUploads(values: Array<typeof sourceUploads.$inferInsert>): Promise<SourceUploadRow[]> {
      return db.insert(sourceUploads).values(values).returning();
    },

    async findUpload(companyId: string, id: string): Promise<SourceUploadRow | undefined> {
      const [row] = await db
        .select()
        .from(sourceUploads)
        .where(and(eq(sourceUploads.companyId, companyId), eq(sourceUploads.id, id)));
      return row;
    },

    /** By id alone: only for the signed upload route, whose signature already names the session. */
    async findUploadById(id: string): Promise<SourceUploadRow | undefined> {
      const [row] = await db.select().from(sourceUploads).where(eq(sourceUploads.id, id));
      return row;
    },

    /** Locks the session row until the transaction ends: completions of one upload are serialized here. */
    async lockUpload(companyId: string, id: string): Promise<SourceUploadRow | undefined> {
      const [row] = await db
        .select()
        .from(sourceUploads)
        .where(and(eq(sourceUploads.companyId, companyId), eq(sourceUploads.id, id)))
        .for('update');
      return row;
    },

    /** Records a received body; false when the session was completed or expired meanwhile. */
    async markReceived(id: string, receivedBytes: number): Promise<boolean> {
      const rows = await db
        .update(sourceUploads)
        .set({ status: 'received', receivedBytes })
        .where(and(eq(sourceUploads.id, id), inArray(sourceUploads.status, ['pending', 'received'])))
        .returning({ id: sourceUploads.id });
      return rows.length === 1;
    },

    /** A rejected archive sends the session back to pending (unless it completed meanwhile). */
    async markPending(id: string): Promise<void> {
      await db
        .update(sourceUploads)
        .set({ status: 'pending', receivedBytes: null })
        .where(and(eq(sourceUploads.id, id), inArray(sourceUploads.status, ['pending', 'received'])));
    },

    async markCompleted(id: string, archiveId: string): Promise<void> {
      await db
        .update(sourceUploads)
        .set({ status: 'completed', archiveId, completedAt: new Date() })
        .where(eq(sourceUploads.id, id));
    },

    /** Inserts the archive of an upload; undefined when the upload already has one (unique upload_id). */
    async insertArchive(values: typeof archives.$inferInsert): Promise<ArchiveRow | undefined> {
      const [row] = await db.insert(archives).values(values).onConflictDoNothing().returning();
      return row;
    },

    async findArchiveByUpload(uploadId: string): Promise<ArchiveRow | undefined> {
      const [row] = await db.select().from(archives).where(eq(archives.uploadId, uploadId));
      return row;
    },

    /** The keys among `keys` that an archive row names. */
    async knownArchiveKeys(keys: string[]): Promise<Set<string>> {
      if (keys.length === 0) return new Set();
      const rows = await db
        .select({ key: archives.objectKey })
        .from(archives)
        .where(inArray(archives.objectKey, keys));
      return new Set(rows.map((r) => r.key));
    },

    /** The keys among `keys` that an upload session names. */
    async knownUploadKeys(keys: string[]): Promise<Set<string>> {
      if (keys.length === 0) return new Set();
      const rows = await db
        .select({ key: sourceUploads.objectKey })
        .from(sourceUploads)
        .where(inArray(sourceUploads.objectKey, keys));
      return new Set(rows.map((r) => r.key));
    },

    async findArchives(companyId: string, ids: string[]): Promise<ArchiveRow[]> {
      if (ids.length === 0) return [];
      return db
        .select()
        .from(archives)
        .where(and(eq(archives.companyId, companyId), inArray(archives.id, ids)));
    },

    /**
     * Marks unfinished sessions past their expiry as expired and returns them, at most `limit`
     * per call; `skip locked` lets two workers share the sweep without waiting on each other.
     */
    async expireDue(now: Date, limit: number): Promise<Array<{ id: string; objectKey: string }>> {
      return db
        .update(sourceUploads)
        .set({ status: 'expired' })
        .where(
          inArray(
            sourceUploads.id,
            db
              .select({ id: sourceUploads.id })
              .from(sourceUploads)
              .where(
                and(
                  inArray(sourceUploads.status, ['pending', 'received']),
                  lte(sourceUploads.expiresAt, now),
                ),
              )
              .limit(limit)
              .for('update', { skipLocked: true }),
          ),
        )
        .returning({ id: sourceUploads.id, objectKey: sourceUploads.objectKey });
    },

    /**
     * Completed sessions whose URL stopped working in (`since`, `now`]: a presigned PUT can still
     * write their upload object until then, so it is removed once more after the expiry.
     */
    async completedExpiredBetween(since: Date, now: Date): Promise<Array<{ objectKey: string }>> {
      return db
        .select({ objectKey: sourceUploads.objectKey })
        .from(sourceUploads)
        .where(
          and(
            eq(sourceUploads.status, 'completed'),
            lte(sourceUploads.expiresAt, now),
            sql`${sourceUploads.expiresAt} > ${since}`,
          ),
        );
    },

    /** Removes expired sessions that expired before `cutoff` (their objects are already gone). */
    async deleteExpiredBefore(cutoff: Date): Promise<number> {
      const rows = await db
        .delete(sourceUploads)
        .where(and(eq(sourceUploads.status, 'expired'), lt(sourceUploads.expiresAt, cutoff)))
        .returning({ id: sourceUploads.id });
      return rows.length;
    },

    /** Archives created before `cutoff` that no scan references, oldest first. */
    async listUnreferencedArchives(
      cutoff: Date,
      limit: number,
    ): Promise<Array<{ id: string; objectKey: string }>> {
      return db
        .select({ id: archives.id, objectKey: archives.objectKey })
        .from(archives)
        .where(
          and(
            lt(archives.createdAt, cutoff),
            notExists(
              db.select({ one: sql`1` }).from(scanArchives).where(eq(scanArchives.archiveId, archives.id)),
            ),
          ),
        )
        .orderBy(archives.createdAt)
        .limit(limit);
    },

    /**
     * Deletes one archive row if still unreferenced, with the upload session that produced it.
     * The scan_archives foreign key makes a concurrent reference and this delete exclusive: if a
     * scan takes the archive first, the `not exists` keeps the row; if the delete wins, the
     * scan's insert fails on the foreign key instead of pointing at a removed archive.
     */
    async deleteArchiveIfUnreferenced(id: string): Promise<boolean> {
      const rows = await db
        .delete(archives)
        .where(
          and(
            eq(archives.id, id),
            notExists(
              db.select({ one: sql`1` }).from(scanArchives).where(eq(scanArchives.archiveId, archives.id)),
            ),
          ),
        )
        .returning({ id: archives.id, uploadId: archives.uploadId });
      const row = rows[0];
      if (!row) return false;
      await db.delete(sourceUploads).where(eq(sourceUploads.id, row.uploadId));
      return true;
    },
  };
}
