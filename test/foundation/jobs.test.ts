import { type TSchema, Type } from '@sinclair/typebox';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companies } from '../../src/db/schema/index.ts';
import {
  createJobQueue,
  defineJob,
  type JobContext,
  type JobQueue,
  type RegisteredJob,
} from '../../src/jobs/queue.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

const echo = defineJob({
  name: 'test.echo',
  version: 1,
  payload: Type.Object({ n: Type.Integer() }),
  retryLimit: 2,
  retryDelaySeconds: 1,
  handler: (deps: { seen: number[] }) => async (payload) => void deps.seen.push(payload.n),
});
const slow = defineJob({
  name: 'test.slow',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 2,
  retryDelaySeconds: 1,
  handler: (deps: { run: (context: JobContext) => Promise<void> }) => (_payload, context) =>
    deps.run(context),
});
/** Version 2 of a job whose version 1 had `count` where version 2 has `n`. */
const versioned = defineJob({
  name: 'test.versioned',
  version: 2,
  payload: Type.Object({ n: Type.Integer() }),
  retryLimit: 3,
  retryDelaySeconds: 1,
  upgrade: (version, payload) =>
    version === 1 && typeof payload.count === 'number' ? { n: payload.count } : undefined,
  handler: (deps: { seen: number[] }) => async (payload) => void deps.seen.push(payload.n),
});
/** Always fails, recording what each attempt was told. */
const flaky = defineJob({
  name: 'test.flaky',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 2,
  retryDelaySeconds: 1,
  handler: (deps: { attempts: Array<[number, boolean]> }) => async (_payload, context) => {
    deps.attempts.push([context.retryCount, context.finalAttempt]);
    throw new Error('always fails');
  },
});

/** How another release declares `test.versioned`: a payload schema of its own at `version`. */
function versionedAs<S extends TSchema>(version: number, payload: S) {
  return defineJob({ name: versioned.name, version, payload, handler: () => async () => undefined });
}

let t: TestApp;
const queues: JobQueue<never>[] = [];
const silent = pino({ level: 'silent' });

/** A started queue of `jobs`, stopped after the file. */
async function startQueue<D>(
  jobs: readonly RegisteredJob<D>[],
  options: { log?: pino.Logger; supervise?: boolean } = {},
): Promise<JobQueue<D>> {
  const queue = createJobQueue({
    database: t.container.database,
    jobs,
    log: options.log ?? silent,
    leaseSeconds: 60,
  });
  await queue.start({ supervise: options.supervise ?? false });
  queues.push(queue);
  return queue;
}

async function jobRow(id: string) {
  const res = await t.container.database.executeSql(
    'select state, retry_count, output from pgboss.job where id = $1',
    [id],
  );
  const row = res.rows[0];
  return row
    ? { state: String(row.state), retryCount: Number(row.retry_count), output: JSON.stringify(row.output) }
    : undefined;
}

async function jobState(id: string): Promise<string | undefined> {
  return (await jobRow(id))?.state;
}

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  for (const queue of queues) await queue.stop({ timeoutMs: 1000 });
  await t.close();
});

describe('job queue on the service database', () => {
  it('enqueues a job in the transaction of the write that causes it', async () => {
    const queue = await startQueue([echo], { supervise: true });
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
    const seen: number[] = [];
    await queue.work({ seen }, { concurrency: 1, pollingSeconds: 0.5 });
    await waitFor(async () => (await jobState(id!)) === 'completed');
    expect(seen).toEqual([2]);
    const count = await t.container.database.executeSql(
      "select count(*)::int as n from pgboss.job where name = 'test.echo'",
      [],
    );
    expect(count.rows[0]?.n).toBe(1);
  });

  it('rejects a payload that does not match the job schema', async () => {
    const queue = await startQueue([echo]);
    // @ts-expect-error: the payload is checked at run time as well
    await expect(queue.enqueue(echo, { n: 'x' })).rejects.toThrow(/Invalid payload/);
  });

  it('releases a running job on shutdown so that another worker retries it', async () => {
    const first = await startQueue([slow]);
    let started = false;
    await first.work(
      {
        run: async (context) => {
          started = true;
          await new Promise<void>((resolve) =>
            context.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          throw new Error('stopped by shutdown');
        },
      },
      { concurrency: 1, pollingSeconds: 0.5 },
    );
    const id = await first.enqueue(slow, {});
    await waitFor(() => started);
    expect(await jobState(id!)).toBe('active');
    await first.stop({ timeoutMs: 200 });
    expect(await jobState(id!)).toBe('retry');
    let finished = false;
    const second = await startQueue([slow]);
    await second.work(
      {
        run: async () => {
          finished = true;
        },
      },
      { concurrency: 1, pollingSeconds: 0.5 },
    );
    await waitFor(async () => (await jobState(id!)) === 'completed');
    expect(finished).toBe(true);
  });

  it('runs a payload of an earlier version its definition upgrades, and refuses other payloads for good', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const seen: number[] = [];
    const worker = await startQueue([versioned], { log });
    const producer = await startQueue([versioned]);
    await worker.work({ seen }, { concurrency: 1, pollingSeconds: 0.5 });

    const upgraded = await producer.enqueue(versionedAs(1, Type.Object({ count: Type.Integer() })), {
      count: 7,
    });
    const current = await producer.enqueue(versioned, { n: 8 });
    const newer = await producer.enqueue(versionedAs(3, Type.Object({ n: Type.Integer() })), { n: 9 });
    const wrongShape = await producer.enqueue(versionedAs(2, Type.Object({ n: Type.String() })), {
      n: 'ten',
    });
    const notUpgradable = await producer.enqueue(versionedAs(0, Type.Object({ count: Type.Integer() })), {
      count: 11,
    });
    const refused: Array<[string | null, RegExp]> = [
      [newer, /payload version 3 is newer than this worker's version 2/],
      [wrongShape, /does not match the schema of version 2 \(\/n: /],
      [notUpgradable, /payload version 0 is older than version 2 and cannot be upgraded/],
    ];
    const ids = [upgraded, current, ...refused.map(([id]) => id)].map((id) => id!);
    await waitFor(async () => {
      const states = await Promise.all(ids.map(jobState));
      return states.every((state) => state === 'completed' || state === 'failed');
    });

    expect(await jobState(upgraded!)).toBe('completed');
    expect(await jobState(current!)).toBe('completed');
    expect(seen.sort()).toEqual([7, 8]);
    for (const [id, reason] of refused) {
      // Failed on its first attempt although the definition allows 3 retries.
      expect(await jobRow(id!)).toMatchObject({
        state: 'failed',
        retryCount: 0,
        output: expect.stringMatching(reason),
      });
      const entry = logged.find((e) => e.jobId === id && e.level === 50);
      expect(entry).toMatchObject({ job: 'test.versioned', reason: expect.stringMatching(reason) });
    }
  });

  it('tells a handler when its run is the last attempt', async () => {
    const attempts: Array<[number, boolean]> = [];
    const queue = await startQueue([flaky]);
    await queue.work({ attempts }, { concurrency: 1, pollingSeconds: 0.5 });
    const id = await queue.enqueue(flaky, {});
    await waitFor(async () => (await jobState(id!)) === 'failed');
    expect(attempts).toEqual([
      [0, false],
      [1, false],
      [2, true],
    ]);
    expect(await jobRow(id!)).toMatchObject({ retryCount: 2 });
  });
});
