import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../errors.ts';
import { createCursorCodec, hashFilters, isEpochMicrosText, isInt4Text, timeAndIdAfter } from './cursor.ts';
import { isIsoMicros } from './list-params.ts';

function expectInvalidCursor(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(isAppError(err, 'INVALID_CURSOR')).toBe(true);
    return;
  }
  throw new Error('expected INVALID_CURSOR');
}

const codec = createCursorCodec(randomBytes(32));

/** Re-encodes the payload of a cursor with `edit` applied, keeping its signature. */
function tamper(cursor: string, edit: (payload: { k: unknown[]; f: string }) => void): string {
  const [body, mac] = cursor.split('.') as [string, string];
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  edit(payload);
  return `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
}

describe('pagination cursor', () => {
  it('round-trips the keys under the same filters', () => {
    const f = hashFilters({ q: 'acme', order: 'created_at_desc' });
    const keys = ['2026-01-01T00:00:00.123456Z', '0b9c6a0e-7b43-4bb8-9b8b-1f8d3c2b6a11', null, 3];
    const cursor = codec.encode(keys, f);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(codec.decode(cursor, f)).toEqual(keys);
  });

  it('hashes filters independently of key order and ignores undefined members', () => {
    expect(hashFilters({ a: 1, b: [1, 2], c: undefined })).toBe(hashFilters({ b: [1, 2], a: 1 }));
    expect(hashFilters({ a: 1 })).not.toBe(hashFilters({ a: 2 }));
    expect(hashFilters({ a: [1, 2] })).not.toBe(hashFilters({ a: [2, 1] }));
    expect(hashFilters({ a: null })).not.toBe(hashFilters({}));
  });

  it('refuses a cursor made under other filters', () => {
    const cursor = codec.encode(['x'], hashFilters({ q: 'a' }));
    expectInvalidCursor(() => codec.decode(cursor, hashFilters({ q: 'b' })));
  });

  it('refuses an edited key, an edited filter hash, a foreign cursor and an unsigned one', () => {
    const f = hashFilters({ q: 'a' });
    const cursor = codec.encode(['41', '0b9c6a0e-7b43-4bb8-9b8b-1f8d3c2b6a11'], f);
    expectInvalidCursor(() =>
      codec.decode(
        tamper(cursor, (p) => (p.k[0] = '40')),
        f,
      ),
    );
    expectInvalidCursor(() =>
      codec.decode(
        tamper(cursor, (p) => (p.f = hashFilters({ q: 'b' }))),
        hashFilters({ q: 'b' }),
      ),
    );
    const foreign = createCursorCodec(randomBytes(32)).encode(['41', 'x'], f);
    expectInvalidCursor(() => codec.decode(foreign, f));
    expectInvalidCursor(() => codec.decode(cursor.split('.')[0]!, f));
    // A character inside the MAC (the last base64url character also carries padding bits, which
    // decode to the same bytes whatever they are).
    const at = cursor.length - 5;
    const flipped = cursor[at] === 'A' ? 'B' : 'A';
    expectInvalidCursor(() => codec.decode(`${cursor.slice(0, at)}${flipped}${cursor.slice(at + 1)}`, f));
  });

  it('refuses garbage, empty and oversized cursors', () => {
    const f = hashFilters({});
    for (const bad of [
      '',
      'not a cursor!',
      'AAAA',
      'AAAA.BBBB',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('{"k":"x","f":"y"}').toString('base64url'),
      'A'.repeat(5000),
      `${'A'.repeat(3000)}.${'B'.repeat(22)}`,
    ]) {
      expectInvalidCursor(() => codec.decode(bad, f));
    }
  });

  it('allows a cursor at the start (no keys)', () => {
    const f = hashFilters({ x: 1 });
    expect(codec.decode(codec.encode([], f), f)).toEqual([]);
  });
});

describe('cursor key ranges', () => {
  it('bounds integer keys by int4', () => {
    expect(isInt4Text('2147483647')).toBe(true);
    expect(isInt4Text('-2147483648')).toBe(true);
    expect(isInt4Text('9999999999')).toBe(false);
    expect(isInt4Text('2147483648')).toBe(false);
    expect(isInt4Text(12)).toBe(false);
  });

  it('bounds timestamp keys to years 1 to 9999 in microseconds', () => {
    expect(isEpochMicrosText('1767225600000000')).toBe(true);
    expect(isEpochMicrosText('9999999999999999999')).toBe(false);
    expect(isEpochMicrosText('-9999999999999999999')).toBe(false);
    expect(isEpochMicrosText('253402300800000000')).toBe(false);
  });

  it('accepts only real instants as ISO keys', () => {
    expect(isIsoMicros('2026-01-31T23:59:59.999999Z')).toBe(true);
    expect(isIsoMicros('2026-13-45T99:99:99.000000Z')).toBe(false);
    expect(isIsoMicros('2026-02-30T00:00:00.000000Z')).toBe(false);
    expect(isIsoMicros('0000-01-01T00:00:00.000000Z')).toBe(false);
  });

  it('reads a (timestamp, id) position, and refuses a cursor of another shape', () => {
    const f = hashFilters({ list: 'entries' });
    const id = '6f1c1a52-8a43-4f59-9b6f-0d4f3e0a8c11';
    const at = '2026-11-24T23:59:59.123456Z';
    expect(timeAndIdAfter(codec, undefined, f)).toBeUndefined();
    expect(timeAndIdAfter(codec, codec.encode([], f), f)).toBeUndefined();
    expect(timeAndIdAfter(codec, codec.encode([at, id], f), f)).toEqual({ at, id });
    for (const keys of [
      [at],
      [at, id, 1],
      ['2026-13-01T00:00:00.000000Z', id],
      [at, 'not-a-uuid'],
      [1, id],
    ]) {
      expect(() => timeAndIdAfter(codec, codec.encode(keys, f), f)).toThrow(
        expect.objectContaining({ code: 'INVALID_CURSOR' }),
      );
    }
  });
});
