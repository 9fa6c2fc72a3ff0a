import { describe, expect, it } from 'vitest';
import { isAppError } from '../../errors.ts';
import { decodeCursor, encodeCursor, hashFilters } from './cursor.ts';

function expectInvalidCursor(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(isAppError(err, 'INVALID_CURSOR')).toBe(true);
    return;
  }
  throw new Error('expected INVALID_CURSOR');
}

describe('pagination cursor', () => {
  it('round-trips the keys under the same filters', () => {
    const f = hashFilters({ q: 'acme', order: 'created_at_desc' });
    const keys = ['2026-01-01T00:00:00.123456Z', '0b9c6a0e-7b43-4bb8-9b8b-1f8d3c2b6a11', null, 3];
    const cursor = encodeCursor(keys, f);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, f)).toEqual(keys);
  });

  it('hashes filters independently of key order and ignores undefined members', () => {
    expect(hashFilters({ a: 1, b: [1, 2], c: undefined })).toBe(hashFilters({ b: [1, 2], a: 1 }));
    expect(hashFilters({ a: 1 })).not.toBe(hashFilters({ a: 2 }));
    expect(hashFilters({ a: [1, 2] })).not.toBe(hashFilters({ a: [2, 1] }));
    expect(hashFilters({ a: null })).not.toBe(hashFilters({}));
  });

  it('refuses a cursor made under other filters', () => {
    const cursor = encodeCursor(['x'], hashFilters({ q: 'a' }));
    expectInvalidCursor(() => decodeCursor(cursor, hashFilters({ q: 'b' })));
  });

  it('refuses garbage, empty and oversized cursors', () => {
    const f = hashFilters({});
    for (const bad of [
      '',
      'not a cursor!',
      'AAAA',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('{"k":"x","f":"y"}').toString('base64url'),
      Buffer.from(JSON.stringify({ k: [], f: 7 })).toString('base64url'),
      'A'.repeat(5000),
    ]) {
      expectInvalidCursor(() => decodeCursor(bad, f));
    }
  });

  it('allows a cursor at the start (no keys)', () => {
    const f = hashFilters({ x: 1 });
    expect(decodeCursor(encodeCursor([], f), f)).toEqual([]);
  });
});
