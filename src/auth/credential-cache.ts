/**
 * Resolved credentials, kept in memory so that a request authenticates without a query.
 *
 * Correctness comes from PostgreSQL notifications: every statement that changes a token, a
 * service key, a user, a membership or a platform permission notifies `vigil_credentials` at
 * commit (migration 0012), and every process empties its cache when the notification arrives.
 * While the listening connection is down the cache is off (every request reads the database),
 * and it starts empty each time the connection comes back.
 *
 * A lookup that started before a change and finishes after its notification must not store what
 * it read: `begin()` takes the generation before the read, and `store()` drops the value when a
 * notification came in between.
 */
export interface CachedCredential<T> {
  value: T;
  /** When the credential expires; a hit at or after it is a miss. */
  expiresAt: Date | null;
  /** What the entry counts against `maxWeight` (default 1). */
  weight?: number;
}

export interface CredentialCache<T> {
  /** The live cached value for `key`, or undefined. */
  get(key: string, now: Date): T | undefined;
  /** The generation to hand to `store` after reading the database. */
  begin(): number;
  store(key: string, generation: number, entry: CachedCredential<T>): void;
  /** Forgets everything (a notification arrived; `reason` is its payload). */
  invalidate(reason?: string): void;
  /**
   * Forgets the entries that `matches` (a notification about some of them arrived). Like
   * {@link invalidate}, nothing read before it is stored after it, whatever its key.
   */
  forgetWhere(matches: (key: string, value: T) => boolean, reason?: string): void;
  /** The payloads of the last notifications, newest last (for operators and tests). */
  readonly recentReasons: readonly string[];
  /** Turns caching on (the listener is attached) or off (it is not); both forget everything. */
  setEnabled(enabled: boolean): void;
  readonly size: number;
  /** The kept entries' weights added up. */
  readonly weight: number;
  /** Whether values are kept (the listener is attached and the cache has room). */
  readonly enabled: boolean;
}

export interface CredentialCacheOptions {
  /** Entries kept at most; 0 turns the cache off. */
  maxEntries: number;
  /** The longest an entry is trusted even without a notification. */
  maxAgeMs?: number;
  /** The most the entries' weights add up to (least recently used out); unbounded by default. */
  maxWeight?: number;
  now?: () => number;
}

export function createCredentialCache<T>(options: CredentialCacheOptions): CredentialCache<T> {
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const clock = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on a hit keeps the least recently used first.
  const entries = new Map<string, CachedCredential<T> & { storedAt: number }>();
  const maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
  let weight = 0;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    weight -= entry.weight ?? 1;
  };
  const clear = () => {
    entries.clear();
    weight = 0;
  };
  let generation = 0;
  let enabled = false;
  const reasons: string[] = [];
  const remember = (reason: string) => {
    reasons.push(reason);
    if (reasons.length > 32) reasons.shift();
  };

  return {
    get(key, now) {
      if (!enabled) return undefined;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if ((entry.expiresAt && entry.expiresAt <= now) || clock() - entry.storedAt > maxAgeMs) {
        remove(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      return entry.value;
    },
    begin() {
      return generation;
    },
    store(key, at, entry) {
      if (!enabled || at !== generation || options.maxEntries <= 0) return;
      if ((entry.weight ?? 1) > maxWeight) return;
      remove(key);
      entries.set(key, { ...entry, storedAt: clock() });
      weight += entry.weight ?? 1;
      while (entries.size > options.maxEntries || weight > maxWeight) {
        remove(entries.keys().next().value as string);
      }
    },
    invalidate(reason = '') {
      generation += 1;
      clear();
      remember(reason);
    },
    forgetWhere(matches, reason = '') {
      generation += 1;
      for (const [key, entry] of [...entries]) if (matches(key, entry.value)) remove(key);
      remember(reason);
    },
    setEnabled(value) {
      enabled = value && options.maxEntries > 0;
      generation += 1;
      clear();
    },
    get size() {
      return entries.size;
    },
    get weight() {
      return weight;
    },
    get enabled() {
      return enabled;
    },
    get recentReasons() {
      return reasons;
    },
  };
}

/** The channel migration 0012's triggers notify. */
export const CREDENTIALS_CHANNEL = 'vigil_credentials';
