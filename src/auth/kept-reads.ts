import { type CredentialCache, createCredentialCache } from './credential-cache.ts';

/**
 * Answers of reads (list pages, scan statuses, credit accounts) kept in memory per caller, kept
 * right by PostgreSQL notifications.
 *
 * Every statement that changes one of the tables a kept read reads notifies `vigil_reads` at
 * commit with the table's name (migration 0019); every process forgets the kept values of the
 * reads that name that table when the notification arrives. Changes of credentials and
 * memberships arrive on `vigil_credentials`, which forgets every kept read as well. A change
 * committed by the process is forgotten there at its commit, table by table like the others,
 * before the request that made it answers (`Database.onOwnNotify`), so a client sees its own
 * write at once on the replica that made it, and within the notification's delay on the others.
 * A table whose rows concern one user's reads only (`comment_reads`, migration 0022) names the
 * user too, and only that user's values are forgotten; the tables of findings and what hangs on
 * them (migration 0023) name the company, and only values read for callers who may see that
 * company's findings (`companiesOf`) are forgotten. While the listening connection is down
 * nothing is kept, and nothing read before a notification is stored after it (the credential
 * cache's generations).
 *
 * A value is kept per caller: per resolved actor object, which the credential cache hands to every
 * request of a credential until a credential notification replaces it. An actor resolved
 * before such a change is never handed out after it, so nothing it read can be found again.
 * A value is kept from the second time it is asked for (among the last requests that were not
 * answered from memory), so that reads of pages asked for once do not push out the kept ones.
 * Errors are not kept.
 */

/** The channel migration 0019's triggers notify, with the changed table's name as payload. */
export const READS_CHANNEL = 'vigil_reads';

export interface KeptReadsOptions<T = unknown> {
  /** Every table the read's statements read (checked against their plans by a test). */
  tables: readonly string[];
  /** Values kept at most (least recently used out); 0 keeps none. */
  maxEntries: number;
  /** The longest a value is trusted even without a notification. */
  maxAgeMs?: number;
  /** Values whose JSON is longer than this many characters are not kept. */
  maxJsonLength?: number;
  /** The most characters of JSON the kept values add up to (least recently used out). */
  maxTotalJsonLength?: number;
  /**
   * How many characters of JSON a value answers with (by default `JSON.stringify`'s): a value that
   * holds its answer's JSON as texts (a page of findings) says so itself, since stringifying it
   * would escape every quote of those texts again.
   */
  jsonLengthOf?: (value: T) => number;
  now?: () => number;
}

export interface KeptReads<T> {
  /** The tables whose notifications make this read's values stale. */
  readonly tables: ReadonlySet<string>;
  /**
   * The kept value for this caller and key, or `load()`'s, which is kept when the key was asked
   * for before and no notification came in while it ran. The same kept object is handed out until
   * it is forgotten: callers must not change it. `companiesOf`, asked once `load()` has answered,
   * names the companies whose rows the value depends on (absent or `null`: any company's).
   */
  read(
    actor: object,
    key: string,
    load: () => Promise<T>,
    companiesOf?: () => ReadonlySet<string> | null,
  ): Promise<T>;
  /**
   * A `vigil_reads` notification arrived: `<table>` (any row of it changed), `<table>:u:<user
   * id>` (only rows that concern that user's reads; migration 0022) or `<table>:c:<company id>`
   * (only rows of that company; migration 0023).
   */
  changed(payload: string): void;
  /** Forgets everything (a credential notification arrived). */
  invalidate(reason?: string): void;
  /** Turns keeping on (the listener is attached) or off; both forget everything. */
  setEnabled(enabled: boolean): void;
  readonly size: number;
  /** Characters of JSON of the kept values, added up. */
  readonly keptJsonLength: number;
  readonly enabled: boolean;
  /** Reads answered from memory since the process started (for operators and tests). */
  readonly hits: number;
  /** Reads that ran their statements since the process started. */
  readonly misses: number;
  /** The payloads of the last `vigil_reads` notifications, newest last (for operators and tests). */
  readonly recentChanges: readonly string[];
}

/** The user a value was read for ('' for service keys). */
function userOf(actor: object): string {
  const userId: unknown = Reflect.get(actor, 'userId');
  return typeof userId === 'string' ? userId : '';
}

/**
 * A kept value, with what a scoped notification is compared to: the user it was read for, and the
 * companies whose rows it depends on (`null`: any company's).
 */
interface Kept<T> {
  value: T;
  user: string;
  companies: ReadonlySet<string> | null;
}

/** A number per actor object, for cache keys: an actor replaced after a change gets a new one. */
const actorSerials = new WeakMap<object, number>();
let lastActorSerial = 0;

function serialOf(actor: object): number {
  let serial = actorSerials.get(actor);
  if (serial === undefined) {
    lastActorSerial += 1;
    serial = lastActorSerial;
    actorSerials.set(actor, serial);
  }
  return serial;
}

const DEFAULT_MAX_JSON_LENGTH = 512 * 1024;
const DEFAULT_MAX_TOTAL_JSON_LENGTH = 8 * 1024 * 1024;
/** Kept values have no expiry of their own (only the age limit): the clock `get` compares with. */
const NO_EXPIRY = new Date(0);

/**
 * Pages each list read keeps per process. Each value is at most 512 Ki characters of JSON and all
 * of a read's values at most 8 Mi characters; with the kept response body beside each, a read
 * holds at most some 16 MB (a typical page of 20 findings is ~30 K characters: 64 of them ~2 MB).
 */
export const KEPT_PAGES_PER_READ = 64;

export function createKeptReads<T>(options: KeptReadsOptions<T>): KeptReads<T> {
  const cache: CredentialCache<Kept<T>> = createCredentialCache<Kept<T>>({
    maxEntries: options.maxEntries,
    maxAgeMs: options.maxAgeMs,
    maxWeight: options.maxTotalJsonLength ?? DEFAULT_MAX_TOTAL_JSON_LENGTH,
    now: options.now,
  });
  const tables = new Set(options.tables);
  const maxJsonLength = options.maxJsonLength ?? DEFAULT_MAX_JSON_LENGTH;
  let hits = 0;
  let misses = 0;
  const recentChanges: string[] = [];
  /** Keys asked for once and not kept yet, oldest first (bounded). */
  const asked = new Map<string, true>();
  const askedLimit = options.maxEntries * 4;
  return {
    tables,
    async read(actor, key, load, companiesOf) {
      if (!cache.enabled) {
        misses += 1;
        return load();
      }
      const fullKey = `${serialOf(actor)}\n${key}`;
      const kept = cache.get(fullKey, NO_EXPIRY);
      if (kept !== undefined) {
        hits += 1;
        return kept.value;
      }
      misses += 1;
      // A page is kept when it is asked for again: one read once (paging through a long list)
      // neither pushes out the kept pages nor pays for keeping its own.
      if (!asked.delete(fullKey)) {
        asked.set(fullKey, true);
        if (asked.size > askedLimit) asked.delete(asked.keys().next().value as string);
        return load();
      }
      const generation = cache.begin();
      const value = await load();
      if (generation === cache.begin()) {
        const jsonLength = options.jsonLengthOf ? options.jsonLengthOf(value) : JSON.stringify(value).length;
        if (jsonLength <= maxJsonLength)
          cache.store(fullKey, generation, {
            value: { value, user: userOf(actor), companies: companiesOf?.() ?? null },
            expiresAt: null,
            weight: jsonLength,
          });
      }
      return value;
    },
    changed(payload) {
      recentChanges.push(payload);
      if (recentChanges.length > 32) recentChanges.shift();
      const [table = '', scope, id] = payload.split(':');
      if (!tables.has(table)) return;
      if (scope === 'u' && id) cache.forgetWhere((_, kept) => kept.user === id, payload);
      else if (scope === 'c' && id)
        cache.forgetWhere((_, kept) => kept.companies === null || kept.companies.has(id), payload);
      else cache.invalidate(payload);
    },
    invalidate(reason) {
      cache.invalidate(reason);
    },
    setEnabled(enabled) {
      cache.setEnabled(enabled);
    },
    get size() {
      return cache.size;
    },
    get keptJsonLength() {
      return cache.weight;
    },
    get enabled() {
      return cache.enabled;
    },
    get hits() {
      return hits;
    },
    get misses() {
      return misses;
    },
    get recentChanges() {
      return recentChanges;
    },
  };
}
