import type { ServiceActor } from '../../auth/actor.ts';
import type { Database, Tx } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../audit/audit.repo.ts';
import { creditsRepo, type ScanType, scanTypes } from './credits.repo.ts';

export type { ScanType };

export interface CreditBalances {
  purchased: number;
  used: number;
  reserved: number;
  remaining: number;
  asOf: string;
  scanTypes: Record<ScanType, { available: boolean; cost: number; reason?: string }>;
}

/** A company's credit account as getCreditBalances reads it. */
export interface CreditAccount {
  purchased: number;
  used: number;
  reserved: number;
}

/**
 * Scan credits: an append-only ledger (grant, reserve, release, consume, refund) and a per-company
 * account row that serializes changes. Balances never go below zero: a reservation checks and
 * takes in one statement.
 */
export function createCreditsService(deps: { database: Database; costs: Record<ScanType, number> }) {
  const { database, costs } = deps;

  function toBalances(row: CreditAccount): CreditBalances {
    const remaining = row.purchased - row.used - row.reserved;
    const types = {} as CreditBalances['scanTypes'];
    for (const type of scanTypes) {
      const cost = costs[type];
      types[type] =
        remaining >= cost
          ? { available: true, cost }
          : { available: false, cost, reason: `Needs ${cost} credits; ${remaining} remain.` };
    }
    return {
      purchased: row.purchased,
      used: row.used,
      reserved: row.reserved,
      remaining,
      asOf: new Date().toISOString(),
      scanTypes: types,
    };
  }

  return {
    costOf(type: ScanType): number {
      return costs[type];
    },

    /** Adds purchased credits (admin), audited `credits_granted` with the granting user. */
    async grant(
      companyId: string,
      amount: number,
      note?: string,
      grantedBy: string | null = null,
    ): Promise<CreditBalances> {
      if (!Number.isInteger(amount) || amount <= 0) {
        throw new AppError('VALIDATION_FAILED', { message: 'amount must be a positive integer.' });
      }
      return database.transaction(async (tx) => {
        const repo = creditsRepo(tx.db);
        await repo.lockAccount(companyId);
        await repo.append({ companyId, kind: 'grant', amount, note });
        await repo.adjust(companyId, { purchased: amount });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'credits_granted',
          performedBy: grantedBy,
          details: { amount, note: note ?? null },
        });
        return toBalances(await repo.getAccount(companyId));
      });
    },

    async getBalances(companyId: string): Promise<CreditBalances> {
      return toBalances(await creditsRepo(database.db).getAccount(companyId));
    },

    /** getCreditBalances: the balances of the key's organization, as of the answer. */
    async getBalancesFor(actor: ServiceActor): Promise<CreditBalances> {
      return toBalances(await creditsRepo(database.db).getAccount(actor.organizationId));
    },

    /** Balances recomputed from the ledger (for checks: they equal getBalances). */
    async getLedgerBalances(companyId: string): Promise<CreditBalances> {
      return toBalances(await creditsRepo(database.db).sumLedger(companyId));
    },

    /** Reserves a scan's cost inside the caller's transaction; 402 when too little remains. */
    async reserveInTx(tx: Tx, companyId: string, scanId: string, amount: number): Promise<void> {
      const repo = creditsRepo(tx.db);
      await repo.ensureAccount(companyId);
      if (!(await repo.reserveIfAvailable(companyId, amount))) {
        const account = await repo.getAccount(companyId);
        const remaining = account.purchased - account.used - account.reserved;
        throw new AppError('INSUFFICIENT_CREDITS', {
          message: `This scan costs ${amount} credits; ${remaining} remain.`,
          details: { cost: amount, remaining },
        });
      }
      await repo.append({ companyId, kind: 'reserve', amount, scanId });
    },

    /** Turns a scan's reservation into use; a second call changes nothing. */
    async consumeInTx(tx: Tx, companyId: string, scanId: string): Promise<void> {
      const repo = creditsRepo(tx.db);
      await repo.lockAccount(companyId);
      const entries = await repo.scanEntries(scanId);
      const reserved = entries.get('reserve');
      if (reserved === undefined || entries.has('release') || entries.has('consume')) return;
      await repo.append({ companyId, kind: 'consume', amount: reserved, scanId });
      await repo.adjust(companyId, { reserved: -reserved, used: reserved });
    },

    /** Returns a scan's credits: releases an unconsumed reservation or refunds consumed credits. */
    async returnInTx(tx: Tx, companyId: string, scanId: string): Promise<void> {
      const repo = creditsRepo(tx.db);
      await repo.lockAccount(companyId);
      const entries = await repo.scanEntries(scanId);
      const reserved = entries.get('reserve');
      if (reserved === undefined || entries.has('release') || entries.has('refund')) return;
      if (entries.has('consume')) {
        await repo.append({ companyId, kind: 'refund', amount: reserved, scanId });
        await repo.adjust(companyId, { used: -reserved });
      } else {
        await repo.append({ companyId, kind: 'release', amount: reserved, scanId });
        await repo.adjust(companyId, { reserved: -reserved });
      }
    },
  };
}

export type CreditsService = ReturnType<typeof createCreditsService>;
