import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { idempotencyRecords, scans } from '../../src/db/schema/index.ts';
import { createTestApp, sharedTestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import { localScanBody, newIdempotencyKey, postScan, REENTRANT_BANK } from '../helpers/scan-helpers.ts';

const healthy = sharedTestApp();

async function tenant() {
  const company = await buildCompany(healthy);
  const key = (await buildServiceKey(healthy, { companyId: company.id })).key;
  await grantCredits(healthy, company.id, 10);
  const archive = await buildArchive(healthy, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
  return { company, key, body: localScanBody(archive) };
}

describe('createScan when a dependency is unavailable', () => {
  it('answers 503 with Retry-After when the queue is down, keeps no record, and the identical retry succeeds', async () => {
    const broken = await createTestApp({ shareDatabaseWith: healthy });
    try {
      const { company, key, body } = await tenant();
      await broken.container.queue.stop({ timeoutMs: 0 });
      const idem = newIdempotencyKey();
      const res = await postScan(broken, key, body, idem);
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const records = await healthy.container.database.db
        .select()
        .from(idempotencyRecords)
        .where(eq(idempotencyRecords.key, idem));
      expect(records).toHaveLength(0);
      expect(
        await healthy.container.database.db.select().from(scans).where(eq(scans.companyId, company.id)),
      ).toHaveLength(0);
      expect((await healthy.container.services.credits.getBalances(company.id)).reserved).toBe(0);

      const retry = await postScan(healthy, key, body, idem);
      expect(retry.statusCode).toBe(202);
      expect(
        await healthy.container.database.db.select().from(scans).where(eq(scans.companyId, company.id)),
      ).toHaveLength(1);
    } finally {
      await broken.close().catch(() => {});
    }
  });

  it('answers 503 with Retry-After when the database cannot be reached, and the identical retry succeeds', async () => {
    // A second replica on the same database whose pool is closed.
    const broken = await createTestApp({ shareDatabaseWith: healthy });
    try {
      const { company, key, body } = await tenant();
      await broken.container.database.close();
      const idem = newIdempotencyKey();
      const res = await postScan(broken, key, body, idem);
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const retry = await postScan(healthy, key, body, idem);
      expect(retry.statusCode).toBe(202);
      const rows = await healthy.container.database.db
        .select()
        .from(scans)
        .where(eq(scans.companyId, company.id));
      expect(rows).toHaveLength(1);
    } finally {
      await broken.close().catch(() => {});
    }
  });
});
