import { createHash } from 'node:crypto';
import { AppError } from '../../errors.ts';

/**
 * Opaque keyset cursors for v0 listings (`next` / `nextValue`).
 *
 * A cursor is base64url JSON `{k: [sortKey..., id], f: filterHash}`: the sort key and the id of the
 * last row returned, and a hash of the filters and ordering it was made under. Decoding it under
 * other filters, or decoding anything we did not make, is `INVALID_CURSOR` (400) — reusing a cursor
 * with other filters would otherwise skip or repeat rows silently.
 *
 * `k` may be empty: a cursor "at the start" (what a `limit=0` page hands back, so that the next
 * request continues from the first row).
 */

interface CursorPayload {
  k: unknown[];
  f: string;
}

/** Largest cursor accepted; a real one is a few hundred characters. */
const MAX_CURSOR_LENGTH = 2048;

/** Canonical JSON: object keys sorted, `undefined` members dropped, so equal filters hash equally. */
function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * A short, stable hash of the filters and ordering of a listing. Normalise before hashing what
 * should count as equal (for example sort a set-like array); `undefined` members are ignored, so
 * an absent filter and an explicit `undefined` hash the same. Do not include `limit`: a client may
 * change the page size between pages.
 */
export function hashFilters(filters: object): string {
  return createHash('sha256').update(canonicalJson(filters), 'utf8').digest('base64url').slice(0, 22);
}

/** Encodes the keys of the last row returned (sort key values, then the id) as an opaque cursor. */
export function encodeCursor(keys: unknown[], filterHash: string): string {
  const payload: CursorPayload = { k: keys, f: filterHash };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by `encodeCursor` under the same filter hash and returns its keys.
 * Throws `INVALID_CURSOR` for anything else. The caller still checks the type of each key.
 */
export function decodeCursor(cursor: string, filterHash: string): unknown[] {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalidCursor();
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw invalidCursor();
  const { k, f } = payload as Partial<CursorPayload>;
  if (!Array.isArray(k) || typeof f !== 'string') throw invalidCursor();
  if (f !== filterHash) {
    throw new AppError('INVALID_CURSOR', {
      message:
        "The 'next' cursor was made for other filters or another ordering; repeat the first request's filters or start again without 'next'.",
      details: { field: 'next' },
    });
  }
  return k;
}

/** The error for a cursor that is not ours or does not fit the listing (also for callers' key checks). */
export function invalidCursor(): AppError {
  return new AppError('INVALID_CURSOR', {
    message: "The 'next' cursor is not valid; pass the nextValue of the previous page unchanged.",
    details: { field: 'next' },
  });
}

/**
 * Cuts a page from rows read with `limit + 1` and makes its `nextValue`: null when no row follows,
 * else the cursor of the last row returned. A `limit` of 0 returns no rows and hands back a cursor
 * at the same position (the given one, or the start), so that paging goes on from there.
 */
export function pageOf<T>(
  rows: T[],
  options: { limit: number; filterHash: string; given?: string; keyOf: (row: T) => unknown[] },
): { items: T[]; nextValue: string | null } {
  const items = rows.slice(0, options.limit);
  if (rows.length <= options.limit) return { items, nextValue: null };
  const last = items[items.length - 1];
  if (last === undefined) return { items, nextValue: options.given ?? encodeCursor([], options.filterHash) };
  return { items, nextValue: encodeCursor(options.keyOf(last), options.filterHash) };
}
