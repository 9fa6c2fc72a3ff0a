/**
 * Runs one notification delivery in its own process, so that a test can kill the process while
 * it is inside the send. Configured by environment variables; prints `started` first.
 */
import pino from 'pino';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { parseSecretKey } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createNotificationDelivery } from '../../src/platform/notifications/notifications.delivery.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const database = await openDatabase({ kind: 'postgres', url: env('NOTIFY_DATABASE_URL'), poolSize: 2 });
const delivery = createNotificationDelivery({
  database,
  secretBox: createSecretBox(parseSecretKey(env('NOTIFY_SECRET_KEY'))),
  mailer: null,
  fetch: globalThis.fetch,
  webhookTimeoutMs: 120_000,
  ...(process.env.NOTIFY_CLAIM_LEASE_SECONDS
    ? { claimLeaseSeconds: Number(process.env.NOTIFY_CLAIM_LEASE_SECONDS) }
    : {}),
  publicUrl: null,
  log: pino({ level: 'silent' }),
});
process.stdout.write('started\n');
const outcome = await delivery.deliver(env('NOTIFY_DELIVERY_ID'));
process.stdout.write(`${outcome}\n`);
await database.close();
