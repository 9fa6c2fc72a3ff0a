import { createHash, randomUUID } from 'node:crypto';
import type { Database, Tx } from '../../db/client.ts';
import { AppError, ERROR_CODES, type ErrorCode, isAppError } from '../../errors.ts';
import type { JsonObject, JsonValue } from '../../json.ts';
import { canonicalJson } from '../../strings.ts';
import { idempotencyRepo } from './idempotency.repo.ts';

/** The Idempotency-Key header: 1 to 255 characters of `[A-Za-z0-9._:-]`. */
export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._:-]+$';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const KEY_REGEX = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** One request made with an Idempotency-Key. */
export interface IdempotentRequest {
  /** The organization the key is scoped to (not the service key: it survives key rotation). */
  companyId: string;
  key: string;
  method: string;
  /** The route path without the query string. */
  path: string;
  body: unknown;
}

/** What an idempotent operation answers. */
export interface IdempotentResponse<T> {
  status: number;
  body: T;
}

/** The response plus whether it was replayed from the stored record. */
export interface IdempotentOutcome<T> extends IdempotentResponse<T> {
  replayed: boolean;
}

/** Handed to the operation: it stores the response in the operation's own transaction. */
export interface IdempotencyClaim {
  /**
   * Locks the claim for the rest of `tx`; call it first in the transaction that makes the
   * operation's writes. Throws IDEMPOTENCY_REQUEST_IN_PROGRESS when the claim was taken over.
   */
  lockInTx(tx: Tx): Promise<void>;
  /**
   * Marks the record completed with `response` inside `tx`, so that the operation's writes and
   * the stored response commit together (or not at all).
   */
  completeInTx<T extends JsonValue>(tx: Tx, response: IdempotentResponse<T>): Promise<IdempotentResponse<T>>;
}

/** The stored form of a definitive 4xx answer, replayed by throwing the same AppError. */
interface StoredError {
  [key: string]: JsonValue;
  error: { code: ErrorCode; message: string; details?: JsonObject };
}

export interface IdempotencyOptions {
  database: Database;
  /** How long a completed record is kept and replayed. */
  ttlHours: number;
  /**
   * How long an in-progress claim blocks other requests with the key before it may be taken
   * over: a request that crashed, or could not release its claim because the database was
   * unreachable, blocks its retries at most this long.
   */
  lockSeconds?: number;
}

/** SHA-256 of method, path and the canonical JSON body. */
export function requestFingerprint(request: Pick<IdempotentRequest, 'method' | 'path' | 'body'>): string {
  return createHash('sha256')
    .update(`${request.method.toUpperCase()}\n${request.path}\n${canonicalJson(request.body)}`)
    .digest('hex');
}

/**
 * Checks an Idempotency-Key header value: missing → 400 IDEMPOTENCY_KEY_REQUIRED; wrong length or
 * characters → 400 VALIDATION_FAILED naming the header.
 */
export function parseIdempotencyKey(value: string | string[] | undefined): string {
  if (value === undefined || value === '') throw new AppError('IDEMPOTENCY_KEY_REQUIRED');
  const key = Array.isArray(value) ? value[0] : value;
  if (
    key === undefined ||
    key.length > IDEMPOTENCY_KEY_MAX_LENGTH ||
    !KEY_REGEX.test(key) ||
    Array.isArray(value)
  ) {
    throw new AppError('VALIDATION_FAILED', {
      message: `Invalid header 'idempotency-key': 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : -.`,
      details: { field: 'idempotency-key', location: 'headers' },
    });
  }
  return key;
}

/** A 4xx that the same request would get again: stored and replayed. */
function isDefinitiveClientError(err: unknown): err is AppError {
  return (
    isAppError(err) &&
    err.status >= 400 &&
    err.status < 500 &&
    ![401, 403, 429].includes(err.status) &&
    err.code !== 'IDEMPOTENCY_KEY_REUSED' &&
    err.code !== 'IDEMPOTENCY_REQUEST_IN_PROGRESS'
  );
}

function replay<T extends JsonValue>(status: number, body: JsonValue | null): IdempotentOutcome<T> {
  if (status >= 400) {
    // A 4xx record is written by `execute` only, always as a StoredError; a code this version
    // does not know is replayed as stored.
    const { error } = body as StoredError;
    if (error.code in ERROR_CODES) {
      throw new AppError(error.code, {
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      });
    }
  }
  return { status, body: body as T, replayed: true };
}

/**
 * Idempotent execution of POST operations, keyed by (organization, Idempotency-Key).
 *
 * 1. The claim: an `in_progress` record inserted with `ON CONFLICT DO NOTHING` in its own short
 *    statement. Exactly one of concurrent identical requests (on any replica) holds it.
 * 2. The operation runs; in its transaction it locks the claim and marks it completed with its
 *    response, so the operation's writes and the stored response commit together.
 * 3. A definitive 4xx is stored (replayed to the identical retry); a 5xx, a connection failure or
 *    a crash stores nothing: the claim is deleted, or — when the database could not be reached
 *    to delete it — taken over once its `locked_until` has passed.
 * Others with the key: same fingerprint and completed → the stored response; still running →
 * 409 IDEMPOTENCY_REQUEST_IN_PROGRESS; another fingerprint → 409 IDEMPOTENCY_KEY_REUSED.
 * Records expire after `ttlHours`; an expired record counts as absent.
 */
export function createIdempotencyService(options: IdempotencyOptions) {
  const { database, ttlHours } = options;
  const lockSeconds = options.lockSeconds ?? 30;

  /** Claims the key or resolves the request from the existing record. */
  async function acquire(
    request: IdempotentRequest,
    fingerprint: string,
  ): Promise<{ claimId: string } | { outcome: IdempotentOutcome<unknown> }> {
    const repo = idempotencyRepo(database.db);
    // A few rounds at most: each round either claims, answers, or removes an expired record.
    for (let attempt = 0; attempt < 5; attempt++) {
      const claimId = randomUUID();
      if (
        await repo.claim({
          companyId: request.companyId,
          key: request.key,
          fingerprint,
          claimId,
          lockSeconds,
          ttlHours,
        })
      ) {
        return { claimId };
      }
      const found = await repo.find(request.companyId, request.key);
      if (!found) continue; // released or deleted between our insert and our read
      if (found.expired) {
        await repo.deleteIfExpired(request.companyId, request.key);
        continue;
      }
      const record = found.record;
      if (record.fingerprint !== fingerprint) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (record.state === 'completed')
        return { outcome: replay(record.responseStatus ?? 200, record.responseBody) };
      if (!found.lockExpired) throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      if (await repo.takeOver(request.companyId, request.key, record.claimId, claimId, lockSeconds))
        return { claimId };
    }
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS');
  }

  return {
    /** Idempotency-Key records live this many hours. */
    ttlHours,

    /**
     * Runs `operation` at most once per (organization, key) and fingerprint. The operation must
     * call `claim.lockInTx(tx)` first and `claim.completeInTx(tx, response)` last in the
     * transaction that makes its writes. Replayed responses come back with `replayed: true`;
     * a replayed definitive 4xx is thrown again as the same AppError.
     */
    async execute<T extends JsonValue>(
      request: IdempotentRequest,
      operation: (claim: IdempotencyClaim) => Promise<IdempotentResponse<T>>,
    ): Promise<IdempotentOutcome<T>> {
      const fingerprint = requestFingerprint(request);
      const acquired = await acquire(request, fingerprint);
      if ('outcome' in acquired) return acquired.outcome as IdempotentOutcome<T>;
      const { claimId } = acquired;
      let completed = false;

      const claim: IdempotencyClaim = {
        async lockInTx(tx) {
          if (!(await idempotencyRepo(tx.db).lockClaim(request.companyId, request.key, claimId))) {
            throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS');
          }
        },
        async completeInTx(tx, response) {
          if (
            !(await idempotencyRepo(tx.db).complete(
              request.companyId,
              request.key,
              claimId,
              response.status,
              response.body,
            ))
          ) {
            throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS');
          }
          completed = true;
          return response;
        },
      };

      try {
        const response = await operation(claim);
        if (!completed) {
          // The operation wrote nothing transactional; store its answer on its own.
          await idempotencyRepo(database.db).complete(
            request.companyId,
            request.key,
            claimId,
            response.status,
            response.body,
          );
        }
        return { ...response, replayed: false };
      } catch (err) {
        if (isDefinitiveClientError(err)) {
          const stored: StoredError = {
            error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) },
          };
          await idempotencyRepo(database.db)
            .complete(request.companyId, request.key, claimId, err.status, stored)
            .catch(() => idempotencyRepo(database.db).release(request.companyId, request.key, claimId))
            .catch(() => {});
        } else if (!isAppError(err, 'IDEMPOTENCY_REQUEST_IN_PROGRESS')) {
          // 5xx, crash of the operation or an unreachable database: nothing is stored. If the
          // database cannot be reached to delete the claim, its lock passes after lockSeconds.
          await idempotencyRepo(database.db)
            .release(request.companyId, request.key, claimId)
            .catch(() => {});
        }
        throw err;
      }
    },

    /** Deletes expired records in batches (the scheduled cleanup); returns how many. */
    async deleteExpired(batchSize = 1000): Promise<number> {
      const repo = idempotencyRepo(database.db);
      let total = 0;
      for (;;) {
        const n = await repo.deleteExpired(batchSize);
        total += n;
        if (n < batchSize) return total;
      }
    },
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
