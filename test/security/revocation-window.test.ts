import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  buildCompany,
  buildRepository,
  buildServiceKey,
  buildUser,
} from '../helpers/factories.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Two replicas (two apps, each with its own pool, credential cache and listening connection) on
 * one database, spoken to over real HTTP. A revocation answered by replica a is refused by a at
 * once, and by b within {@link WINDOW_MS} of a's answer (docs/security.md states the bound).
 */
const WINDOW_MS = 50;
const REVOCATIONS = 100;

const a = sharedTestApp();
let b: TestApp;
let baseA = '';
let baseB = '';

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  b = await createTestApp({ shareDatabaseWith: a });
  baseA = await listen(a);
  baseB = await listen(b);
  await waitFor(() => a.container.credentialCache.enabled && b.container.credentialCache.enabled, {
    what: 'listeners',
    timeoutMs: 10_000,
  });
});
afterAll(async () => {
  await b?.close();
});

type Headers = Record<string, string>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

/** One kind of revocation: a credential's probe that it refuses once the revocation is answered. */
interface Case {
  kind: string;
  /** A request the credential may make before the revocation and not after. */
  probe: { path: string; headers: Headers };
  /** The revocation, sent to replica a. */
  revoke: { method: string; path: string; headers: Headers; body?: unknown };
}

async function tokenCase(): Promise<Case> {
  const user = await buildUser(a);
  const res = await a.app.inject({
    method: 'POST',
    url: `/api/v0/admin/users/${user.id}/tokens`,
    headers: bearer(a.adminToken),
    payload: {},
  });
  const token = res.json() as { id: string; token: string };
  return {
    kind: 'revoked user token',
    probe: { path: '/api/v0/session', headers: bearer(token.token) },
    revoke: {
      method: 'DELETE',
      path: `/api/v0/admin/users/${user.id}/tokens/${token.id}`,
      headers: bearer(a.adminToken),
    },
  };
}

async function serviceKeyCase(): Promise<Case> {
  const company = await buildCompany(a);
  const key = await buildServiceKey(a, { companyId: company.id });
  return {
    kind: 'revoked service key',
    probe: { path: '/api/scanner/v1/credits', headers: { 'x-api-key': key.key } },
    revoke: {
      method: 'DELETE',
      path: `/api/v0/companies/${company.id}/service-keys/${key.id}`,
      headers: bearer(a.adminToken),
    },
  };
}

async function disabledMemberCase(): Promise<Case> {
  const company = await buildCompany(a);
  const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
  const member = await buildUser(a, { companyId: company.id, companyRole: 'member' });
  return {
    kind: 'disabled user',
    probe: { path: `/api/v0/companies/${company.id}/users`, headers: bearer(member.token) },
    revoke: {
      method: 'POST',
      path: `/api/v0/companies/${company.id}/users/${member.id}/disable`,
      headers: bearer(manager.token),
    },
  };
}

async function loweredRoleCase(): Promise<Case> {
  const company = await buildCompany(a);
  const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
  const lowered = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
  return {
    kind: 'lowered role',
    // The audit log is for company managers only.
    probe: { path: `/api/v0/companies/${company.id}/audit-log`, headers: bearer(lowered.token) },
    revoke: {
      method: 'PATCH',
      path: `/api/v0/companies/${company.id}/users/${lowered.id}`,
      headers: bearer(manager.token),
      body: { role: 'member' },
    },
  };
}

async function removedMemberCase(): Promise<Case> {
  const repository = await buildRepository(a);
  const reviewer = await buildUser(a);
  await addMember(a, repository.id, reviewer.id, 'reviewer');
  return {
    kind: 'removed repository member',
    probe: { path: `/api/v0/repositories/${repository.id}`, headers: bearer(reviewer.token) },
    revoke: {
      method: 'DELETE',
      path: `/api/v0/repositories/${repository.id}/members/${reviewer.id}`,
      headers: bearer(a.adminToken),
    },
  };
}

const makers = [tokenCase, serviceKeyCase, disabledMemberCase, loweredRoleCase, removedMemberCase];

async function probe(base: string, c: Case): Promise<number> {
  const res = await fetch(`${base}${c.probe.path}`, { headers: c.probe.headers });
  await res.arrayBuffer();
  return res.status;
}

/** Probes of b in flight at once, so that b is asked every few milliseconds even when one is slow. */
const POLLERS = 3;

/**
 * How long b accepted the credential after a answered the revocation: the latest start of a probe
 * b accepted, less the time of a's answer (0 when b accepted none started after it). A probe is
 * authenticated as it arrives, before its handler runs: its start is when b still accepted it.
 */
async function windowOf(c: Case): Promise<number> {
  // Both replicas accept the credential, and b has it in its cache.
  for (const base of [baseA, baseB, baseB]) expect(await probe(base, c), `${c.kind} before`).toBe(200);
  let sentAt = Number.POSITIVE_INFINITY;
  let answeredAt = Number.POSITIVE_INFINITY;
  let lastAcceptedStart = Number.NEGATIVE_INFINITY;
  let refused = false;
  // b is asked again and again from before the revocation is sent until it refuses.
  const poll = async () => {
    const deadline = performance.now() + 5_000;
    while (!refused && performance.now() < deadline) {
      const start = performance.now();
      const status = await probe(baseB, c);
      if (status === 200) {
        lastAcceptedStart = Math.max(lastAcceptedStart, start);
        continue;
      }
      // b may learn of the change before a's answer reaches the client (the notification and the
      // answer race); a refusal that arrives before the revocation was sent has another reason.
      expect(performance.now(), `${c.kind}: b refused before the revocation was sent`).toBeGreaterThan(
        sentAt,
      );
      expect([401, 403, 404], `${c.kind} on b`).toContain(status);
      refused = true;
    }
  };
  const polling = Promise.all(Array.from({ length: POLLERS }, poll));
  await new Promise((resolve) => setTimeout(resolve, 2));
  sentAt = performance.now();
  const res = await fetch(`${baseA}${c.revoke.path}`, {
    method: c.revoke.method,
    headers: { ...c.revoke.headers, ...(c.revoke.body ? { 'content-type': 'application/json' } : {}) },
    ...(c.revoke.body ? { body: JSON.stringify(c.revoke.body) } : {}),
  });
  await res.arrayBuffer();
  answeredAt = performance.now();
  expect(res.status, `${c.kind} revocation`).toBeLessThan(300);
  // The replica that made the change refuses at once.
  expect([401, 403, 404], `${c.kind} on a`).toContain(await probe(baseA, c));
  await polling;
  expect(refused, `${c.kind}: b never refused`).toBe(true);
  return Math.max(0, lastAcceptedStart - answeredAt);
}

describe('revocation across two replicas over HTTP', () => {
  it(`is refused by the changing replica at once and by the other within ${WINDOW_MS} ms, over ${REVOCATIONS} revocations`, async () => {
    const cases: Case[] = [];
    for (let i = 0; i < REVOCATIONS; i++) cases.push(await makers[i % makers.length]!());
    const windows: Array<{ kind: string; ms: number }> = [];
    for (const c of cases) windows.push({ kind: c.kind, ms: await windowOf(c) });
    const sorted = windows.map((w) => w.ms).sort((x, y) => x - y);
    const max = sorted[sorted.length - 1]!;
    const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!;
    const p50 = sorted[Math.ceil(sorted.length * 0.5) - 1]!;
    const report = { revocations: windows.length, p50Ms: p50, p99Ms: p99, maxMs: max, boundMs: WINDOW_MS };
    if (process.env.VIGIL_REVOCATION_REPORT)
      await writeFile(process.env.VIGIL_REVOCATION_REPORT, JSON.stringify(report));
    expect(windows).toHaveLength(REVOCATIONS);
    expect(new Set(windows.map((w) => w.kind)).size).toBe(makers.length);
    expect(
      windows.filter((w) => w.ms > WINDOW_MS),
      `windows above ${WINDOW_MS} ms (p50 ${p50.toFixed(1)}, p99 ${p99.toFixed(1)}, max ${max.toFixed(1)})`,
    ).toEqual([]);
  }, 300_000);
});
