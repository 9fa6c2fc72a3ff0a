import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { findingExports, findings, findingTickets } from '../../db/schema/index.ts';
import type { TrackerProvider } from '../../integrations/trackers/tracker.types.ts';

export type FindingTicketRow = typeof findingTickets.$inferSelect;
export type FindingExportRow = typeof findingExports.$inferSelect;

/** An export row with its lease judged on the database clock. */
export interface FindingExportRecord {
  readonly row: FindingExportRow;
  /** True when the row is not `in_progress`, or its lease has run out. */
  readonly leaseExpired: boolean;
}

/** The finding fields a ticket is made from. */
export interface FindingForTicket {
  id: string;
  title: string;
  description: string;
  severity: string;
  location: { file: string; startLine: number; endLine: number } | null;
  identifiers: Array<{ type: string; name: string; value: string }>;
}

/**
 * SQL of finding tickets and exports. Lease times use the database clock (`now()`), so that
 * API replicas and workers with skewed clocks agree on when an export's lock has run out.
 */
export function ticketsRepo(db: Db) {
  const exportKey = (findingId: string, provider: TrackerProvider) =>
    and(eq(findingExports.findingId, findingId), eq(findingExports.provider, provider));

  return {
    /**
     * Names the user a console session acts for as the actor of the finding events this
     * transaction's ticket writes cause (migration 0038); transaction-local.
     */
    async actAs(userId: string): Promise<void> {
      await db.execute(sql`select set_config('vigil.actor', ${userId}, true)`);
    },

    /** The company's finding (draft or published), or undefined. */
    async findFinding(companyId: string, findingId: string): Promise<FindingForTicket | undefined> {
      const [row] = await db
        .select({
          id: findings.id,
          title: findings.title,
          description: findings.description,
          severity: findings.severity,
          location: findings.location,
          identifiers: findings.identifiers,
        })
        .from(findings)
        .where(and(eq(findings.id, findingId), eq(findings.companyId, companyId)));
      return row;
    },

    /**
     * Locks the company's finding row until the transaction ends; false when there is none.
     * Every link and every export claim of a finding takes this lock first, so that reading the
     * export and the ticket and writing one of them is never interleaved with another request's.
     */
    async lockFinding(companyId: string, findingId: string): Promise<boolean> {
      const rows = await db
        .select({ id: findings.id })
        .from(findings)
        .where(and(eq(findings.id, findingId), eq(findings.companyId, companyId)))
        .for('update');
      return rows.length === 1;
    },

    async listTickets(findingId: string): Promise<FindingTicketRow[]> {
      return db
        .select()
        .from(findingTickets)
        .where(eq(findingTickets.findingId, findingId))
        .orderBy(asc(findingTickets.linkedAt), asc(findingTickets.provider));
    },

    async findTicket(findingId: string, provider: TrackerProvider): Promise<FindingTicketRow | undefined> {
      const [row] = await db
        .select()
        .from(findingTickets)
        .where(and(eq(findingTickets.findingId, findingId), eq(findingTickets.provider, provider)));
      return row;
    },

    async findTicketById(id: string): Promise<FindingTicketRow | undefined> {
      const [row] = await db.select().from(findingTickets).where(eq(findingTickets.id, id));
      return row;
    },

    async insertTicket(values: typeof findingTickets.$inferInsert): Promise<FindingTicketRow> {
      const [row] = await db.insert(findingTickets).values(values).returning();
      return row!;
    },

    /** Refreshes what the provider said about an already linked ticket (key, title, state). */
    async refreshTicket(
      id: string,
      values: Pick<FindingTicketRow, 'key' | 'url' | 'title' | 'status'>,
    ): Promise<FindingTicketRow> {
      const [row] = await db.update(findingTickets).set(values).where(eq(findingTickets.id, id)).returning();
      return row!;
    },

    async findExport(findingId: string, provider: TrackerProvider): Promise<FindingExportRecord | undefined> {
      const [found] = await db
        .select({
          row: findingExports,
          leaseExpired: sql<boolean>`(${findingExports.state} <> 'in_progress' or coalesce(${findingExports.leaseUntil} <= now(), true))`,
        })
        .from(findingExports)
        .where(exportKey(findingId, provider));
      return found;
    },

    /**
     * Inserts the `in_progress` export that locks (finding, provider) before the provider is
     * called. `ON CONFLICT DO NOTHING` on the unique (finding, provider) index makes the claim
     * atomic even without the finding lock: of concurrent inserts exactly one returns a row.
     */
    async insertExport(input: {
      companyId: string;
      findingId: string;
      provider: TrackerProvider;
      integrationId: string | null;
      clientRef: { clientId: string; label: string };
      leaseSeconds: number;
    }): Promise<FindingExportRow | undefined> {
      const [row] = await db
        .insert(findingExports)
        .values({
          companyId: input.companyId,
          findingId: input.findingId,
          provider: input.provider,
          integrationId: input.integrationId,
          state: 'in_progress',
          clientRef: input.clientRef,
          attempts: 1,
          leaseUntil: sql`now() + make_interval(secs => ${input.leaseSeconds})`,
        })
        .onConflictDoNothing()
        .returning();
      return row;
    },

    /**
     * Takes an existing export back to `in_progress` for another attempt. Conditional on the
     * state and attempt number read a moment ago, so that of two claimers only one wins, and a
     * live `in_progress` lease is never taken over. `attempts` doubles as the fencing token the
     * final write checks.
     */
    async reclaimExport(input: {
      id: string;
      expectedAttempts: number;
      integrationId: string | null;
      leaseSeconds: number;
    }): Promise<FindingExportRow | undefined> {
      const [row] = await db
        .update(findingExports)
        .set({
          state: 'in_progress',
          integrationId: input.integrationId,
          attempts: sql`to_jsonb((${findingExports.attempts})::text::int + 1)`,
          leaseUntil: sql`now() + make_interval(secs => ${input.leaseSeconds})`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(findingExports.id, input.id),
            sql`${findingExports.attempts} = to_jsonb(${input.expectedAttempts}::int)`,
            sql`(${findingExports.state} in ('failed', 'unknown') or (${findingExports.state} = 'in_progress' and coalesce(${findingExports.leaseUntil} <= now(), true)))`,
          ),
        )
        .returning();
      return row;
    },

    /**
     * Renews the lease of an attempt that still owns the export (same attempt, still running),
     * before a second long provider call. False when another attempt has taken it over.
     */
    async extendLease(id: string, attempt: number, leaseSeconds: number): Promise<boolean> {
      const rows = await db
        .update(findingExports)
        .set({ leaseUntil: sql`now() + make_interval(secs => ${leaseSeconds})`, updatedAt: sql`now()` })
        .where(
          and(
            eq(findingExports.id, id),
            eq(findingExports.state, 'in_progress'),
            sql`${findingExports.attempts} = to_jsonb(${attempt}::int)`,
          ),
        )
        .returning({ id: findingExports.id });
      return rows.length === 1;
    },

    /**
     * Records the outcome of an attempt, only if the export is still this attempt's: a process
     * whose lease ran out and was taken over must not overwrite the newer attempt.
     */
    async settleExport(input: {
      id: string;
      attempt: number;
      state: 'created' | 'failed' | 'unknown';
      ticketId: string | null;
      error: { code: string; message: string } | null;
    }): Promise<FindingExportRow | undefined> {
      const [row] = await db
        .update(findingExports)
        .set({
          state: input.state,
          ticketId: input.ticketId,
          error: input.error,
          leaseUntil: null,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(findingExports.id, input.id),
            eq(findingExports.state, 'in_progress'),
            sql`${findingExports.attempts} = to_jsonb(${input.attempt}::int)`,
          ),
        )
        .returning();
      return row;
    },

    /**
     * Marks the export of (finding, provider) as done with an existing ticket (a linked one),
     * creating the export row when the finding was never sent. Only under the finding lock.
     */
    async recordExistingTicket(input: {
      companyId: string;
      findingId: string;
      provider: TrackerProvider;
      ticket: FindingTicketRow;
      clientRef: { clientId: string; label: string };
    }): Promise<FindingExportRow> {
      const [row] = await db
        .insert(findingExports)
        .values({
          companyId: input.companyId,
          findingId: input.findingId,
          provider: input.provider,
          integrationId: input.ticket.integrationId,
          state: 'created',
          clientRef: input.clientRef,
          ticketId: input.ticket.id,
        })
        .onConflictDoUpdate({
          target: [findingExports.findingId, findingExports.provider],
          set: {
            state: 'created',
            ticketId: input.ticket.id,
            error: null,
            leaseUntil: null,
            updatedAt: sql`now()`,
          },
          // An export that is running or whose outcome is unknown is never overwritten here.
          setWhere: inArray(findingExports.state, ['created', 'failed']),
        })
        .returning();
      if (row) return row;
      const [current] = await db
        .select()
        .from(findingExports)
        .where(exportKey(input.findingId, input.provider));
      return current!;
    },
  };
}

export type TicketsRepo = ReturnType<typeof ticketsRepo>;
