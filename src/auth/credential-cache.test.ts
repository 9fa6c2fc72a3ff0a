import { describe, expect, it } from 'vitest';
import { createCredentialCache } from './credential-cache.ts';

const now = new Date('2026-01-01T00:00:00Z');

describe('credential cache', () => {
  it('keeps nothing until enabled, and forgets everything when turned off or invalidated', () => {
    const cache = createCredentialCache<string>({ maxEntries: 10 });
    cache.store('a', cache.begin(), { value: 'A', expiresAt: null });
    expect(cache.get('a', now)).toBeUndefined();
    cache.setEnabled(true);
    cache.store('a', cache.begin(), { value: 'A', expiresAt: null });
    expect(cache.get('a', now)).toBe('A');
    cache.invalidate();
    expect(cache.get('a', now)).toBeUndefined();
    cache.store('a', cache.begin(), { value: 'A', expiresAt: null });
    cache.setEnabled(false);
    expect(cache.get('a', now)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops a value read before an invalidation that arrived during the read', () => {
    const cache = createCredentialCache<string>({ maxEntries: 10 });
    cache.setEnabled(true);
    const generation = cache.begin();
    cache.invalidate(); // the notification of a change lands while the lookup is in the database
    cache.store('a', generation, { value: 'stale', expiresAt: null });
    expect(cache.get('a', now)).toBeUndefined();
  });

  it('treats a hit at or after the credential expiry, or older than its longest age, as a miss', () => {
    let clock = 0;
    const cache = createCredentialCache<string>({ maxEntries: 10, maxAgeMs: 1_000, now: () => clock });
    cache.setEnabled(true);
    cache.store('a', cache.begin(), { value: 'A', expiresAt: new Date(now.getTime() + 5_000) });
    expect(cache.get('a', new Date(now.getTime() + 4_999))).toBe('A');
    expect(cache.get('a', new Date(now.getTime() + 5_000))).toBeUndefined();
    cache.store('b', cache.begin(), { value: 'B', expiresAt: null });
    clock = 1_001;
    expect(cache.get('b', now)).toBeUndefined();
  });

  it('evicts the least recently used entry beyond its size, and keeps nothing with size 0', () => {
    const cache = createCredentialCache<string>({ maxEntries: 2 });
    cache.setEnabled(true);
    cache.store('a', cache.begin(), { value: 'A', expiresAt: null });
    cache.store('b', cache.begin(), { value: 'B', expiresAt: null });
    expect(cache.get('a', now)).toBe('A'); // a is now the most recently used
    cache.store('c', cache.begin(), { value: 'C', expiresAt: null });
    expect([cache.get('a', now), cache.get('b', now), cache.get('c', now)]).toEqual(['A', undefined, 'C']);
    const off = createCredentialCache<string>({ maxEntries: 0 });
    off.setEnabled(true);
    expect(off.enabled).toBe(false);
    off.store('a', off.begin(), { value: 'A', expiresAt: null });
    expect(off.get('a', now)).toBeUndefined();
  });

  it('keeps the weights of its entries under maxWeight, least recently used out', () => {
    const cache = createCredentialCache<string>({ maxEntries: 10, maxWeight: 10 });
    cache.setEnabled(true);
    cache.store('a', cache.begin(), { value: 'A', expiresAt: null, weight: 4 });
    cache.store('b', cache.begin(), { value: 'B', expiresAt: null, weight: 4 });
    expect(cache.weight).toBe(8);
    cache.store('c', cache.begin(), { value: 'C', expiresAt: null, weight: 4 });
    expect([cache.get('a', now), cache.get('b', now), cache.get('c', now)]).toEqual([undefined, 'B', 'C']);
    expect(cache.weight).toBe(8);
    // Replacing an entry counts its new weight only; one heavier than the whole budget is not kept.
    cache.store('b', cache.begin(), { value: 'B2', expiresAt: null, weight: 1 });
    expect(cache.weight).toBe(5);
    cache.store('d', cache.begin(), { value: 'D', expiresAt: null, weight: 11 });
    expect([cache.get('b', now), cache.get('c', now), cache.get('d', now)]).toEqual(['B2', 'C', undefined]);
    cache.invalidate('test');
    expect([cache.size, cache.weight]).toEqual([0, 0]);
  });
});
