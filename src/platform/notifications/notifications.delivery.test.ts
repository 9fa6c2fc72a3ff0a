import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../../test/fakes/smtp-server.ts';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { createTestApp, sendJson, type TestApp } from '../../../test/helpers/app.ts';
import { buildRepositoryTeam, buildUser, fileFinding } from '../../../test/helpers/factories.ts';
import { rowsOf } from '../../db/client.ts';
import { notificationDeliveries, notifications } from '../../db/schema/index.ts';
import { DeliveryRetryError } from './notifications.delivery.ts';
import { notificationsRepo } from './notifications.repo.ts';

let t: TestApp;
let smtp: FakeSmtpServer;
let hooks: FakeWebhookReceiver;

beforeAll(async () => {
  smtp = await startFakeSmtpServer();
  hooks = await startWebhookReceiver();
  t = await createTestApp({
    env: { VIGIL_SMTP_URL: smtp.url, VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32', VIGIL_NOTIFY_TIMEOUT_MS: '5000' },
  });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
  await hooks.close();
});

/** A team whose company has a webhook to the receiver and a company user with an e-mail address. */
async function setup() {
  const s = await buildRepositoryTeam(t);
  const manager = await buildUser(t, {
    companyId: s.company.id,
    companyRole: 'manager',
    email: `${s.company.handle}-manager@example.test`,
  });
  const hook = await sendJson<{ secret: string }>(
    t,
    manager.token,
    'PUT',
    `/api/v0/companies/${s.company.id}/notification-webhook`,
    { url: hooks.url },
  );
  expect(hook.status).toBe(200);
  const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
  const post = async (content: string, visibility = 'public') => {
    const res = await sendJson<{ id: string }>(
      t,
      s.judge.token,
      'POST',
      `/api/v0/repositories/${s.repository.id}/findings/${finding.id}/comment`,
      { content, visibility },
    );
    expect(res.status).toBe(201);
    return res.body.id;
  };
  return { ...s, manager, finding, secret: hook.body.secret, post };
}

/** The deliveries of a comment's notifications for one user, by channel. */
async function deliveriesOf(commentId: string, userId: string) {
  const rows = await t.container.database.db
    .select({ delivery: notificationDeliveries })
    .from(notificationDeliveries)
    .innerJoin(notifications, eq(notifications.id, notificationDeliveries.notificationId))
    .where(eq(notifications.commentId, commentId));
  const mine = rows.map((r) => r.delivery).filter(Boolean);
  const ids = await t.container.database.db
    .select({ id: notifications.id })
    .from(notifications)
    .where(eq(notifications.userId, userId));
  const own = new Set(ids.map((r) => r.id));
  const of = mine.filter((d) => own.has(d.notificationId));
  return {
    email: of.find((d) => d.channel === 'email'),
    webhook: of.find((d) => d.channel === 'webhook'),
  };
}

const hooksFor = (deliveryId: string) =>
  hooks.received.filter((h) => h.headers['x-vigil-delivery'] === deliveryId);
const mailsFor = (deliveryId: string) =>
  smtp.messages.filter((m) => m.raw.includes(`Message-ID: <${deliveryId}@vigil.notifications>`));

describe('notification delivery', () => {
  it('creates one e-mail and one webhook delivery per pinged user, only for users with an address', async () => {
    const s = await setup();
    const id = await s.post('@project have a look');
    const manager = await deliveriesOf(id, s.manager.id);
    const member = await deliveriesOf(id, s.companyUser.id);
    expect(manager.email?.status).toBe('pending');
    expect(manager.webhook?.status).toBe('pending');
    expect(member.email).toBeUndefined();
    expect(member.webhook?.status).toBe('pending');
    // A hidden comment pings no company user, and the company's webhook never carries it.
    const hidden = await sendJson<{ id: string }>(
      t,
      s.admin.token,
      'POST',
      `/api/v0/repositories/${s.repository.id}/findings/${s.finding.id}/comment`,
      { content: `@project @${s.judge.username}`, visibility: 'hidden' },
    );
    expect(hidden.status).toBe(201);
    const rows = await t.container.database.db
      .select()
      .from(notifications)
      .where(eq(notifications.commentId, hidden.body.id));
    expect(rows).toHaveLength(0);
  });

  it('retries a refused webhook with the same delivery id, and gives up on a permanent SMTP refusal', async () => {
    const s = await setup();
    smtp.refuse.add(`${s.company.handle}-manager@example.test`);
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    const delivery = t.container.services.notificationDelivery;
    hooks.statuses.push(503);
    const first = await delivery.deliver(d.webhook!.id).catch((err: unknown) => err);
    expect(first).toBeInstanceOf(DeliveryRetryError);
    const [released] = await t.container.database.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.id, d.webhook!.id));
    expect(released).toMatchObject({ status: 'pending', attempts: 1, lastError: 'webhook answered 503' });
    expect(await delivery.deliver(d.webhook!.id)).toBe('delivered');
    expect(hooksFor(d.webhook!.id)).toHaveLength(2);
    expect(await delivery.deliver(d.webhook!.id)).toBe('skipped');
    expect(hooksFor(d.webhook!.id)).toHaveLength(2);

    expect(await delivery.deliver(d.email!.id)).toBe('failed');
    expect(mailsFor(d.email!.id)).toHaveLength(0);
  });

  it('sends a delivery once when several workers run it at the same time', async () => {
    const s = await setup();
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    const delivery = t.container.services.notificationDelivery;
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => delivery.deliver(d.email!.id)));
    expect(outcomes.filter((o) => o === 'delivered')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'skipped')).toHaveLength(7);
    expect(mailsFor(d.email!.id)).toHaveLength(1);
  });

  it('queues a job again for a delivery left pending without one, once, and that job delivers it', async () => {
    const s = await setup();
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    const delivery = t.container.services.notificationDelivery;
    const db = t.container.database.db;
    const jobsOf = async (deliveryId: string) =>
      rowsOf<{ n: number }>(
        await db.execute(
          sql`select count(*)::int as n from pgboss.job where name = 'notification.deliver' and data->>'deliveryId' = ${deliveryId}`,
        ),
      )[0]!.n;
    expect(await jobsOf(d.webhook!.id)).toBe(1);
    // Fresh and pending with its job queued: not an orphan.
    expect(await delivery.requeueOrphans()).not.toContain(d.webhook!.id);

    // Its job is gone (its retries ran out before it could claim) and nothing happened for two
    // hours; the e-mail delivery of the same comment was claimed a minute ago and stays alone.
    await db.execute(
      sql`delete from pgboss.job where name = 'notification.deliver' and data->>'deliveryId' = ${d.webhook!.id}`,
    );
    await db
      .update(notificationDeliveries)
      .set({ enqueuedAt: sql`now() - interval '2 hours'` })
      .where(inArray(notificationDeliveries.id, [d.webhook!.id, d.email!.id]));
    await db
      .update(notificationDeliveries)
      .set({ claimedAt: sql`now() - interval '1 minute'` })
      .where(eq(notificationDeliveries.id, d.email!.id));

    const requeued = await delivery.requeueOrphans();
    expect(requeued).toContain(d.webhook!.id);
    expect(requeued).not.toContain(d.email!.id);
    expect(await jobsOf(d.webhook!.id)).toBe(1);
    const [row] = await db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.id, d.webhook!.id));
    expect(row).toMatchObject({ status: 'pending', lastError: expect.stringContaining('queued again') });
    expect(row!.enqueuedAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Queued again once: the next sweep leaves it to its new job.
    expect(await delivery.requeueOrphans()).not.toContain(d.webhook!.id);
    expect(await delivery.deliver(d.webhook!.id)).toBe('delivered');
    expect(hooksFor(d.webhook!.id)).toHaveLength(1);
  });

  it('reports an e-mail whose sender died after its claim as unknown once the claim expires, never sending it', async () => {
    const s = await setup();
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    const delivery = t.container.services.notificationDelivery;
    // What a worker that died after its claim leaves behind: the row claimed (1 s lease), nothing finished.
    expect(await notificationsRepo(t.container.database.db).claim(d.email!.id, 1)).not.toBeNull();
    expect(await delivery.deliver(d.email!.id)).toBe('skipped');
    // Within its lease the claim is left alone: its sender may still be working.
    expect((await delivery.sweepStaleClaims()).unknown).not.toContain(d.email!.id);
    await vi.waitFor(async () => expect((await delivery.sweepStaleClaims()).unknown).toContain(d.email!.id), {
      timeout: 10_000,
      interval: 250,
    });
    const [row] = await t.container.database.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.id, d.email!.id));
    expect(row).toMatchObject({ status: 'unknown', attempts: 1, claimedUntil: null });
    expect(row?.lastError).toMatch(/^outcome unknown: the sender stopped during attempt 1/);
    // Settled once: neither the sweep nor a job run touches it again, and nothing was mailed.
    expect(await delivery.sweepStaleClaims()).toEqual({ resent: [], unknown: [] });
    expect(await delivery.deliver(d.email!.id)).toBe('skipped');
    expect(mailsFor(d.email!.id)).toHaveLength(0);
  });
});

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)('a delivery process killed inside the webhook call (PostgreSQL)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('is left alone while its claim lasts, then resent once with the same delivery id and ends delivered', async () => {
    const s = await setup();
    const database = t.config.database;
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    // No worker runs yet in this file: the child is the only sender of this delivery.
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    const delivery = t.container.services.notificationDelivery;
    hooks.hold = 1;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../../test/notifications/deliver-in-child.ts', import.meta.url)),
      ],
      {
        env: {
          ...process.env,
          NOTIFY_DATABASE_URL: database.url,
          NOTIFY_SECRET_KEY: t.config.secretKey!.toString('hex'),
          NOTIFY_DELIVERY_ID: d.webhook!.id,
          // A short claim; the child's webhook call is cut 2 s before its end.
          NOTIFY_CLAIM_LEASE_SECONDS: '6',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_c, signal) => resolve(signal)),
    );
    await vi.waitFor(() => expect(hooksFor(d.webhook!.id)).toHaveLength(1), {
      timeout: 20_000,
      interval: 20,
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    hooks.hold = 0;
    const row = async () =>
      (
        await t.container.database.db
          .select()
          .from(notificationDeliveries)
          .where(eq(notificationDeliveries.id, d.webhook!.id))
      )[0];
    // While the claim lasts, the job's retry sends nothing and the sweep leaves it alone.
    expect(await delivery.deliver(d.webhook!.id)).toBe('skipped');
    expect((await delivery.sweepStaleClaims()).resent).not.toContain(d.webhook!.id);
    expect((await row())?.status).toBe('sending');
    expect(hooksFor(d.webhook!.id)).toHaveLength(1);

    // Once it expired, the sweep gives it back with a new job; that job sends it again.
    await vi.waitFor(
      async () => expect((await delivery.sweepStaleClaims()).resent).toContain(d.webhook!.id),
      { timeout: 20_000, interval: 250 },
    );
    expect(await row()).toMatchObject({ status: 'pending', attempts: 1, claimedUntil: null });
    expect(await delivery.deliver(d.webhook!.id)).toBe('delivered');
    expect(await row()).toMatchObject({ status: 'delivered', attempts: 2 });
    // Two requests carried it, both with the same delivery id and body: a receiver that keeps
    // the ids it has seen (as X-Vigil-Delivery is documented for) processes it exactly once.
    const received = hooksFor(d.webhook!.id);
    expect(received).toHaveLength(2);
    expect(new Set(received.map((h) => JSON.parse(h.body).deliveryId))).toEqual(new Set([d.webhook!.id]));
    expect(received[0]?.body).toBe(received[1]?.body);
    // Settled: nothing more is sent by the sweep or another run.
    expect(await delivery.sweepStaleClaims()).toEqual({ resent: [], unknown: [] });
    expect(await delivery.deliver(d.webhook!.id)).toBe('skipped');
    expect(hooksFor(d.webhook!.id)).toHaveLength(2);
  });
});

// Last: from here on a worker runs in this process and takes every queued delivery.
describe('notification delivery jobs', () => {
  it('sends the e-mail over SMTP and the signed webhook, through the worker, each once', async () => {
    const s = await setup();
    const id = await s.post(`@project the fix is in; see \`@${s.manager.username}\``);
    const d = await deliveriesOf(id, s.manager.id);
    await t.startWorker();
    await vi.waitFor(
      async () => {
        const [email, webhook] = await t.container.database.db
          .select()
          .from(notificationDeliveries)
          .where(inArray(notificationDeliveries.id, [d.email!.id, d.webhook!.id]))
          .orderBy(notificationDeliveries.channel);
        expect([email?.status, webhook?.status]).toEqual(['delivered', 'delivered']);
      },
      { timeout: 30_000, interval: 100 },
    );
    const [mail] = mailsFor(d.email!.id);
    expect(mailsFor(d.email!.id)).toHaveLength(1);
    expect(mail?.to).toEqual([`${s.company.handle}-manager@example.test`]);
    expect(mail?.raw).toMatch(new RegExp(`Subject: @${s.judge.username} mentioned you on`));
    expect(mail?.raw).toContain('the fix is in');

    const [hook] = hooksFor(d.webhook!.id);
    expect(hooksFor(d.webhook!.id)).toHaveLength(1);
    const timestamp = hook?.headers['x-vigil-timestamp'] as string;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(600);
    const expected = createHmac('sha256', s.secret).update(`${timestamp}.${hook?.body}`).digest('hex');
    expect(hook?.headers['x-vigil-signature']).toBe(`sha256=${expected}`);
    expect(JSON.parse(hook?.body ?? '{}')).toMatchObject({
      type: 'notification.created',
      deliveryId: d.webhook!.id,
      notification: {
        kind: 'comment_ping',
        recipient: { userId: s.manager.id },
        commentId: id,
        findingId: s.finding.id,
      },
    });
  });
});
