import { describe, expect, it } from 'vitest';
import { createKeptReads } from './kept-reads.ts';

function keptReads(options: { maxEntries?: number; maxJsonLength?: number; now?: () => number } = {}) {
  const reads = createKeptReads<{ n: number }>({
    tables: ['findings', 'labels'],
    maxEntries: options.maxEntries ?? 8,
    maxJsonLength: options.maxJsonLength,
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
  it('keeps a value per caller and key, and hands out the same object', async () => {
    const reads = keptReads();
    const source = { n: 1 };
    const { calls, load } = counter(source);
    const alice = {};
    const first = await reads.read(alice, 'q', load);
    const second = await reads.read(alice, 'q', load);
    expect(second).toBe(first);
    expect(calls.count).toBe(1);
    expect(reads.hits).toBe(1);
    // Another key, another caller: read again.
    await reads.read(alice, 'other', load);
    await reads.read({}, 'q', load);
    expect(calls.count).toBe(3);
  });

  it('forgets on a notification of a table it reads, not of another', async () => {
    const reads = keptReads();
    const source = { n: 1 };
    const { calls, load } = counter(source);
    const caller = {};
    await reads.read(caller, 'q', load);
    source.n = 2;
    reads.changed('scans');
    expect((await reads.read(caller, 'q', load)).n).toBe(1);
    reads.changed('labels');
    expect((await reads.read(caller, 'q', load)).n).toBe(2);
    expect(calls.count).toBe(2);
  });

  it('does not store what was read before a notification that arrived while it ran', async () => {
    const reads = keptReads();
    const caller = {};
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
    expect((await reads.read(caller, 'q', async () => ({ n: 2 }))).n).toBe(2);
    expect(reads.size).toBe(1);
  });

  it('keeps nothing while disabled, nor errors, nor values over the size limit', async () => {
    const reads = keptReads({ maxJsonLength: 20 });
    const caller = {};
    reads.setEnabled(false);
    const { calls, load } = counter({ n: 1 });
    await reads.read(caller, 'q', load);
    await reads.read(caller, 'q', load);
    expect(calls.count).toBe(2);
    expect(reads.size).toBe(0);

    reads.setEnabled(true);
    await expect(
      reads.read(caller, 'q', async () => {
        throw new Error('bad request');
      }),
    ).rejects.toThrow('bad request');
    expect(reads.size).toBe(0);

    const big = { n: 1, text: 'x'.repeat(100) };
    let bigCalls = 0;
    const loadBig = async () => {
      bigCalls += 1;
      return big;
    };
    await reads.read(caller, 'big', loadBig);
    await reads.read(caller, 'big', loadBig);
    expect(bigCalls).toBe(2);
    expect(reads.size).toBe(0);
  });

  it('keeps at most maxEntries values and trusts none longer than its age limit', async () => {
    let clock = 0;
    const reads = keptReads({ maxEntries: 2, now: () => clock });
    const caller = {};
    const { calls, load } = counter({ n: 1 });
    await reads.read(caller, 'a', load);
    await reads.read(caller, 'b', load);
    await reads.read(caller, 'c', load);
    expect(reads.size).toBe(2);
    await reads.read(caller, 'a', load); // the least recently used went out
    expect(calls.count).toBe(4);
    clock = 61_000;
    await reads.read(caller, 'a', load);
    expect(calls.count).toBe(5);
  });
});
