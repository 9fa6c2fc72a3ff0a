import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';
import { canonicalJson, isUuid } from '../../strings.ts';
import { isIsoMicros } from './list-params.ts';

/**
 * Opaque, signed keyset cursors for v0 listings (`next` / `nextValue`).
 *
 * A cursor is `<payload>.<mac>`: the payload is base64url JSON `{k: [sortKey..., id], f: filterHash}`
 * (the sort key and the id of the last row returned, and a hash of the filters and ordering it was
 * made under); the mac is an HMAC-SHA256 of the payload under a key derived from the service's
 * secret key (`VIGIL_SECRET_KEY`), truncated to 128 bits. An edited, forged or foreign cursor
 * (another deployment's) fails the mac; one made under other filters fails the hash. Both are
 * `INVALID_CURSOR` (400). The keys of a genuine cursor are still checked for type and range by
 * each listing before any SQL.
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

/**
 * A short, stable hash of the filters and ordering of a listing. Normalise before hashing what
 * should count as equal (for example sort a set-like array); `undefined` members are ignored, so
 * an absent filter and an explicit `undefined` hash the same. Do not include `limit`: a client may
 * change the page size between pages.
 */
export function hashFilters(filters: object): string {
  return createHash('sha256').update(canonicalJson(filters), 'utf8').digest('base64url').slice(0, 22);
}

/** Signs and checks cursors under one key; the container makes one from the secret key. */
export interface CursorCodec {
  /** Encodes the keys of the last row returned (sort key values, then the id) as a signed cursor. */
  encode(keys: unknown[], filterHash: string): string;
  /**
   * Decodes a cursor this codec signed under the same filter hash and returns its keys. Throws
   * `INVALID_CURSOR` for anything else. The caller still checks the type and range of each key.
   */
  decode(cursor: string, filterHash: string): unknown[];
  /** {@link pageOf} with this codec's cursors. */
  pageOf<T>(
    rows: T[],
    options: { limit: number; filterHash: string; given?: string; keyOf: (row: T) => unknown[] },
  ): { items: T[]; nextValue: string | null };
}

const MAC_BYTES = 16;

/** A codec whose key is derived from `secretKey` (never the secret key itself). */
export function createCursorCodec(secretKey: Buffer): CursorCodec {
  const key = createHmac('sha256', secretKey).update('vigil/pagination-cursor/v1').digest();
  const mac = (payload: string): Buffer =>
    createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  const codec: CursorCodec = {
    encode(keys, filterHash) {
      const payload: CursorPayload = { k: keys, f: filterHash };
      const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    decode(cursor, filterHash) {
      if (
        cursor.length === 0 ||
        cursor.length > MAX_CURSOR_LENGTH ||
        !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(cursor)
      ) {
        throw invalidCursor();
      }
      const [body, signature] = cursor.split('.') as [string, string];
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(body))) throw invalidCursor();
      return readPayload(body, filterHash);
    },
    pageOf(rows, options) {
      return pageOf(rows, options, codec);
    },
  };
  return codec;
}

function readPayload(body: string, filterHash: string): unknown[] {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
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
  codec: Pick<CursorCodec, 'encode'>,
): { items: T[]; nextValue: string | null } {
  const items = rows.slice(0, options.limit);
  if (rows.length <= options.limit) return { items, nextValue: null };
  const last = items[items.length - 1];
  if (last === undefined) return { items, nextValue: options.given ?? codec.encode([], options.filterHash) };
  return { items, nextValue: codec.encode(options.keyOf(last), options.filterHash) };
}

/**
 * The position a `next` cursor gives in a listing keyed by a timestamp with microseconds
 * (`ISO_MICROS_FORMAT`) and the row's id: undefined without a cursor or for one at the start;
 * `INVALID_CURSOR` for keys of any other shape.
 */
export function timeAndIdAfter(
  codec: Pick<CursorCodec, 'decode'>,
  next: string | undefined,
  filterHash: string,
): { at: string; id: string } | undefined {
  const keys = next === undefined ? [] : codec.decode(next, filterHash);
  if (keys.length === 0) return undefined;
  const [at, id] = keys;
  if (keys.length !== 2 || !isIsoMicros(at) || typeof id !== 'string' || !isUuid(id)) throw invalidCursor();
  return { at, id };
}

const INT4 = { min: -2_147_483_648, max: 2_147_483_647 };

/** True for a decimal integer string within PostgreSQL's `integer`. */
export function isInt4Text(value: unknown): value is string {
  if (typeof value !== 'string' || !/^-?[0-9]{1,10}$/.test(value)) return false;
  const n = Number(value);
  return n >= INT4.min && n <= INT4.max;
}

/** Microseconds since the epoch of 0001-01-01 and of 9999-12-31T23:59:59.999999Z. */
const MICROS_RANGE = { min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n };

/** True for integer microseconds since the epoch within years 1–9999 (a timestamptz key). */
export function isEpochMicrosText(value: unknown): value is string {
  if (typeof value !== 'string' || !/^-?[0-9]{1,19}$/.test(value)) return false;
  const n = BigInt(value);
  return n >= MICROS_RANGE.min && n <= MICROS_RANGE.max;
}
