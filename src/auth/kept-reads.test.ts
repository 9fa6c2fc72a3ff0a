import { describe, expect, it } from 'vitest';
import { createKeptReads } from './kept-reads.ts';

function keptReads(
  options: {
    maxEntries?: number;
    maxJsonLength?: number;
    maxTotalJsonLength?: number;
    now?: () => number;
  } = {},
) {
  const reads = createKeptReads<{ n: number }>({
    tables: ['findings', 'labels'],
    maxEntries: options.maxEntries ?? 8,
    maxJsonLength: options.maxJsonLength,
    maxTotalJsonLength: options.maxTotalJsonLength,
    now: options.now,
  });
  reads.setEnabled(true);
  return reads;
}

/** A load that counts its calls and answers the current value of `source`. */
function counter(source: { n: number }) {
  const calls = { count: 0 };
  const load = async () => {
    calls.count += 1;
    return { n: source.n };
  };
  return { calls, load };
}

describe('kept reads', () => {
  it('keeps a value per caller and key from its second request, and hands out the same object', async () => {
    const reads = keptReads();
    const source = { n: 1 };
    const { calls, load } = counter(source);
    const alice = {};
    await reads.read(alice, 'q', load);
    expect(reads.size).toBe(0); // asked for once: not kept
    const second = await reads.read(alice, 'q', load);
    const third = await reads.read(alice, 'q', load);
    expect(third).toBe(second);
    expect(calls.count).toBe(2);
    expect(reads.hits).toBe(1);
    expect(reads.misses).toBe(2);
    // Another key, another caller: read again.
    await reads.read(alice, 'other', load);
    await reads.read({}, 'q', load);
    expect(calls.count).toBe(4);
  });

  it('forgets on a notification of a table it reads, not of another', async () => {
    const reads = keptReads();
    const source = { n: 1 };
    const { calls, load } = counter(source);
    const caller = {};
    await reads.read(caller, 'q', load);
    await reads.read(caller, 'q', load);
    source.n = 2;
    reads.changed('scans');
    expect((await reads.read(caller, 'q', load)).n).toBe(1);
    reads.changed('labels');
    expect((await reads.read(caller, 'q', load)).n).toBe(2);
    expect(calls.count).toBe(3);
  });

  it("forgets only one user's values on a notification naming the user, and every value on one naming only the table", async () => {
    const reads = keptReads();
    const alice = { userId: 'alice' };
    const bob = { userId: 'bob' };
    const service = { organizationId: 'org' };
    const values = { n: 1 };
    for (const caller of [alice, bob, service]) {
      await reads.read(caller, 'q', async () => ({ ...values }));
      await reads.read(caller, 'q', async () => ({ ...values }));
    }
    expect(reads.size).toBe(3);
    values.n = 2;
    const n = async (caller: object) => (await reads.read(caller, 'q', async () => ({ ...values }))).n;
    reads.changed('scans:u:alice'); // a table it does not read
    expect([await n(alice), await n(bob), await n(service)]).toEqual([1, 1, 1]);
    reads.changed('findings:u:alice');
    expect(reads.size).toBe(2);
    expect([await n(alice), await n(bob), await n(service)]).toEqual([2, 1, 1]);
    // A user id that is a prefix of another's forgets only its own.
    reads.changed('findings:u:ali');
    expect(reads.size).toBe(2);
    reads.changed('findings');
    expect(reads.size).toBe(0);
  });

  it('forgets on a notification naming a company only the values read for callers who may see it', async () => {
    const reads = keptReads();
    const acme = { userId: 'a' };
    const both = { userId: 'b' };
    const everyone = { userId: 'c' };
    const unscoped = { userId: 'd' };
    const scopes = new Map<object, (() => ReadonlySet<string> | null) | undefined>([
      [acme, () => new Set(['acme'])],
      [both, () => new Set(['acme', 'globex'])],
      [everyone, () => null],
      [unscoped, undefined],
    ]);
    for (const [caller, scope] of scopes) {
      await reads.read(caller, 'q', async () => ({ n: 1 }), scope);
      await reads.read(caller, 'q', async () => ({ n: 1 }), scope);
    }
    expect(reads.size).toBe(4);
    const n = async (caller: object) => (await reads.read(caller, 'q', async () => ({ n: 2 }))).n;
    reads.changed('findings:c:initech');
    // Forgotten: the one who sees every company, and the one kept without a scope.
    expect(reads.size).toBe(2);
    expect([await n(acme), await n(both)]).toEqual([1, 1]);
    reads.changed('findings:c:globex');
    expect(reads.size).toBe(1);
    expect(await n(acme)).toBe(1);
    // A scope it does not know names the whole table.
    reads.changed('findings:x:acme');
    expect(reads.size).toBe(0);
  });

  it('does not store what was read before a notification that arrived while it ran', async () => {
    const reads = keptReads();
    const caller = {};
    await reads.read(caller, 'q', async () => ({ n: 0 }));
    let release: () => void = () => {};
    const slow = reads.read(caller, 'q', async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { n: 1 };
    });
    reads.changed('findings');
    release();
    expect((await slow).n).toBe(1);
    expect(reads.size).toBe(0);
    await reads.read(caller, 'q', async () => ({ n: 2 }));
    expect((await reads.read(caller, 'q', async () => ({ n: 3 }))).n).toBe(3);
    expect(reads.size).toBe(1);
    expect((await reads.read(caller, 'q', async () => ({ n: 4 }))).n).toBe(3);
  });

  it('keeps nothing while disabled, nor errors, nor values over the size limit', async () => {
    const reads = keptReads({ maxJsonLength: 20 });
    const caller = {};
    reads.setEnabled(false);
    const { calls, load } = counter({ n: 1 });
    for (let i = 0; i < 3; i++) await reads.read(caller, 'q', load);
    expect(calls.count).toBe(3);
    expect(reads.size).toBe(0);

    reads.setEnabled(true);
    const failing = async (): Promise<{ n: number }> => {
      throw new Error('bad request');
    };
    for (let i = 0; i < 2; i++) await expect(reads.read(caller, 'q', failing)).rejects.toThrow('bad request');
    expect(reads.size).toBe(0);

    const big = { n: 1, text: 'x'.repeat(100) };
    let bigCalls = 0;
    const loadBig = async () => {
      bigCalls += 1;
      return big;
    };
    for (let i = 0; i < 3; i++) await reads.read(caller, 'big', loadBig);
    expect(bigCalls).toBe(3);
    expect(reads.size).toBe(0);
  });

  it('keeps at most maxEntries values and trusts none longer than its age limit', async () => {
    let clock = 0;
    const reads = keptReads({ maxEntries: 2, now: () => clock });
    const caller = {};
    const { calls, load } = counter({ n: 1 });
    for (const key of ['a', 'a', 'b', 'b', 'c', 'c']) await reads.read(caller, key, load);
    expect(reads.size).toBe(2);
    expect(calls.count).toBe(6);
    await reads.read(caller, 'c', load); // kept
    expect(calls.count).toBe(6);
    await reads.read(caller, 'a', load); // the least recently used went out
    expect(calls.count).toBe(7);
    clock = 61_000;
    await reads.read(caller, 'c', load);
    expect(calls.count).toBe(8);
  });

  it('weighs a value by what its jsonLengthOf says of it, when it has one', async () => {
    // A value that holds JSON as text: stringifying it would escape each quote again.
    const texts = { bodies: ['{"a":"b"}', '{"c":"d"}'] };
    const reads = createKeptReads<typeof texts>({
      tables: ['findings'],
      maxEntries: 8,
      maxJsonLength: 30,
      jsonLengthOf: (value) => value.bodies.join(',').length + 2,
    });
    reads.setEnabled(true);
    expect(JSON.stringify(texts).length).toBeGreaterThan(30);
    const caller = {};
    for (let i = 0; i < 2; i++) await reads.read(caller, 'q', async () => texts);
    expect([reads.size, reads.keptJsonLength]).toEqual([1, 21]);
  });

  it('keeps at most maxTotalJsonLength characters of JSON, least recently used out', async () => {
    // Each value is `{"n":1}`: 7 characters; room for two.
    const reads = keptReads({ maxEntries: 8, maxTotalJsonLength: 15 });
    const caller = {};
    const { calls, load } = counter({ n: 1 });
    for (const key of ['a', 'a', 'b', 'b']) await reads.read(caller, key, load);
    expect([reads.size, reads.keptJsonLength]).toEqual([2, 14]);
    for (const key of ['c', 'c']) await reads.read(caller, key, load);
    expect([reads.size, reads.keptJsonLength]).toEqual([2, 14]);
    const before = calls.count;
    await reads.read(caller, 'c', load); // kept
    await reads.read(caller, 'b', load); // kept
    expect(calls.count).toBe(before);
    await reads.read(caller, 'a', load); // the least recently used went out
    expect(calls.count).toBe(before + 1);
  });

  it('keeps none of many keys each asked for once', async () => {
    const reads = keptReads({ maxEntries: 4 });
    const caller = {};
    const { load } = counter({ n: 1 });
    for (let i = 0; i < 200; i++) await reads.read(caller, `page-${i}`, load);
    expect(reads.size).toBe(0);
    expect(reads.hits).toBe(0);
  });
});
