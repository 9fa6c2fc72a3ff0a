import { Type } from '@sinclair/typebox';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companies } from '../../src/db/schema/index.ts';
import { createJobQueue, defineJob, handleJob, type JobQueue } from '../../src/jobs/queue.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const echo = defineJob({
  name: 'test.echo',
  version: 1,
  payload: Type.Object({ n: Type.Integer() }),
  retryLimit: 2,
  retryDelaySeconds: 1,
});
const slow = defineJob({
  name: 'test.slow',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 2,
  retryDelaySeconds: 1,
});

let t: TestApp;
let queue: JobQueue;
const seen: number[] = [];
const log = pino({ level: 'silent' });

async function jobState(id: string): Promise<string | undefined> {
  const res = await t.container.database.executeSql('select state from pgboss.job where id = $1', [id]);
  return res.rows[0]?.state as string | undefined;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  t = await createTestApp();
  queue = createJobQueue({
    database: t.container.database,
    definitions: [echo, slow],
    log,
    leaseSeconds: 60,
  });
  await queue.start({ supervise: true });
});
afterAll(async () => {
  await queue.stop({ timeoutMs: 1000 });
  await t.close();
});

describe('job queue on the service database', () => {
  it('enqueues a job in the transaction of the write that causes it', async () => {
    await expect(
      t.container.database.transaction(async (tx) => {
        await tx.db.insert(companies).values({ name: 'Rolled back', handle: 'rolled-back' });
        await queue.enqueue(echo, { n: 1 }, { tx });
        throw new Error('abort the transaction');
      }),
    ).rejects.toThrow('abort the transaction');
    const id = await t.container.database.transaction(async (tx) => {
      await tx.db.insert(companies).values({ name: 'Committed', handle: 'committed' });
      return queue.enqueue(echo, { n: 2 }, { tx });
    });
    expect(id).toBeTruthy();
    await queue.work([handleJob(echo, async (payload) => void seen.push(payload.n))], {
      concurrency: 1,
      pollingSeconds: 0.5,
    });
    await waitFor(async () => (await jobState(id!)) === 'completed');
    expect(seen).toEqual([2]);
    const count = await t.container.database.executeSql(
      "select count(*)::int as n from pgboss.job where name = 'test.echo'",
      [],
    );
    expect(count.rows[0]?.n).toBe(1);
  });

  it('rejects a payload that does not match the job schema', async () => {
    await expect(queue.enqueue(echo, { n: 'x' } as unknown as { n: number })).rejects.toThrow(
      /Invalid payload/,
    );
  });

  it('releases a running job on shutdown so that another worker retries it', async () => {
    const other = createJobQueue({
      database: t.container.database,
      definitions: [slow],
      log,
      leaseSeconds: 60,
    });
    await other.start({ supervise: false });
    let started = false;
    await other.work(
      [
        handleJob(slow, async (_payload, context) => {
          started = true;
          await new Promise<void>((resolve) =>
            context.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          throw new Error('stopped by shutdown');
        }),
      ],
      { concurrency: 1, pollingSeconds: 0.5 },
    );
    const id = await other.enqueue(slow, {});
    await waitFor(async () => started);
    expect(await jobState(id!)).toBe('active');
    await other.stop({ timeoutMs: 200 });
    expect(await jobState(id!)).toBe('retry');
    let finished = false;
    const markFinished = async () => {
      finished = true;
    };
    await queue.work([handleJob(slow, markFinished)], {
      concurrency: 1,
      pollingSeconds: 0.5,
    });
    await waitFor(async () => (await jobState(id!)) === 'completed');
    expect(finished).toBe(true);
  });
});
