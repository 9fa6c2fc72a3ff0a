import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { getScanStatus, postBankScan } from '../../../test/helpers/scan-helpers.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { creditLedger, scans } from '../../db/schema/index.ts';
import { scanRunJob, scanThreatModelJob } from './scans.jobs.ts';
import { abandonScan, findAbandonedScanIds, SCAN_ABANDONED, sweepAbandonedScans } from './scans.sweep.ts';

const log = pino({ level: 'silent' });

// No worker: jobs stay where the test puts them.
const t = sharedTestApp();

function sweepDeps() {
  return {
    database: t.container.database,
    credits: t.container.services.credits,
    leaseSeconds: t.config.jobs.leaseSeconds,
    log,
  };
}

/** A `preparing` scan of a fresh company with 10 credits (2 reserved), its threat-model job waiting. */
function preparingScan() {
  return postBankScan(t);
}

/** A `queued` scan (threat model done, 2 credits consumed), its scan job waiting. */
async function queuedScan() {
  const scan = await preparingScan();
  await t.container.services.scans.prepareScan(scan.scanId, {
    signal: new AbortController().signal,
    finalAttempt: false,
    log,
  });
  expect(await statusOf(scan.scanId)).toBe('queued');
  return scan;
}

async function statusOf(scanId: string) {
  const [row] = await t.container.database.db.select().from(scans).where(eq(scans.id, scanId));
  return row?.status;
}

/** Puts the scan's jobs of `name` into `state` the way pg-boss leaves them. */
async function setJobState(
  scanId: string,
  name: string,
  state: 'failed' | 'retry' | 'active' | 'completed',
): Promise<void> {
  const sql = {
    // A job that used up its attempts.
    failed: `set state = 'failed', retry_count = retry_limit, completed_on = now()`,
    // A job waiting for its next attempt after a failure.
    retry: `set state = 'retry', retry_count = 1, started_on = now() - interval '1 minute'`,
    // A job claimed by a worker a moment ago (well within its lease).
    active: `set state = 'active', started_on = now()`,
    completed: `set state = 'completed', completed_on = now()`,
  }[state];
  const { rows } = await t.container.database.executeSql(
    `update pgboss.job ${sql} where name = $1 and data->>'scanId' = $2 returning id`,
    [name, scanId],
  );
  expect(rows).toHaveLength(1);
}

async function ledgerOf(scanId: string) {
  return t.container.database.db
    .select({ kind: creditLedger.kind, amount: creditLedger.amount })
    .from(creditLedger)
    .where(eq(creditLedger.scanId, scanId));
}

async function expectBalances(companyId: string, expected: { used: number; reserved: number }) {
  const { asOf: _a, ...balances } = await t.container.services.credits.getBalances(companyId);
  const { asOf: _b, ...ledger } = await t.container.services.credits.getLedgerBalances(companyId);
  expect(balances).toMatchObject({
    purchased: 10,
    ...expected,
    remaining: 10 - expected.used - expected.reserved,
  });
  expect(ledger).toEqual(balances);
}

describe('scan.sweep', () => {
  it('fails a preparing scan whose threat-model job failed and releases its reservation', async () => {
    const { companyId, key, scanId } = await preparingScan();
    await expectBalances(companyId, { used: 0, reserved: 2 });
    await setJobState(scanId, scanThreatModelJob.name, 'failed');

    expect(await sweepAbandonedScans(sweepDeps())).toContain(scanId);

    const status = await getScanStatus(t, key, scanId);
    expect(status.status).toBe('failed');
    expect(status.error).toEqual({ code: SCAN_ABANDONED, message: expect.stringMatching(/retries/) });
    await expectBalances(companyId, { used: 0, reserved: 0 });
    expect(await ledgerOf(scanId)).toEqual(
      expect.arrayContaining([
        { kind: 'reserve', amount: 2 },
        { kind: 'release', amount: 2 },
      ]),
    );
  });

  it('fails a running scan whose scan job failed and refunds the consumed credits', async () => {
    const { companyId, scanId } = await queuedScan();
    await t.container.database.db.update(scans).set({ status: 'running' }).where(eq(scans.id, scanId));
    await expectBalances(companyId, { used: 2, reserved: 0 });
    await setJobState(scanId, scanRunJob.name, 'failed');

    expect(await sweepAbandonedScans(sweepDeps())).toContain(scanId);

    expect(await statusOf(scanId)).toBe('failed');
    await expectBalances(companyId, { used: 0, reserved: 0 });
    expect((await ledgerOf(scanId)).filter((e) => e.kind === 'refund')).toEqual([
      { kind: 'refund', amount: 2 },
    ]);
  });

  it('leaves scans whose job waits, waits for a retry or runs within its lease', async () => {
    const created = await preparingScan();
    const retrying = await queuedScan();
    await setJobState(retrying.scanId, scanRunJob.name, 'retry');
    const active = await queuedScan();
    await t.container.database.db.update(scans).set({ status: 'running' }).where(eq(scans.id, active.scanId));
    await setJobState(active.scanId, scanRunJob.name, 'active');

    const swept = await sweepAbandonedScans(sweepDeps());

    expect(swept).not.toContain(created.scanId);
    expect(swept).not.toContain(retrying.scanId);
    expect(swept).not.toContain(active.scanId);
    expect(await statusOf(created.scanId)).toBe('preparing');
    expect(await statusOf(retrying.scanId)).toBe('queued');
    expect(await statusOf(active.scanId)).toBe('running');
    await expectBalances(created.companyId, { used: 0, reserved: 2 });
    await expectBalances(retrying.companyId, { used: 2, reserved: 0 });
  });

  it('judges a queued scan by its scan job, not by the threat-model job that finished', async () => {
    const { scanId } = await queuedScan();
    await setJobState(scanId, scanThreatModelJob.name, 'failed');
    expect(await sweepAbandonedScans(sweepDeps())).not.toContain(scanId);
    expect(await statusOf(scanId)).toBe('queued');
  });

  it('fails a scan without any job only once it has not changed for longer than the lease', async () => {
    const { companyId, scanId } = await preparingScan();
    await t.container.database.executeSql(`delete from pgboss.job where name = $1 and data->>'scanId' = $2`, [
      scanThreatModelJob.name,
      scanId,
    ]);
    expect(await sweepAbandonedScans(sweepDeps())).not.toContain(scanId);
    expect(await statusOf(scanId)).toBe('preparing');

    const stale = new Date(Date.now() - (t.config.jobs.leaseSeconds + 60) * 1000);
    await t.container.database.db.update(scans).set({ updatedAt: stale }).where(eq(scans.id, scanId));
    expect(await sweepAbandonedScans(sweepDeps())).toContain(scanId);
    expect(await statusOf(scanId)).toBe('failed');
    await expectBalances(companyId, { used: 0, reserved: 0 });
  });

  it('leaves a scan that completed after it was found abandoned', async () => {
    const { companyId, scanId } = await queuedScan();
    await setJobState(scanId, scanRunJob.name, 'failed');
    expect(await findAbandonedScanIds(sweepDeps())).toContain(scanId);

    // A late completion (a worker that outlived its lease) commits between finding and failing.
    await t.container.database.transaction(async (tx) => {
      await tx.db.select().from(scans).where(eq(scans.id, scanId)).for('update');
      await tx.db
        .update(scans)
        .set({ status: 'completed', completedAt: new Date() })
        .where(and(eq(scans.id, scanId), eq(scans.status, 'queued')));
    });

    expect(await abandonScan(sweepDeps(), scanId)).toBe(false);
    expect(await sweepAbandonedScans(sweepDeps())).not.toContain(scanId);
    expect(await statusOf(scanId)).toBe('completed');
    await expectBalances(companyId, { used: 2, reserved: 0 });
    expect((await ledgerOf(scanId)).map((e) => e.kind).sort()).toEqual(['consume', 'reserve']);
  });

  it('leaves a scan whose completion holds the row lock while the sweep runs', async () => {
    const { scanId } = await queuedScan();
    await setJobState(scanId, scanRunJob.name, 'failed');
    let sweep: Promise<string[]> | undefined;
    await t.container.database.transaction(async (tx) => {
      await tx.db.select().from(scans).where(eq(scans.id, scanId)).for('update');
      // The sweep finds the scan (it is still `queued` for everyone else) and waits for the lock.
      sweep = sweepAbandonedScans(sweepDeps());
      await waitForLockWaiter();
      await tx.db
        .update(scans)
        .set({ status: 'completed', completedAt: new Date() })
        .where(eq(scans.id, scanId));
    });
    expect(await sweep).not.toContain(scanId);
    expect(await statusOf(scanId)).toBe('completed');
  });

  it('is idempotent: a second sweep writes no second ledger row', async () => {
    const { companyId, scanId } = await preparingScan();
    await setJobState(scanId, scanThreatModelJob.name, 'failed');

    const [first, second] = [await sweepAbandonedScans(sweepDeps()), await sweepAbandonedScans(sweepDeps())];
    expect(first).toContain(scanId);
    expect(second).not.toContain(scanId);
    const concurrent = await Promise.all([
      abandonScan(sweepDeps(), scanId),
      abandonScan(sweepDeps(), scanId),
    ]);
    expect(concurrent).toEqual([false, false]);

    expect((await ledgerOf(scanId)).filter((e) => e.kind === 'release')).toHaveLength(1);
    await expectBalances(companyId, { used: 0, reserved: 0 });
  });

  it('two concurrent sweeps fail a scan and return its credits once', async () => {
    const { companyId, scanId } = await queuedScan();
    await setJobState(scanId, scanRunJob.name, 'failed');

    const [a, b] = await Promise.all([sweepAbandonedScans(sweepDeps()), sweepAbandonedScans(sweepDeps())]);
    expect([...a, ...b].filter((id) => id === scanId)).toHaveLength(1);
    expect((await ledgerOf(scanId)).filter((e) => e.kind === 'refund')).toHaveLength(1);
    await expectBalances(companyId, { used: 0, reserved: 0 });
  });
});

/** Waits until another session waits for a row lock on scans (PostgreSQL only). */
async function waitForLockWaiter(): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await t.container.database.executeSql(
        `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock' and query ilike '%from "scans"%'`,
        [],
      );
      return Number(rows[0]?.n) > 0;
    },
    { what: 'a session waiting for a lock on scans', intervalMs: 1 },
  );
}
