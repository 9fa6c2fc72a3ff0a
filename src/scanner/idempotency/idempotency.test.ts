import { and, eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany } from '../../../test/helpers/factories.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { idempotencyRecords } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import { canonicalJson } from '../../strings.ts';
import {
  createIdempotencyService,
  type IdempotencyClaim,
  parseIdempotencyKey,
  requestFingerprint,
} from './idempotency.service.ts';

let companyId: string;
const t = sharedTestApp();
beforeAll(async () => {
  companyId = (await buildCompany(t)).id;
});

let counter = 0;
const request = (key: string, body: unknown = { a: 1 }) => ({
  companyId,
  key,
  method: 'POST',
  path: '/things',
  body,
});
const newKey = () => `k-${Date.now()}-${counter++}`;

/** An operation that writes nothing but completes its claim in a transaction, counting its runs. */
function countingOperation(runs: { n: number }, status = 201) {
  return (claim: IdempotencyClaim) =>
    t.container.database.transaction(async (tx) => {
      await claim.lockInTx(tx);
      runs.n++;
      return claim.completeInTx(tx, { status, body: { run: runs.n } });
    });
}

async function record(key: string) {
  const [row] = await t.container.database.db
    .select()
    .from(idempotencyRecords)
    .where(and(eq(idempotencyRecords.companyId, companyId), eq(idempotencyRecords.key, key)));
  return row;
}

describe('idempotency records', () => {
  it('fingerprints canonical JSON: key order does not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
    const base = { method: 'POST', path: '/x' };
    expect(requestFingerprint({ ...base, body: { a: 1, b: 2 } })).toBe(
      requestFingerprint({ ...base, body: { b: 2, a: 1 } }),
    );
    expect(requestFingerprint({ ...base, body: { a: 1 } })).not.toBe(
      requestFingerprint({ ...base, body: { a: 2 } }),
    );
    expect(requestFingerprint({ ...base, body: { a: 1 } })).not.toBe(
      requestFingerprint({ method: 'POST', path: '/y', body: { a: 1 } }),
    );
  });

  it('parses the header: missing → IDEMPOTENCY_KEY_REQUIRED, bad → VALIDATION_FAILED', () => {
    expect(parseIdempotencyKey('abc.DEF_1:2-3')).toBe('abc.DEF_1:2-3');
    expect(() => parseIdempotencyKey(undefined)).toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_REQUIRED' }),
    );
    for (const bad of ['a b', 'x'.repeat(256), 'a/b', ['a', 'b']]) {
      expect(() => parseIdempotencyKey(bad)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    }
  });

  it('runs once and replays the stored response', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    const runs = { n: 0 };
    const key = newKey();
    const a = await service.execute(request(key), countingOperation(runs));
    const b = await service.execute(request(key, { a: 1 }), countingOperation(runs));
    expect(a).toEqual({ status: 201, body: { run: 1 }, replayed: false });
    expect(b).toEqual({ status: 201, body: { run: 1 }, replayed: true });
    expect(runs.n).toBe(1);
    await expect(service.execute(request(key, { a: 2 }), countingOperation(runs))).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });

  it('answers IDEMPOTENCY_REQUEST_IN_PROGRESS while the first request runs', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    const key = newKey();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = service.execute(request(key), async (claim) => {
      await gate;
      return t.container.database.transaction(async (tx) => {
        await claim.lockInTx(tx);
        return claim.completeInTx(tx, { status: 201, body: { ok: true } });
      });
    });
    await waitFor(async () => (await record(key))?.state === 'in_progress', { what: 'the first claim' });
    await expect(service.execute(request(key), countingOperation({ n: 0 }))).rejects.toMatchObject({
      code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS',
    });
    release();
    await slow;
    expect((await service.execute(request(key), countingOperation({ n: 0 }))).replayed).toBe(true);
  });

  it('stores a definitive 4xx and replays it as the same error', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    const key = newKey();
    let runs = 0;
    const failing = async () => {
      runs++;
      throw new AppError('INSUFFICIENT_CREDITS', {
        message: 'Costs 2; 1 remains.',
        details: { cost: 2, remaining: 1 },
      });
    };
    await expect(service.execute(request(key), failing)).rejects.toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
    });
    const replayed = await service.execute(request(key), failing).catch((e: unknown) => e);
    expect(replayed).toBeInstanceOf(AppError);
    expect(replayed).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      message: 'Costs 2; 1 remains.',
      details: { cost: 2, remaining: 1 },
    });
    expect(runs).toBe(1);
    expect(await record(key)).toMatchObject({ state: 'completed', responseStatus: 402 });
  });

  it('stores nothing for a 5xx or a lost connection: the identical retry runs again', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    for (const failure of [
      new AppError('SERVICE_UNAVAILABLE'),
      Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }),
      new Error('boom'),
    ]) {
      const key = newKey();
      await expect(
        service.execute(request(key), async () => {
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await record(key)).toBeUndefined();
      const runs = { n: 0 };
      expect((await service.execute(request(key), countingOperation(runs))).replayed).toBe(false);
      expect(runs.n).toBe(1);
    }
  });

  it('takes over a claim whose holder died once its lock has passed', async () => {
    const service = createIdempotencyService({
      database: t.container.database,
      ttlHours: 24,
      lockSeconds: 1,
    });
    const key = newKey();
    // A claim left behind by a request that crashed before it could complete or release it.
    await t.container.database.db.insert(idempotencyRecords).values({
      companyId,
      key,
      fingerprint: requestFingerprint(request(key)),
      state: 'in_progress',
      claimId: '00000000-0000-4000-8000-000000000001',
      lockedUntil: sql`now() + interval '1 second'`,
      expiresAt: sql`now() + interval '1 hour'`,
    });
    await expect(service.execute(request(key), countingOperation({ n: 0 }))).rejects.toMatchObject({
      code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS',
    });
    // Its lock passes (moved into the past rather than waited for).
    await t.container.database.db
      .update(idempotencyRecords)
      .set({ lockedUntil: sql`now() - interval '1 second'` })
      .where(and(eq(idempotencyRecords.companyId, companyId), eq(idempotencyRecords.key, key)));
    const runs = { n: 0 };
    expect(await service.execute(request(key), countingOperation(runs))).toMatchObject({
      status: 201,
      replayed: false,
    });
    expect(runs.n).toBe(1);
  });

  it('refuses to complete a claim that was taken over (the slow holder rolls back)', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    const key = newKey();
    const outcome = service.execute(request(key), async (claim) => {
      // Someone took the claim over meanwhile.
      await t.container.database.db
        .update(idempotencyRecords)
        .set({ claimId: '00000000-0000-4000-8000-000000000002' })
        .where(and(eq(idempotencyRecords.companyId, companyId), eq(idempotencyRecords.key, key)));
      return t.container.database.transaction(async (tx) => {
        await claim.lockInTx(tx);
        return claim.completeInTx(tx, { status: 201, body: {} });
      });
    });
    await expect(outcome).rejects.toMatchObject({ code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' });
    expect(await record(key)).toMatchObject({
      state: 'in_progress',
      claimId: '00000000-0000-4000-8000-000000000002',
    });
  });

  it('treats expired records as absent and deletes them in the cleanup', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 24 });
    const key = newKey();
    const runs = { n: 0 };
    await service.execute(request(key), countingOperation(runs));
    const stale = newKey();
    await service.execute(request(stale), countingOperation({ n: 0 }));
    await t.container.database.db
      .update(idempotencyRecords)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(
        and(
          eq(idempotencyRecords.companyId, companyId),
          sql`${idempotencyRecords.key} in (${key}, ${stale})`,
        ),
      );
    // Expired: the same key (even with another body) executes again.
    const again = await service.execute(request(key, { other: true }), countingOperation(runs));
    expect(again).toMatchObject({ replayed: false, body: { run: 2 } });
    expect(await service.deleteExpired()).toBeGreaterThanOrEqual(1);
    expect(await record(stale)).toBeUndefined();
    expect(await record(key)).toMatchObject({ state: 'completed' });
  });

  it('keeps records for the configured number of hours', async () => {
    const service = createIdempotencyService({ database: t.container.database, ttlHours: 3 });
    const key = newKey();
    await service.execute(request(key), countingOperation({ n: 0 }));
    const row = await record(key);
    const hours = (row!.expiresAt.getTime() - row!.createdAt.getTime()) / 3_600_000;
    expect(hours).toBeCloseTo(3, 1);
  });
});
