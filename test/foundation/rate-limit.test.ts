import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/auth/actor.ts';
import { createMemoryRateLimiter, createRedisRateLimiter } from '../../src/rate-limit.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompany, buildServiceKey } from '../helpers/factories.ts';

/** Setup through the services, so that it does not spend the admin token's requests. */
async function setupCompanyWithKeys(t: TestApp, keys: number) {
  const admin: Actor = await t.container.services.auth.authenticateUserToken(t.adminToken);
  const company = await t.container.services.admin.createCompany(admin, {
    name: 'Limited',
    handle: `rl-${Math.random().toString(36).slice(2, 10)}`,
  });
  const created = [];
  for (let i = 0; i < keys; i++)
    created.push(await t.container.services.serviceKeys.createKey(admin, company.id, { name: `k${i}` }));
  const manager = await t.container.services.admin.createUser(admin, {
    username: `m${company.id.slice(0, 8)}`,
    name: 'M',
    companyId: company.id,
    companyRole: 'manager',
  });
  const token = await t.container.services.admin.createUserToken(admin, manager.id, {});
  return { company, keys: created.map((k) => k.key), managerToken: token.token };
}

/**
 * Tests that need Redis run only with `TEST_REDIS_URL` (CI sets it). They write under their own key
 * prefix and delete exactly those keys afterwards: a developer's Redis data is never touched.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const redisPrefix = `vigil-test:${process.pid}:${Date.now().toString(36)}:`;
if (!redisUrl) console.log('skipping "rate limits shared through Redis": set TEST_REDIS_URL to run them');

async function deleteTestKeys(url: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 200);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

describe('rate limits per credential', () => {
  const t = sharedTestApp({ env: { VIGIL_RATE_LIMIT_PER_MINUTE: '3' } });

  it('answers 429 RATE_LIMITED with Retry-After and the RateLimit headers once the bucket is empty', async () => {
    const { keys } = await setupCompanyWithKeys(t, 1);
    const key = { key: keys[0]! };
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof t.app.inject>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await t.app.inject({
        method: 'GET',
        url: '/api/scanner/v1/credits',
        headers: { 'x-api-key': key.key },
      });
      statuses.push(last.statusCode);
      expect(last.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
      expect(last.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(last!.json()).toMatchObject({ code: 'RATE_LIMITED' });
    const retryAfter = Number(last!.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
  });

  it('keeps separate buckets for separate credentials', async () => {
    const { keys } = await setupCompanyWithKeys(t, 2);
    const first = { key: keys[0]! };
    const second = { key: keys[1]! };
    for (let i = 0; i < 3; i++)
      await t.app.inject({
        method: 'GET',
        url: '/api/scanner/v1/credits',
        headers: { 'x-api-key': first.key },
      });
    const blocked = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': first.key },
    });
    const fresh = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': second.key },
    });
    expect([blocked.statusCode, fresh.statusCode]).toEqual([429, 200]);
  });

  it('answers v0 routes over the limit with {msg}', async () => {
    const { company, managerToken } = await setupCompanyWithKeys(t, 0);
    let res: Awaited<ReturnType<typeof t.app.inject>> | undefined;
    for (let i = 0; i < 4; i++) {
      res = await t.app.inject({
        method: 'GET',
        url: `/api/v0/companies/${company.id}/service-keys`,
        headers: { authorization: `Bearer ${managerToken}` },
      });
    }
    expect(res!.statusCode).toBe(429);
    expect(res!.json()).toEqual({ msg: expect.any(String) });
  });
});

describe('failed authentications', () => {
  it('spend the address bucket, carry the headers and end in 429', async () => {
    const t = await createTestApp({ env: { VIGIL_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/api/scanner/v1/credits',
          headers: { 'x-api-key': `vgl_sk_${String(i).repeat(40)}` },
          remoteAddress: '198.51.100.7',
        });
        statuses.push(res.statusCode);
        expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await t.close();
    }
  });
});

describe('token bucket', () => {
  it('refills at the configured rate', async () => {
    let now = 0;
    const limiter = createMemoryRateLimiter({ requestsPerMinute: 60, burst: 2 }, () => now);
    expect((await limiter.take('k')).allowed).toBe(true);
    expect((await limiter.take('k')).allowed).toBe(true);
    const refused = await limiter.take('k');
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBe(1);
    now += 1000;
    expect((await limiter.take('k')).allowed).toBe(true);
  });
});

describe.skipIf(!redisUrl)('rate limits shared through Redis', () => {
  const url = redisUrl ?? '';
  afterAll(async () => {
    await deleteTestKeys(url);
  });

  it('shares one bucket between two API replicas', async () => {
    const env = { REDIS_URL: url, VIGIL_REDIS_PREFIX: redisPrefix, VIGIL_RATE_LIMIT_PER_MINUTE: '4' };
    const first = await createTestApp({ env });
    const second = await createTestApp({
      env,
      shareDatabaseWith: first,
    });
    try {
      const company = await buildCompany(first);
      const key = await buildServiceKey(first, { companyId: company.id });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const replica = i % 2 === 0 ? first : second;
        const res = await replica.app.inject({
          method: 'GET',
          url: '/api/scanner/v1/credits',
          headers: { 'x-api-key': key.key },
        });
        statuses.push(res.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      const probe = new Redis(url, { maxRetriesPerRequest: 1 });
      const [, written] = await probe.scan('0', 'MATCH', `${redisPrefix}rl:*`, 'COUNT', 1000);
      probe.disconnect();
      expect(written.length).toBeGreaterThan(0);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('takes one token atomically under concurrency', async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 });
    const limiter = createRedisRateLimiter(redis, { requestsPerMinute: 10, burst: 10 }, `${redisPrefix}rl:`);
    const decisions = await Promise.all(Array.from({ length: 25 }, () => limiter.take('same')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    await limiter.close();
  });
});
