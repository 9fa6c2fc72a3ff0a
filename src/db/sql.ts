import { type AnyColumn, Column, fillPlaceholders, is, Param, Placeholder, SQL, sql } from 'drizzle-orm';
import pg from 'pg';
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
  // An expression, or one named in a subquery (a subquery's columns as the outer select reads them).
  if (is(field, SQL) || is(field, SQL.Aliased)) return true;
  if (!is(field, Column)) return false;
  if (PLAIN_COLUMN_TYPES.has(field.columnType)) return true;
  const base = (field as Column & { baseColumn?: Column }).baseColumn;
  return field.columnType === 'PgArray' && base !== undefined && PLAIN_COLUMN_TYPES.has(base.columnType);
}
const checkedSelections = new WeakSet<object>();
/** The SQL of queries built once (with placeholders) and run many times. */
const builtQueries = new WeakMap<object, { sql: string; params: unknown[] }>();

/**
 * A statement's text and parameters with one parameter per placeholder: Drizzle gives a
 * placeholder named in several places (a user's access sets, used by many predicates) a parameter
 * of its own at each place, which the client then encodes and PostgreSQL decodes each time. Each
 * later place refers to the placeholder's first parameter instead (`$n` may stand more than once
 * in a statement); the others are numbered down. Other parameters are left as they are. The text
 * is rewritten wherever `$<digits>` stands: statements built from code, which write no such text
 * in a literal, a quoted name or a comment; and a placeholder named in several places takes its
 * type from the first (each place casts it to the same type in the statements that repeat one).
 */
export function onePerPlaceholder(query: { sql: string; params: unknown[] }): {
  sql: string;
  params: unknown[];
} {
  const firstByName = new Map<string, number>();
  const params: unknown[] = [];
  /** The new number of each old parameter, from 1. */
  const renumbered: number[] = [0];
  for (const param of query.params) {
    const name = placeholderName(param);
    const first = name === undefined ? undefined : firstByName.get(name);
    if (first !== undefined) {
      renumbered.push(first);
      continue;
    }
    params.push(param);
    renumbered.push(params.length);
    if (name !== undefined) firstByName.set(name, params.length);
  }
  if (params.length === query.params.length) return query;
  const sqlText = query.sql.replace(/\$(\d+)\b/g, (whole, n: string) => {
    const to = renumbered[Number(n)];
    return to === undefined ? whole : `$${to}`;
  });
  return { sql: sqlText, params };
}

/** The name of a placeholder parameter (bare, or in a column's encoder), or undefined. */
function placeholderName(param: unknown): string | undefined {
  if (is(param, Placeholder)) return param.name;
  if (is(param, Param) && is(param.value, Placeholder)) return param.value.name;
  return undefined;
}

/** `json` and `jsonb` values as their text, every other type as node-postgres parses it. */
const JSON_AS_TEXT = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.JSON || oid === pg.types.builtins.JSONB
      ? (text: string) => text
      : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

/**
 * Runs a Drizzle select whose selection is `fields` — flat, of SQL expressions and of columns
 * node-postgres returns as Drizzle would map them (text, uuid, boolean, integer, jsonb, arrays of
 * those; timestamps through {@link isoMillis}) — and names each row's values by the keys of
 * `fields` itself. The rows are the ones Drizzle would return; what is skipped is its per-field
 * mapping of every row, which is most of the CPU of a read that returns a hundred rows. The text
 * goes through the pool like every Drizzle query, so it is prepared on each connection. A query
 * built once with `sql.placeholder`s is given their `values`; its text is kept. With `jsonAsText`,
 * `json` and `jsonb` values come as their text, for a caller that puts them in an answer as they are.
 */
export async function plainRows<
  Q extends PromiseLike<unknown[]> & { toSQL(): { sql: string; params: unknown[] } },
>(
  db: Db,
  fields: Record<string, unknown>,
  query: Q,
  values?: Record<string, unknown>,
  options: { jsonAsText?: boolean } = {},
): Promise<Awaited<Q>> {
  if (!checkedSelections.has(fields)) {
    const bad = Object.entries(fields).find(([, field]) => !isPlainField(field));
    if (bad) throw new Error(`plainRows: the field "${bad[0]}" needs Drizzle's mapping`);
    checkedSelections.add(fields);
  }
  const keys = Object.keys(fields);
  let built = values ? builtQueries.get(query) : undefined;
  if (!built) {
    built = values ? onePerPlaceholder(query.toSQL()) : query.toSQL();
    if (values) builtQueries.set(query, built);
  }
  const text = built.sql;
  const params = values ? fillPlaceholders(built.params, values) : built.params;
  // The pool, or in a transaction its connection (`drizzle()` keeps its client as `$client`).
  const client: pg.Pool | pg.PoolClient = Reflect.get(db, '$client');
  const result = await client.query<unknown[]>({
    text,
    values: params,
    rowMode: 'array',
    ...(options.jsonAsText ? { types: JSON_AS_TEXT } : {}),
  });
  return result.rows.map((values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) row[keys[i] as string] = values[i];
    return row;
  }) as Awaited<Q>;
}

/**
 * A row count (of `limit` or `offset`) as the statement's text, where Drizzle takes a number and
 * would otherwise bind a parameter (or, for an offset of the number 0, write nothing).
 */
export function rowCountInText(count: number): number {
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`not a row count: ${count}`);
  return sql.raw(String(count)) as unknown as number;
}

/**
 * How the values of a statement reach it: as parameters bound in a statement built for one
 * request ({@link INLINE_VALUES}), or as placeholders of a statement built once per shape and
 * kept ({@link StatementValues}).
 */
export interface Binder {
  /** `value` in the statement, cast to the PostgreSQL `type` (one parameter, arrays included). */
  bind(value: unknown, type: string): SQL;
  /** A choice of the statement's text that depends on the data: returned as given, and recorded. */
  choose<T extends string | number | boolean>(choice: T): T;
}

/** Values bound as parameters of a statement that is built for each request. */
export const INLINE_VALUES: Binder = {
  bind: (value, type) => sql`${sql.param(value)}::${sql.raw(type)}`,
  choose: (choice) => choice,
};

/**
 * The values of a statement built once per shape: each value becomes a placeholder (`p0`, `p1`,
 * … in the order they are bound) and every choice of text is recorded, so that `shape` names the
 * statement's text — two builds with equal shapes have equal texts — and `values` fills its
 * placeholders. A builder must take every decision that changes the text through `choose` (or
 * through the number and types of the values it binds).
 */
export class StatementValues implements Binder {
  readonly values: Record<string, unknown> = {};
  private readonly parts: string[] = [];
  private count = 0;

  bind(value: unknown, type: string): SQL {
    const name = `p${this.count++}`;
    this.values[name] = value;
    this.parts.push(type);
    return sql`${sql.placeholder(name)}::${sql.raw(type)}`;
  }

  /** A placeholder for `value` where Drizzle takes one (`limit`), uncast. */
  placeholder(value: unknown): Placeholder {
    const name = `p${this.count++}`;
    this.values[name] = value;
    this.parts.push('placeholder');
    return sql.placeholder(name);
  }

  /**
   * A row count written into the statement's text where Drizzle takes a number (`limit`): a choice
   * of the text, which the planner then knows. For a `limit` placeholder a generic plan expects a
   * tenth of the rows the scan may return, costs itself above the custom plans, and PostgreSQL
   * plans every execution anew.
   */
  rowCount(count: number): number {
    return rowCountInText(this.choose(count));
  }

  choose<T extends string | number | boolean>(choice: T): T {
    this.parts.push(`${typeof choice}:${String(choice)}`);
    return choice;
  }

  /** What decides the statement's text: the choices and the types of the values, in order. */
  get shape(): string {
    return JSON.stringify(this.parts);
  }
}

/**
 * `column` is one of `values` (of the PostgreSQL `type`), as values of `b`: none is `false`, one
 * an equality (which the planner matches to an index's leading column and its order, as it does
 * `in ($1)`), more an `= any` of one array parameter, whatever their number.
 */
export function oneOf(column: AnyColumn | SQL, values: readonly unknown[], type: string, b: Binder): SQL {
  const size = b.choose(values.length === 0 ? 'none' : values.length === 1 ? 'one' : 'many');
  if (size === 'none') return sql`false`;
  if (size === 'one') return sql`${column} = ${b.bind(values[0], type)}`;
  return sql`${column} = any(${b.bind(values, `${type}[]`)})`;
}

/**
 * `column` is one of `values`, each value its own parameter (`in ($1, $2)`): the text names how
 * many there are. For short lists of a few known values (statuses, severities), whose generic
 * plan the planner estimates from the number of values; an array parameter is estimated as
 * ten values, which made the filtered listing plan every request again.
 */
export function inList(column: AnyColumn | SQL, values: readonly unknown[], type: string, b: Binder): SQL {
  b.choose(values.length);
  if (values.length === 0) return sql`false`;
  return sql`${column} in (${sql.join(
    values.map((value) => b.bind(value, type)),
    sql`, `,
  )})`;
}

/**
 * Statements built once per database handle and key (a variant of the query, or `''` for a query
 * with one form) and kept: a request only fills in their placeholders, and the text is the same
 * for every request of a key, so each pooled connection prepares it once. Past `maxKeys` keys on
 * one handle a statement is built for its request and not kept (bounded memory).
 */
export function keptStatements<T, Handle extends object = Db>(
  maxKeys = 512,
): (db: Handle, key: string, build: () => T) => T {
  const byDb = new WeakMap<Handle, Map<string, T>>();
  return (db, key, build) => {
    let byKey = byDb.get(db);
    if (!byKey) {
      byKey = new Map();
      byDb.set(db, byKey);
    }
    let built = byKey.get(key);
    if (built === undefined) {
      built = build();
      if (byKey.size < maxKeys) byKey.set(key, built);
    }
    return built;
  };
}
