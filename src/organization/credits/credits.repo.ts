import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { creditAccounts, creditLedger, scanTypes } from '../../db/schema/index.ts';
import { keptStatements } from '../../db/sql.ts';

/** The scan types credits are counted for. */
export { scanTypes };
export type ScanType = (typeof scanTypes)[number];

export type LedgerKind = 'grant' | 'reserve' | 'release' | 'consume' | 'refund';

/** The account read of getCreditBalances, built once per database handle (a hot read). */
const accountReads = keptStatements<ReturnType<typeof prepareAccountRead>>();
function prepareAccountRead(db: Db) {
  return db
    .select()
    .from(creditAccounts)
    .where(eq(creditAccounts.companyId, sql.placeholder('companyId')))
    .prepare('credits_account');
}

/** SQL of the credit ledger and the per-company account row. */
export function creditsRepo(db: Db) {
  return {
    async ensureAccount(companyId: string) {
      await db.insert(creditAccounts).values({ companyId }).onConflictDoNothing();
    },

    /** Locks the company's account row: every change of one company's credits is serialized on it. */
    async lockAccount(companyId: string) {
      await this.ensureAccount(companyId);
      const [row] = await db
        .select()
        .from(creditAccounts)
        .where(eq(creditAccounts.companyId, companyId))
        .for('update');
      return row!;
    },

    async getAccount(companyId: string) {
      const read = accountReads(db, '', () => prepareAccountRead(db));
      const [row] = await read.execute({ companyId });
      return row ?? { companyId, purchased: 0, used: 0, reserved: 0, updatedAt: new Date() };
    },

    /**
     * Reserves `amount` only if that much remains, in one statement: the check and the change
     * cannot be separated by a concurrent reservation. Returns false when too little remains.
     */
    async reserveIfAvailable(companyId: string, amount: number): Promise<boolean> {
      const rows = await db
        .update(creditAccounts)
        .set({ reserved: sql`${creditAccounts.reserved} + ${amount}`, updatedAt: new Date() })
        .where(
          and(
            eq(creditAccounts.companyId, companyId),
            sql`${creditAccounts.purchased} - ${creditAccounts.used} - ${creditAccounts.reserved} >= ${amount}`,
          ),
        )
        .returning({ companyId: creditAccounts.companyId });
      return rows.length === 1;
    },

    async adjust(companyId: string, delta: { purchased?: number; used?: number; reserved?: number }) {
      await db
        .update(creditAccounts)
        .set({
          purchased: sql`${creditAccounts.purchased} + ${delta.purchased ?? 0}`,
          used: sql`${creditAccounts.used} + ${delta.used ?? 0}`,
          reserved: sql`${creditAccounts.reserved} + ${delta.reserved ?? 0}`,
          updatedAt: new Date(),
        })
        .where(eq(creditAccounts.companyId, companyId));
    },

    /** Appends a ledger row; for a scan, at most one row per kind (false when it existed). */
    async append(entry: {
      companyId: string;
      kind: LedgerKind;
      amount: number;
      scanId?: string;
      note?: string;
    }) {
      const rows = await db
        .insert(creditLedger)
        .values({
          companyId: entry.companyId,
          kind: entry.kind,
          amount: entry.amount,
          scanId: entry.scanId ?? null,
          note: entry.note ?? null,
        })
        .onConflictDoNothing()
        .returning({ id: creditLedger.id });
      return rows.length === 1;
    },

    async scanEntries(scanId: string) {
      const rows = await db
        .select({ kind: creditLedger.kind, amount: creditLedger.amount })
        .from(creditLedger)
        .where(eq(creditLedger.scanId, scanId));
      return new Map(rows.map((r) => [r.kind as LedgerKind, r.amount]));
    },

    /** Balances recomputed from the ledger alone. */
    async sumLedger(companyId: string) {
      const [row] = await db
        .select({
          purchased: sql<number>`coalesce(sum(${creditLedger.amount}) filter (where ${creditLedger.kind} = 'grant'), 0)::int`,
          reserved: sql<number>`coalesce(sum(case ${creditLedger.kind} when 'reserve' then ${creditLedger.amount} when 'release' then -${creditLedger.amount} when 'consume' then -${creditLedger.amount} else 0 end), 0)::int`,
          used: sql<number>`coalesce(sum(case ${creditLedger.kind} when 'consume' then ${creditLedger.amount} when 'refund' then -${creditLedger.amount} else 0 end), 0)::int`,
        })
        .from(creditLedger)
        .where(eq(creditLedger.companyId, companyId));
      return row ?? { purchased: 0, reserved: 0, used: 0 };
    },
  };
}
