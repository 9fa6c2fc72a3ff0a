import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditAccounts, creditLedger, scanFindings, scans } from '../../src/db/schema/index.ts';
import { scanRunJob } from '../../src/scanner/scans/scans.jobs.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import {
  isFinal,
  localScanBody,
  manySolidityFiles,
  newIdempotencyKey,
  postScan,
  REENTRANT_BANK,
  type ScanStatusBody,
  waitForScan,
} from '../helpers/scan-helpers.ts';
import { waitFor } from '../helpers/wait.ts';

// Two app instances on one database, each with its own pool (two replicas).
let first: TestApp;
let second: TestApp;
beforeAll(async () => {
  const env = { VIGIL_COST_STANDARD: '1' };
  first = await createTestApp({ env, worker: true });
  second = await createTestApp({ env, shareDatabaseWith: first });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
});

const replica = (i: number) => (i % 2 === 0 ? first : second);

/** Jobs of the scan's run that a worker may still take or is running. */
async function unfinishedRunJobs(scanId: string): Promise<number> {
  const res = await first.container.database.executeSql(
    `select count(*)::int as n from pgboss.job
      where name = $1 and data->>'scanId' = $2 and state in ('created', 'retry', 'active')`,
    [scanRunJob.name, scanId],
  );
  return (res.rows[0] as { n: number }).n;
}

async function account(companyId: string) {
  const [row] = await first.container.database.db
    .select()
    .from(creditAccounts)
    .where(eq(creditAccounts.companyId, companyId));
  return row!;
}

describe('createScan under concurrency', () => {
  it('creates one scan for 50 parallel identical requests with one Idempotency-Key', async () => {
    const company = await buildCompany(first);
    const key = (await buildServiceKey(first, { companyId: company.id })).key;
    await grantCredits(first, company.id, 5);
    const archive = await buildArchive(first, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    const body = localScanBody(archive);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postScan(replica(i), key, body, idem)),
    );

    const accepted = answers.filter((r) => r.statusCode === 202);
    const inProgress = answers.filter((r) => r.statusCode === 409);
    expect(accepted.length + inProgress.length).toBe(50);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    for (const r of inProgress) expect(r.json().code).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
    const ids = new Set(accepted.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    for (const r of accepted) expect(r.json()).toEqual(accepted[0]!.json());

    // Once the first has finished, every retry replays it.
    const replay = await postScan(second, key, body, idem);
    expect(replay.statusCode).toBe(202);
    expect(replay.json()).toEqual(accepted[0]!.json());

    const rows = await first.container.database.db
      .select()
      .from(scans)
      .where(eq(scans.companyId, company.id));
    expect(rows).toHaveLength(1);
    const reserves = await first.container.database.db
      .select()
      .from(creditLedger)
      .where(sql`${creditLedger.companyId} = ${company.id} and ${creditLedger.kind} = 'reserve'`);
    expect(reserves).toHaveLength(1);
  }, 60_000);

  it('accepts exactly as many scans as there are credits (30 parallel keys, 10 credits) and never goes below zero', async () => {
    const company = await buildCompany(first);
    const key = (await buildServiceKey(first, { companyId: company.id })).key;
    await grantCredits(first, company.id, 10);
    const archive = await buildArchive(first, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });

    let sampling = true;
    const samples: number[] = [];
    const sampler = (async () => {
      while (sampling) {
        const a = await account(company.id);
        samples.push(a.purchased - a.used - a.reserved);
        // One sample after another; the query itself lets the scans' requests run in between.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        postScan(replica(i), key, localScanBody(archive), newIdempotencyKey()),
      ),
    );
    sampling = false;
    await sampler;

    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 202)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);
    for (const r of answers.filter((x) => x.statusCode === 402))
      expect(r.json().code).toBe('INSUFFICIENT_CREDITS');
    expect(samples.length).toBeGreaterThan(0);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);

    const acc = await account(company.id);
    expect(acc.purchased - acc.used - acc.reserved).toBe(0);
    const ledger = await first.container.services.credits.getLedgerBalances(company.id);
    expect({ purchased: ledger.purchased, used: ledger.used, reserved: ledger.reserved }).toEqual({
      purchased: acc.purchased,
      used: acc.used,
      reserved: acc.reserved,
    });
    const rows = await first.container.database.db
      .select()
      .from(scans)
      .where(eq(scans.companyId, company.id));
    expect(rows).toHaveLength(10);
  }, 60_000);
});

describe('cancelScan racing the scan', () => {
  it('ends every scan in exactly one final state with consistent credits', async () => {
    const company = await buildCompany(first);
    const key = (await buildServiceKey(first, { companyId: company.id })).key;
    await grantCredits(first, company.id, 20);
    const archive = await buildArchive(first, { companyId: company.id, files: manySolidityFiles(6) });
    const outcomes: Array<{ id: string; cancel: number; final: string }> = [];
    for (let round = 0; round < 5; round++) {
      const created = await postScan(first, key, localScanBody(archive));
      expect(created.statusCode).toBe(202);
      const id = created.json().id as string;
      await waitForScan(first, key, id, (s) => s.status !== 'preparing');
      // Cancel at a different moment of the run each round, named by the scan's state: at once,
      // once it runs, after its first file, past half of its files, and after it completed.
      const moments: Array<(s: ScanStatusBody) => boolean> = [
        () => true,
        (s) => s.status !== 'queued',
        (s) => s.progress.filesDone >= 1 || isFinal(s),
        (s) => s.progress.filesDone >= 4 || isFinal(s),
        isFinal,
      ];
      await waitForScan(first, key, id, moments[round] ?? isFinal);
      const cancel = await replica(round).app.inject({
        method: 'POST',
        url: `/api/scanner/v1/scans/${id}/cancel`,
        headers: { authorization: `Bearer ${key}` },
      });
      expect([200, 409]).toContain(cancel.statusCode);
      if (cancel.statusCode === 409) expect(cancel.json().code).toBe('SCAN_NOT_CANCELLABLE');
      const final = await waitForScan(first, key, id, isFinal);
      // A late completion has had its chance to (wrongly) overwrite a cancel once the job is over.
      await waitFor(async () => (await unfinishedRunJobs(id)) === 0, { what: `the run job of ${id} to end` });
      const settled = await waitForScan(first, key, id, isFinal);
      expect(settled.status).toBe(final.status);
      expect(final.status).toBe(cancel.statusCode === 200 ? 'cancelled' : 'completed');
      outcomes.push({ id, cancel: cancel.statusCode, final: final.status });

      const links = await first.container.database.db
        .select()
        .from(scanFindings)
        .where(eq(scanFindings.scanId, id));
      if (final.status === 'cancelled') expect(links).toHaveLength(0);
      else expect(links.length).toBe(settled.findingsCount);
    }
    // Credits: each scan consumed its cost once; a scan cancelled while still queued got it back.
    const ledger = await first.container.database.db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.companyId, company.id));
    for (const o of outcomes) {
      const kinds = ledger.filter((r) => r.scanId === o.id).map((r) => r.kind);
      expect(kinds.filter((k) => k === 'reserve')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'consume')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'refund').length).toBeLessThanOrEqual(1);
      expect(kinds).not.toContain('release');
    }
    const acc = await account(company.id);
    const sums = await first.container.services.credits.getLedgerBalances(company.id);
    expect({ used: sums.used, reserved: sums.reserved }).toEqual({ used: acc.used, reserved: acc.reserved });
    expect(acc.reserved).toBe(0);
  }, 60_000);
});
