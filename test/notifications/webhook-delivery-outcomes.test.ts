/**
 * What becomes of a webhook delivery: a destination the outbound policy refuses at connection
 * time, or a redirect, fails it for good after one POST at most; a refusal is retried; every
 * attempt is recorded and readable by the company's managers (listCompanyWebhookDeliveries).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companyWebhooks, notificationDeliveries, notifications } from '../../src/db/schema/index.ts';
import { OUTBOUND_REFUSED_MESSAGE } from '../../src/integrations/outbound/outbound-policy.ts';
import {
  DeliveryRetryError,
  MAX_DELIVERY_ATTEMPTS,
} from '../../src/platform/notifications/notifications.delivery.ts';
import type { WebhookDelivery } from '../../src/platform/notifications/notifications.schemas.ts';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../fakes/webhook-receiver.ts';
import { api, createTestApp, sendJson, type TestApp } from '../helpers/app.ts';
import { buildRepositoryTeam, buildUser, fileFinding } from '../helpers/factories.ts';

let t: TestApp;
let hooks: FakeWebhookReceiver;
/** A server outside VIGIL_OUTBOUND_ALLOW (127.0.0.2 is loopback, the allowed range is 127.0.0.1/32). */
let internal: { url: string; posts: number; close(): Promise<void> };

beforeAll(async () => {
  hooks = await startWebhookReceiver();
  const state = { posts: 0 };
  const server = createServer((req, res) => {
    state.posts++;
    req.resume();
    res.statusCode = 204;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
  internal = {
    url: `http://127.0.0.2:${(server.address() as AddressInfo).port}/hook`,
    get posts() {
      return state.posts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  t = await createTestApp({
    env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32', VIGIL_NOTIFY_TIMEOUT_MS: '5000' },
  });
});
afterAll(async () => {
  await t?.close();
  await hooks?.close();
  await internal?.close();
});

/** A company with a webhook to the receiver, and a comment that pings its triager: one delivery. */
async function oneDelivery() {
  const s = await buildRepositoryTeam(t);
  const manager = await buildUser(t, { companyId: s.company.id, companyRole: 'manager' });
  const hook = await sendJson(
    t,
    manager.token,
    'PUT',
    `/api/v0/companies/${s.company.id}/notification-webhook`,
    {
      url: hooks.url,
    },
  );
  expect(hook.status).toBe(200);
  const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
  const comment = await sendJson<{ id: string }>(
    t,
    s.judge.token,
    'POST',
    `/api/v0/repositories/${s.repository.id}/findings/${finding.id}/comment`,
    { content: `@${s.triager.username} look`, visibility: 'public' },
  );
  expect(comment.status).toBe(201);
  const [row] = await t.container.database.db
    .select({ id: notificationDeliveries.id })
    .from(notificationDeliveries)
    .innerJoin(notifications, eq(notifications.id, notificationDeliveries.notificationId))
    .where(eq(notifications.commentId, comment.body.id));
  expect(row).toBeDefined();
  return { ...s, manager, deliveryId: row!.id };
}

const postsOf = (deliveryId: string) =>
  hooks.received.filter((h) => h.headers['x-vigil-delivery'] === deliveryId).length;

async function deliveriesAs(token: string, companyId: string, query = '') {
  const res = await api(
    t,
    'GET',
    `/api/v0/companies/${companyId}/notification-webhook/deliveries${query}`,
    token,
  );
  return {
    status: res.statusCode,
    body: res.json() as { items: WebhookDelivery[]; nextValue: string | null },
  };
}

describe('webhook delivery outcomes', () => {
  it('fails a delivery for good when the policy refuses its destination at connection time: no POST, no retry', async () => {
    const s = await oneDelivery();
    // A URL saved before the check, or a name that resolves to an internal address since.
    await t.container.database.db
      .update(companyWebhooks)
      .set({ url: internal.url })
      .where(eq(companyWebhooks.companyId, s.company.id));
    const delivery = t.container.services.notificationDelivery;
    expect(await delivery.deliver(s.deliveryId)).toBe('failed');
    // Settled: a second run of its job claims nothing and sends nothing.
    expect(await delivery.deliver(s.deliveryId)).toBe('skipped');
    expect(internal.posts).toBe(0);
    const { status, body } = await deliveriesAs(s.manager.token, s.company.id);
    expect(status).toBe(200);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      id: s.deliveryId,
      status: 'failed_permanently',
      deliveredAt: null,
      attempts: [
        { attempt: 1, statusCode: null, error: OUTBOUND_REFUSED_MESSAGE, outcome: 'failed_permanently' },
      ],
    });
  });

  it('fails a delivery answered with a redirect after its one POST, never following it', async () => {
    const s = await oneDelivery();
    hooks.statuses.push(302);
    const delivery = t.container.services.notificationDelivery;
    expect(await delivery.deliver(s.deliveryId)).toBe('failed');
    expect(await delivery.deliver(s.deliveryId)).toBe('skipped');
    expect(postsOf(s.deliveryId)).toBe(1);
    const { body } = await deliveriesAs(s.manager.token, s.company.id);
    expect(body.items[0]).toMatchObject({
      status: 'failed_permanently',
      attempts: [{ attempt: 1, statusCode: 302, outcome: 'failed_permanently' }],
    });
    expect(body.items[0]!.attempts[0]!.error).toContain('redirects are not followed');
  });

  it('retries a refusal with the same delivery id and records each attempt until delivered', async () => {
    const s = await oneDelivery();
    hooks.statuses.push(503, 429);
    const delivery = t.container.services.notificationDelivery;
    for (let i = 0; i < 2; i++) {
      await expect(delivery.deliver(s.deliveryId)).rejects.toBeInstanceOf(DeliveryRetryError);
      const { body } = await deliveriesAs(s.manager.token, s.company.id);
      expect(body.items[0]!.status).toBe('retrying');
    }
    expect(await delivery.deliver(s.deliveryId)).toBe('delivered');
    expect(postsOf(s.deliveryId)).toBe(3);
    const { body } = await deliveriesAs(s.manager.token, s.company.id);
    const [item] = body.items;
    expect(item).toMatchObject({ status: 'delivered', deliveredAt: expect.any(String) });
    expect(item!.attempts.map((a) => [a.attempt, a.statusCode, a.outcome])).toEqual([
      [1, 503, 'retrying'],
      [2, 429, 'retrying'],
      [3, 204, 'delivered'],
    ]);
    for (const a of item!.attempts)
      expect(Date.parse(a.finishedAt)).toBeGreaterThanOrEqual(Date.parse(a.startedAt));
  });

  it(`gives up after ${MAX_DELIVERY_ATTEMPTS} refused attempts`, async () => {
    const s = await oneDelivery();
    hooks.statuses.push(...Array.from({ length: MAX_DELIVERY_ATTEMPTS }, () => 500));
    const delivery = t.container.services.notificationDelivery;
    for (let i = 1; i < MAX_DELIVERY_ATTEMPTS; i++) {
      await expect(delivery.deliver(s.deliveryId)).rejects.toBeInstanceOf(DeliveryRetryError);
    }
    expect(await delivery.deliver(s.deliveryId)).toBe('failed');
    expect(postsOf(s.deliveryId)).toBe(MAX_DELIVERY_ATTEMPTS);
    const { body } = await deliveriesAs(s.manager.token, s.company.id);
    expect(body.items[0]!.status).toBe('gave_up');
    expect(body.items[0]!.attempts.map((a) => a.outcome)).toEqual([
      ...Array.from({ length: MAX_DELIVERY_ATTEMPTS - 1 }, () => 'retrying'),
      'gave_up',
    ]);
  });

  it('lets managers read the deliveries page by page; members get 403, other companies 404', async () => {
    const s = await oneDelivery();
    const second = await sendJson<{ id: string }>(
      t,
      s.judge.token,
      'POST',
      `/api/v0/repositories/${s.repository.id}/findings/${(await fileFinding(t, s.reviewer.token, s.repository.id)).id}/comment`,
      { content: `@${s.triager.username} again`, visibility: 'public' },
    );
    expect(second.status).toBe(201);
    const first = await deliveriesAs(s.manager.token, s.company.id, '?limit=1');
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.items[0]!.status).toBe('pending');
    expect(first.body.nextValue).toEqual(expect.any(String));
    const next = await deliveriesAs(
      s.manager.token,
      s.company.id,
      `?limit=1&next=${encodeURIComponent(first.body.nextValue!)}`,
    );
    expect(next.body.items.map((d) => d.id)).toEqual([s.deliveryId]);
    expect(next.body.items[0]!.id).not.toBe(first.body.items[0]!.id);

    expect((await deliveriesAs(s.companyUser.token, s.company.id)).status).toBe(403);
    const other = await oneDelivery();
    expect((await deliveriesAs(other.manager.token, s.company.id)).status).toBe(404);
    expect((await deliveriesAs(s.manager.token, other.company.id)).status).toBe(404);
  });
});
