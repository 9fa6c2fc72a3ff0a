import { fillPlaceholders, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { keptStatements, onePerPlaceholder } from './sql.ts';

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

describe('onePerPlaceholder', () => {
  const dialect = new PgDialect();

  it('gives a placeholder named in several places one parameter, and numbers the others down', () => {
    // Twelve parameters before the repeats, so that $1 and $11, $12 are told apart.
    const first = Array.from({ length: 10 }, (_, i) => sql`${sql.param(i)}::int`);
    const query = dialect.sqlToQuery(
      sql`select ${sql.join(first, sql`, `)}, ${sql.placeholder('a')}::uuid, ${sql.placeholder('b')}::text,
        ${sql.placeholder('a')}::uuid, ${sql.param(99)}::int, ${sql.placeholder('b')}::text, ${sql.placeholder('a')}::uuid`,
    );
    expect(query.params).toHaveLength(16);
    const one = onePerPlaceholder(query);
    expect(one.params).toHaveLength(13);
    expect(one.sql).toBe(
      `select ${first.map((_, i) => `$${i + 1}::int`).join(', ')}, $11::uuid, $12::text,
        $11::uuid, $13::int, $12::text, $11::uuid`,
    );
    expect(fillPlaceholders(one.params, { a: 'an-id', b: 'text' })).toEqual([
      ...first.map((_, i) => i),
      'an-id',
      'text',
      99,
    ]);
  });

  it('leaves a statement without repeated placeholders as it is', () => {
    const query = dialect.sqlToQuery(sql`select ${sql.placeholder('a')}::int, ${sql.param(1)}::int`);
    expect(onePerPlaceholder(query)).toBe(query);
  });
});
