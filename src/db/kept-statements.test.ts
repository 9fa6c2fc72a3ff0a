import { describe, expect, it } from 'vitest';
import { keptStatements } from './sql.ts';

describe('keptStatements', () => {
  it('builds once per handle and key, and keeps no more than its bound of keys per handle', () => {
    const kept = keptStatements<{ n: number }, object>(2);
    let builds = 0;
    const build = () => ({ n: ++builds });
    const one = {};
    const other = {};
    const a = kept(one, 'a', build);
    expect(kept(one, 'a', build)).toBe(a);
    expect(builds).toBe(1);
    // Another handle has its own statements.
    expect(kept(other, 'a', build)).not.toBe(a);
    expect(builds).toBe(2);
    kept(one, 'b', build);
    // Past the bound: built for each call, not kept; the kept ones stay.
    const c = kept(one, 'c', build);
    expect(kept(one, 'c', build)).not.toBe(c);
    expect(kept(one, 'a', build)).toBe(a);
    expect(builds).toBe(5);
  });
});
