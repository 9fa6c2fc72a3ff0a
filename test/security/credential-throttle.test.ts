/**
 * Walks the table of credential checks (`CREDENTIAL_CHECKS`, src/auth/credential-throttle.ts) over
 * HTTP: for each check, failed attempts from one address end in 429 with Retry-After (other
 * addresses unaffected), failed attempts at one target from many addresses end in 429 (other
 * targets unaffected), a refused address gets 429 even with a valid credential (nothing is
 * verified), and successful checks spend nothing. The same walk runs on two replicas sharing
 * Redis when `TEST_REDIS_URL` is set.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressBucketOf,
  CREDENTIAL_CHECKS,
  type CredentialCheckName,
} from '../../src/auth/credential-throttle.ts';
import { issueInvitationSecret } from '../../src/auth/credentials.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { invitationsRepo } from '../../src/platform/invitations/invitations.repo.ts';
import { apiOk, createTestApp, type TestApp } from '../helpers/app.ts';
import { buildArchive, buildCompanyWorld, buildServiceKey, buildUser } from '../helpers/factories.ts';
import { localPath, signInToConsole, webhookSignature } from './access-world.ts';

/** Failed attempts a bucket holds (the refill, one a minute, does not matter within a test). */
const LIMIT = 3;
const ENV = {
  VIGIL_AUTH_FAILURES_PER_MINUTE: '1',
  VIGIL_AUTH_FAILURES_BURST: String(LIMIT),
  // The request rate limit stays out of the way: only the credential throttle answers 429 here.
  VIGIL_RATE_LIMIT_PER_MINUTE: '1000000',
  VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32',
};

/** How to attempt one credential check over HTTP. */
interface Probe {
  /** An attempt that fails the check, aimed at target `n` (each `n` a distinct target). */
  fail(n: number): InjectOptions;
  /** An attempt that passes the check. */
  pass(): InjectOptions;
  /** The answer to a failed attempt. */
  failStatus: number;
  /** The API's error shape. */
  v1: boolean;
}

interface World {
  managerToken: string;
  serviceKey: string;
  sessionCookie: string;
  integration: { id: string; webhookSecret: string };
  uploadUrl: string;
  /** An invitation by e-mail alone, its one-time secret, and the token of the user who answers it. */
  invitation: { id: string; secret: string; inviteeToken: string };
}

/** A distinct well-formed secret of the run for each `n` (40 letters and digits after the prefix). */
const runTag = randomBytes(6).toString('hex');
const secretOf = (prefix: string, n: number) => `${prefix}${`${runTag}x${n}`.padEnd(40, 'Q')}`;
const ids = new Map<number, string>();
const idOf = (n: number) => {
  if (!ids.has(n)) ids.set(n, randomUUID());
  return ids.get(n)!;
};

/** One probe per check of the table: a check added to the table without one fails the walk. */
const PROBES: Record<CredentialCheckName, (w: World) => Probe> = {
  'user-token': (w) => ({
    fail: (n) => ({
      method: 'GET',
      url: '/api/v0/session',
      headers: { authorization: `Bearer ${secretOf('vgl_u_', n)}` },
    }),
    pass: () => ({
      method: 'GET',
      url: '/api/v0/session',
      headers: { authorization: `Bearer ${w.managerToken}` },
    }),
    failStatus: 401,
    v1: false,
  }),
  'service-key': (w) => ({
    fail: (n) => ({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': secretOf('vgl_sk_', n) },
    }),
    pass: () => ({ method: 'GET', url: '/api/scanner/v1/credits', headers: { 'x-api-key': w.serviceKey } }),
    failStatus: 401,
    v1: true,
  }),
  'console-session': (w) => ({
    fail: (n) => ({
      method: 'GET',
      url: '/api/v0/session',
      headers: { cookie: `vigil_session=${secretOf('vgl_cs_', n)}` },
    }),
    pass: () => ({ method: 'GET', url: '/api/v0/session', headers: { cookie: w.sessionCookie } }),
    failStatus: 401,
    v1: false,
  }),
  'console-sign-in': (w) => ({
    fail: (n) => ({ method: 'POST', url: '/api/v0/session', payload: { token: secretOf('vgl_u_', n) } }),
    pass: () => ({ method: 'POST', url: '/api/v0/session', payload: { token: w.managerToken } }),
    failStatus: 401,
    v1: false,
  }),
  'sourcehost-webhook': (w) => {
    const body = JSON.stringify({ zen: 'ping' });
    const headers = (signature: string) => ({
      'content-type': 'application/json',
      'x-hub-signature-256': signature,
      'x-github-event': 'ping',
      'x-github-delivery': randomUUID(),
    });
    return {
      fail: (n) => ({
        method: 'POST',
        url: `/api/v0/webhooks/sourcehost/${n === 0 ? w.integration.id : idOf(n)}`,
        headers: headers(webhookSignature('not-the-secret', body)),
        payload: body,
      }),
      pass: () => ({
        method: 'POST',
        url: `/api/v0/webhooks/sourcehost/${w.integration.id}`,
        headers: headers(webhookSignature(w.integration.webhookSecret, body)),
        payload: body,
      }),
      failStatus: 401,
      v1: false,
    };
  },
  'invitation-secret': (w) => ({
    fail: (n) => ({
      method: 'POST',
      url: `/api/v0/invitations/${n === 0 ? w.invitation.id : idOf(n)}/accept`,
      headers: { authorization: `Bearer ${w.invitation.inviteeToken}` },
      payload: { secret: secretOf('vgl_inv_', n) },
    }),
    // Accepted once, then 409 (no longer pending): either way the secret passed the check.
    pass: () => ({
      method: 'POST',
      url: `/api/v0/invitations/${w.invitation.id}/accept`,
      headers: { authorization: `Bearer ${w.invitation.inviteeToken}` },
      payload: { secret: w.invitation.secret },
    }),
    failStatus: 404,
    v1: false,
  }),
  'upload-signature': (w) => {
    const signed = new URL(localPath(w.uploadUrl), 'http://localhost');
    const forged = (uploadId: string) => {
      const url = new URL(signed);
      url.pathname = `/uploads/${uploadId}`;
      url.searchParams.set('signature', 'A'.repeat(43));
      return `${url.pathname}${url.search}`;
    };
    const uploadId = signed.pathname.split('/').pop()!;
    return {
      fail: (n) => ({
        method: 'PUT',
        url: forged(n === 0 ? uploadId : idOf(n)),
        headers: { 'content-type': 'application/gzip' },
        payload: Buffer.from('x'),
      }),
      pass: () => ({
        method: 'PUT',
        url: `${signed.pathname}${signed.search}`,
        headers: { 'content-type': 'application/gzip' },
        payload: Buffer.from('not a tar.gz'),
      }),
      failStatus: 403,
      v1: true,
    };
  },
};

async function buildWorld(t: TestApp): Promise<World> {
  const { company, manager } = await buildCompanyWorld(t);
  const serviceKey = (await buildServiceKey(t, { companyId: company.id })).key;
  const webhookSecret = `whsec-${randomBytes(6).toString('hex')}`;
  const integration = await apiOk<{ id: string }>(
    t,
    'PUT',
    `/api/v0/companies/${company.id}/integrations/sourcehost`,
    manager.token,
    {
      credentials: { token: 'sourcehost-token', webhookSecret },
      settings: { baseUrl: 'http://127.0.0.1:1' },
    },
  );
  const archive = await buildArchive(t, { companyId: company.id });
  const uploads = await t.app.inject({
    method: 'POST',
    url: '/api/scanner/v1/source-uploads',
    headers: { 'x-api-key': serviceKey },
    payload: { workspaceId: archive.workspaceId, archives: [{ filename: 'source.tar.gz', sizeBytes: 512 }] },
  });
  expect(uploads.statusCode, uploads.body).toBe(200);
  const sessionCookie = (await signInToConsole(t, manager.token)).cookie;
  // An invitation by e-mail alone, as the invitation e-mail carries it (the secret's hash stored).
  const invitee = await buildUser(t);
  const issued = issueInvitationSecret();
  const invitation = await invitationsRepo(t.container.database.db).insert({
    companyId: company.id,
    role: 'member',
    email: `invitee-${runTag}@example.test`,
    secretHash: issued.hash,
    invitedBy: manager.id,
    expiresAt: new Date(Date.now() + 86_400_000),
  });
  return {
    managerToken: manager.token,
    serviceKey,
    sessionCookie,
    integration: { id: integration.id, webhookSecret },
    uploadUrl: (uploads.json() as { uploads: Array<{ uploadUrl: string }> }).uploads[0]!.uploadUrl,
    invitation: { id: invitation.id, secret: issued.secret, inviteeToken: invitee.token },
  };
}

let addressCount = 0;
/** A source address no other attempt of this file used. */
const freshAddress = () => {
  addressCount += 1;
  return `198.51.${100 + Math.floor(addressCount / 250)}.${(addressCount % 250) + 1}`;
};

/** Walks the table on `replicas` (attempts alternate between them). */
function walkTable(name: string, replicas: () => TestApp[], world: () => World) {
  let turn = 0;
  const send = (options: InjectOptions, remoteAddress: string) => {
    const apps = replicas();
    turn += 1;
    return apps[turn % apps.length]!.app.inject({ ...options, remoteAddress });
  };
  const expectRefused = (res: Awaited<ReturnType<typeof send>>, probe: Probe, label: string) => {
    expect(res.statusCode, `${label}: ${res.body}`).toBe(429);
    const retryAfter = Number(res.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1, label).toBe(true);
    const body = res.json() as Record<string, unknown>;
    if (probe.v1) expect(body.code, label).toBe('RATE_LIMITED');
    else expect(typeof body.msg, label).toBe('string');
  };

  describe(name, () => {
    let n = 1000;
    const nextTarget = () => {
      n += 1;
      return n;
    };
    for (const check of Object.keys(CREDENTIAL_CHECKS) as CredentialCheckName[]) {
      it(`${check}: ${LIMIT} failures from one address, then 429 with Retry-After, even for a valid credential`, async () => {
        const probe = PROBES[check](world());
        const address = freshAddress();
        for (let i = 0; i < LIMIT; i++) {
          const res = await send(probe.fail(nextTarget()), address);
          expect(res.statusCode, `${check} failure ${i + 1}: ${res.body}`).toBe(probe.failStatus);
        }
        expectRefused(
          await send(probe.fail(nextTarget()), address),
          probe,
          `${check} after ${LIMIT} failures`,
        );
        // Refused before verifying: a right guess from that address learns nothing either.
        expectRefused(await send(probe.pass(), address), probe, `${check} valid credential from the address`);
        const elsewhere = await send(probe.fail(nextTarget()), freshAddress());
        expect(elsewhere.statusCode, `${check} from another address`).toBe(probe.failStatus);
      });

      it(`${check}: ${LIMIT} failures at one target from many addresses, then 429`, async () => {
        const probe = PROBES[check](world());
        const target = nextTarget();
        for (let i = 0; i < LIMIT; i++) {
          const res = await send(probe.fail(target), freshAddress());
          expect(res.statusCode, `${check} failure ${i + 1}: ${res.body}`).toBe(probe.failStatus);
        }
        expectRefused(
          await send(probe.fail(target), freshAddress()),
          probe,
          `${check} target after ${LIMIT}`,
        );
        const other = await send(probe.fail(nextTarget()), freshAddress());
        expect(other.statusCode, `${check} another target`).toBe(probe.failStatus);
      });

      it(`${check}: successful checks spend nothing`, async () => {
        const probe = PROBES[check](world());
        const address = freshAddress();
        for (let i = 0; i < LIMIT + 2; i++) {
          const res = await send(probe.pass(), address);
          expect(res.statusCode, `${check} valid attempt ${i + 1}: ${res.body}`).not.toBe(429);
          expect(res.statusCode, `${check} valid attempt ${i + 1}: ${res.body}`).toBeLessThan(500);
          expect(res.statusCode, `${check} valid attempt ${i + 1}: ${res.body}`).not.toBe(probe.failStatus);
        }
      });
    }
  });
}

describe('the table of credential checks', () => {
  it('names every security scheme of openapi.json, and only operations that exist', async () => {
    const spec = JSON.parse(await readFile(path.resolve('openapi.json'), 'utf8')) as {
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const covered = new Set<string>(Object.values(CREDENTIAL_CHECKS).flatMap((c) => [...c.securitySchemes]));
    expect(Object.keys(spec.components.securitySchemes).filter((s) => !covered.has(s))).toEqual([]);
    const operationIds = new Set(
      Object.values(spec.paths).flatMap((methods) => Object.values(methods).map((o) => o.operationId)),
    );
    for (const check of Object.values(CREDENTIAL_CHECKS))
      for (const id of check.operations) expect(operationIds.has(id), id).toBe(true);
  });
});

describe('source addresses', () => {
  it('count IPv4 addresses whole and IPv6 addresses by their /64', () => {
    expect(addressBucketOf('203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucketOf('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucketOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucketOf('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressBucketOf('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });

  it('read VIGIL_TRUST_PROXY as true, a hop count, or addresses and ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ VIGIL_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ VIGIL_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ VIGIL_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
    expect(() => loadConfig({ VIGIL_TRUST_PROXY: 'proxy.internal' })).toThrow(ConfigError);
  });

  it('share one bucket across an IPv6 /64, and ignore X-Forwarded-For from untrusted peers', async () => {
    const fail = (n: number, remoteAddress: string, headers: Record<string, string> = {}) =>
      single.app.inject({
        method: 'GET',
        url: '/api/v0/session',
        headers: { authorization: `Bearer ${secretOf('vgl_u_', n)}`, ...headers },
        remoteAddress,
      });
    for (let i = 0; i < LIMIT; i++)
      expect((await fail(500 + i, `2001:db8:77:1::${i + 1}`)).statusCode).toBe(401);
    expect((await fail(510, '2001:db8:77:1:ffff::9')).statusCode).toBe(429);
    expect((await fail(511, '2001:db8:77:2::1')).statusCode).toBe(401);
    // Without VIGIL_TRUST_PROXY a forged X-Forwarded-For does not make a new source.
    for (let i = 0; i < LIMIT; i++)
      expect(
        (await fail(520 + i, '192.0.2.77', { 'x-forwarded-for': `203.0.113.${i + 1}` })).statusCode,
      ).toBe(401);
    expect((await fail(530, '192.0.2.77', { 'x-forwarded-for': '203.0.113.99' })).statusCode).toBe(429);
  });

  it('count the client behind a trusted proxy (VIGIL_TRUST_PROXY), not the proxy', async () => {
    const proxied = await createTestApp({ env: { ...ENV, VIGIL_TRUST_PROXY: '192.0.2.10' } });
    try {
      const fail = (n: number, client: string) =>
        proxied.app.inject({
          method: 'GET',
          url: '/api/v0/session',
          headers: { authorization: `Bearer ${secretOf('vgl_u_', n)}`, 'x-forwarded-for': client },
          remoteAddress: '192.0.2.10',
        });
      for (let i = 0; i < LIMIT; i++) expect((await fail(600 + i, '203.0.113.50')).statusCode).toBe(401);
      expect((await fail(610, '203.0.113.50')).statusCode).toBe(429);
      // Another client behind the same proxy is not refused.
      expect((await fail(611, '203.0.113.51')).statusCode).toBe(401);
    } finally {
      await proxied.close();
    }
  });
});

let single: TestApp;
let singleWorld: World;
beforeAll(async () => {
  single = await createTestApp({ env: ENV });
  singleWorld = await buildWorld(single);
}, 60_000);
afterAll(async () => {
  await single?.close();
});
walkTable(
  'credential checks on one replica (memory buckets)',
  () => [single],
  () => singleWorld,
);

/**
 * With `TEST_REDIS_URL`: two replicas on one database and one Redis, under a key prefix of this
 * run whose keys are deleted afterwards.
 */
const redisUrl = process.env.TEST_REDIS_URL;
const redisPrefix = `vigil-test-throttle:${process.pid}:${Date.now().toString(36)}:`;
if (!redisUrl)
  console.log('skipping "credential checks shared through Redis": set TEST_REDIS_URL to run them');

describe.skipIf(!redisUrl)('through Redis', () => {
  let first: TestApp;
  let second: TestApp;
  let world: World;
  beforeAll(async () => {
    const env = { ...ENV, REDIS_URL: redisUrl!, VIGIL_REDIS_PREFIX: redisPrefix };
    first = await createTestApp({ env });
    second = await createTestApp({ env, shareDatabaseWith: first });
    world = await buildWorld(first);
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await first?.close();
    const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
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
  });

  walkTable(
    'credential checks on two replicas sharing Redis',
    () => [first, second],
    () => world,
  );

  it('keeps the buckets in Redis under the configured prefix, without the presented secrets', async () => {
    const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${redisPrefix}auth-fail:*`, 'COUNT', 500);
        keys.push(...found);
        cursor = next;
      } while (cursor !== '0');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((k) => /vgl_(u|sk|cs)_/.test(k))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});
