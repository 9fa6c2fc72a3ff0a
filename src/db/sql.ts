import { type AnyColumn, Column, fillPlaceholders, is, SQL, sql } from 'drizzle-orm';
import type pg from 'pg';
import type { Db } from './client.ts';

/** `toISOString()`'s format in PostgreSQL's `to_char` (milliseconds, truncated as a JS `Date` is). */
export const ISO_MILLIS_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

/**
 * A timestamp column (or expression) as the API writes it — `2026-01-02T03:04:05.006Z`, or null —
 * formatted by PostgreSQL: a read that returns many rows skips parsing every timestamp into a
 * `Date` and formatting it again.
 */
export function isoMillis<T extends string | null = string | null>(value: AnyColumn | SQL): SQL<T> {
  return sql<T>`to_char(${value} at time zone 'UTC', ${sql.raw(`'${ISO_MILLIS_FORMAT}'`)})`;
}

/** Column types whose value node-postgres already returns as Drizzle would map it. */
const PLAIN_COLUMN_TYPES = new Set([
  'PgUUID',
  'PgText',
  'PgVarchar',
  'PgBoolean',
  'PgInteger',
  'PgSmallInt',
  'PgJsonb',
]);

function isPlainField(field: unknown): boolean {
  if (is(field, SQL)) return true;
  if (!is(field, Column)) return false;
  if (PLAIN_COLUMN_TYPES.has(field.columnType)) return true;
  const base = (field as Column & { baseColumn?: Column }).baseColumn;
  return field.columnType === 'PgArray' && base !== undefined && PLAIN_COLUMN_TYPES.has(base.columnType);
}
const checkedSelections = new WeakSet<object>();
/** The SQL of queries built once (with placeholders) and run many times. */
const builtQueries = new WeakMap<object, { sql: string; params: unknown[] }>();

/**
 * Runs a Drizzle select whose selection is `fields` — flat, of SQL expressions and of columns
 * node-postgres returns as Drizzle would map them (text, uuid, boolean, integer, jsonb, arrays of
 * those; timestamps through {@link isoMillis}) — and names each row's values by the keys of
 * `fields` itself. The rows are the ones Drizzle would return; what is skipped is its per-field
 * mapping of every row, which is most of the CPU of a read that returns a hundred rows. The text
 * goes through the pool like every Drizzle query, so it is prepared on each connection. A query
 * built once with `sql.placeholder`s is given their `values`; its text is kept.
 */
export async function plainRows<
  Q extends PromiseLike<unknown[]> & { toSQL(): { sql: string; params: unknown[] } },
>(db: Db, fields: Record<string, unknown>, query: Q, values?: Record<string, unknown>): Promise<Awaited<Q>> {
  if (!checkedSelections.has(fields)) {
    const bad = Object.entries(fields).find(([, field]) => !isPlainField(field));
    if (bad) throw new Error(`plainRows: the field "${bad[0]}" needs Drizzle's mapping`);
    checkedSelections.add(fields);
  }
  const keys = Object.keys(fields);
  let built = values ? builtQueries.get(query) : undefined;
  if (!built) {
    built = query.toSQL();
    if (values) builtQueries.set(query, built);
  }
  const text = built.sql;
  const params = values ? fillPlaceholders(built.params, values) : built.params;
  // The pool, or in a transaction its connection (`drizzle()` keeps its client as `$client`).
  const client: pg.Pool | pg.PoolClient = Reflect.get(db, '$client');
  const result = await client.query<unknown[]>({ text, values: params, rowMode: 'array' });
  return result.rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) row[keys[i] as string] = values[i];
    return row;
  }) as Awaited<Q>;
}
