import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeSmtpServer, startFakeSmtpServer } from '../../../test/fakes/smtp-server.ts';
import { type FakeWebhookReceiver, startWebhookReceiver } from '../../../test/fakes/webhook-receiver.ts';
import { createTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { buildUser } from '../../../test/helpers/factories.ts';
import { buildRepositoryTeam, fileFinding, sendJson } from '../../../test/helpers/findings-factories.ts';
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

  it('never sends again a delivery whose worker claimed it and died', async () => {
    const s = await setup();
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
    // What a worker that died after its claim leaves behind: the row claimed, nothing finished.
    expect(await notificationsRepo(t.container.database.db).claim(d.email!.id)).not.toBeNull();
    expect(await t.container.services.notificationDelivery.deliver(d.email!.id)).toBe('skipped');
    expect(mailsFor(d.email!.id)).toHaveLength(0);
  });
});

const serverUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!serverUrl)('a delivery process killed inside the webhook call (PostgreSQL)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('is not sent again by the retry', async () => {
    const s = await setup();
    const database = t.config.database;
    if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    // No worker runs yet in this file: the child is the only sender of this delivery.
    const id = await s.post('@project');
    const d = await deliveriesOf(id, s.manager.id);
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
    // The job's retry (pg-boss after the lease) runs the handler again: nothing is sent.
    expect(await t.container.services.notificationDelivery.deliver(d.webhook!.id)).toBe('skipped');
    expect(hooksFor(d.webhook!.id)).toHaveLength(1);
    const [row] = await t.container.database.db
      .select()
      .from(notificationDeliveries)
      .where(eq(notificationDeliveries.id, d.webhook!.id));
    expect(row?.status).toBe('sending');
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
