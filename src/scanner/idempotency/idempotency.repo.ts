import { and, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { idempotencyRecords } from '../../db/schema/index.ts';
import type { JsonValue } from '../../json.ts';

export type IdempotencyRecordRow = typeof idempotencyRecords.$inferSelect;

/**
 * SQL of idempotency records. Every time comparison uses the database clock (`now()`), so that
 * several API replicas with skewed clocks agree on when a claim's lock or a record has expired.
 */
export function idempotencyRepo(db: Db) {
  const key = (companyId: string, k: string) =>
    and(eq(idempotencyRecords.companyId, companyId), eq(idempotencyRecords.key, k));

  return {
    /**
     * Claims (organization, key) for one request: inserts an `in_progress` record unless one
     * exists. `ON CONFLICT DO NOTHING` makes the claim atomic across replicas: of concurrent
     * requests exactly one inserts; the others see the existing record. Returns true when this
     * request holds the claim.
     */
    async claim(input: {
      companyId: string;
      key: string;
      fingerprint: string;
      claimId: string;
      lockSeconds: number;
      ttlHours: number;
    }): Promise<boolean> {
      const rows = await db
        .insert(idempotencyRecords)
        .values({
          companyId: input.companyId,
          key: input.key,
          fingerprint: input.fingerprint,
          state: 'in_progress',
          claimId: input.claimId,
          lockedUntil: sql`now() + make_interval(secs => ${input.lockSeconds})`,
          expiresAt: sql`now() + make_interval(hours => ${input.ttlHours})`,
        })
        .onConflictDoNothing()
        .returning({ key: idempotencyRecords.key });
      return rows.length === 1;
    },

    /** The record with flags computed on the database clock. */
    async find(companyId: string, k: string) {
      const [row] = await db
        .select({
          record: idempotencyRecords,
          expired: sql<boolean>`${idempotencyRecords.expiresAt} <= now()`,
          lockExpired: sql<boolean>`coalesce(${idempotencyRecords.lockedUntil} <= now(), true)`,
        })
        .from(idempotencyRecords)
        .where(key(companyId, k));
      return row;
    },

    /** Deletes the record only if it has expired (a concurrent fresh claim is left alone). */
    async deleteIfExpired(companyId: string, k: string): Promise<void> {
      await db
        .delete(idempotencyRecords)
        .where(and(key(companyId, k), lte(idempotencyRecords.expiresAt, sql`now()`)));
    },

    /**
     * Takes over a claim whose holder stopped renewing it (crashed, or its connection died
     * before it could release the claim). The condition on the old claim id and on the lock
     * having passed makes the take-over atomic: of several waiting requests one wins. A holder
     * still inside its transaction has the row locked (see `lockClaim`), so this UPDATE waits
     * and then finds the record completed.
     */
    async takeOver(
      companyId: string,
      k: string,
      oldClaimId: string | null,
      newClaimId: string,
      lockSeconds: number,
    ) {
      const rows = await db
        .update(idempotencyRecords)
        .set({ claimId: newClaimId, lockedUntil: sql`now() + make_interval(secs => ${lockSeconds})` })
        .where(
          and(
            key(companyId, k),
            eq(idempotencyRecords.state, 'in_progress'),
            oldClaimId === null
              ? sql`${idempotencyRecords.claimId} is null`
              : eq(idempotencyRecords.claimId, oldClaimId),
            lte(idempotencyRecords.lockedUntil, sql`now()`),
          ),
        )
        .returning({ key: idempotencyRecords.key });
      return rows.length === 1;
    },

    /**
     * Locks this request's claim row for the rest of the caller's transaction. Returns false
     * when the claim is no longer ours (it was taken over after our lock passed).
     */
    async lockClaim(companyId: string, k: string, claimId: string): Promise<boolean> {
      const rows = await db
        .select({ key: idempotencyRecords.key })
        .from(idempotencyRecords)
        .where(
          and(
            key(companyId, k),
            eq(idempotencyRecords.claimId, claimId),
            eq(idempotencyRecords.state, 'in_progress'),
          ),
        )
        .for('update');
      return rows.length === 1;
    },

    /** Stores the response of our claim; false when the claim is not ours any more. */
    async complete(
      companyId: string,
      k: string,
      claimId: string,
      status: number,
      body: JsonValue,
    ): Promise<boolean> {
      const rows = await db
        .update(idempotencyRecords)
        .set({ state: 'completed', responseStatus: status, responseBody: body, lockedUntil: null })
        .where(
          and(
            key(companyId, k),
            eq(idempotencyRecords.claimId, claimId),
            eq(idempotencyRecords.state, 'in_progress'),
          ),
        )
        .returning({ key: idempotencyRecords.key });
      return rows.length === 1;
    },

    /** Removes our in-progress claim so that the identical retry executes again. */
    async release(companyId: string, k: string, claimId: string): Promise<void> {
      await db
        .delete(idempotencyRecords)
        .where(
          and(
            key(companyId, k),
            eq(idempotencyRecords.claimId, claimId),
            eq(idempotencyRecords.state, 'in_progress'),
          ),
        );
    },

    /** Deletes up to `limit` expired records; returns how many. */
    async deleteExpired(limit: number): Promise<number> {
      const rows = await db.execute<{ key: string }>(sql`
        delete from idempotency_records
        where (company_id, key) in (
          select company_id, key from idempotency_records where expires_at <= now() limit ${limit}
        )
        returning key`);
      return rowsOf(rows).length;
    },
  };
}

/** node-postgres returns `{rows}` through drizzle's execute. */
function rowsOf<T>(result: unknown): T[] {
  const r = result as { rows?: T[] } | T[];
  return Array.isArray(r) ? r : (r.rows ?? []);
}
