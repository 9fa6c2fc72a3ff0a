import { type TSchema, Type } from '@sinclair/typebox';

/** v1 error body: `{error, code}` plus extra fields. */
export const ErrorV1Schema = Type.Object(
  { error: Type.String(), code: Type.String() },
  { additionalProperties: true, $id: 'ErrorV1' },
);
/** v0 error body: `{msg}`. */
export const ErrorV0Schema = Type.Object({ msg: Type.String() }, { $id: 'ErrorV0' });

const descriptions: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing, malformed, expired or revoked credential',
  402: 'Not enough scan credits',
  403: 'The credential lacks the required scope or role',
  404: 'Not found in this organization',
  405: 'Method not allowed',
  409: 'Conflicts with the current state',
  410: 'Gone',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unsupported repository type',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Internal error; the body carries a request id',
  502: 'Provider or backend failure',
  503: 'Temporarily unavailable; retry the identical request',
};

const COMMON = [400, 401, 429, 500] as const;

const RETRY_AFTER = {
  type: 'integer',
  minimum: 1,
  description: 'Seconds to wait before retrying (an integer ≥ 1)',
};

/** Response headers per status: 429 always carries Retry-After; 502 and 503 may. */
const headersOf: Record<number, Record<string, unknown>> = {
  429: { 'Retry-After': RETRY_AFTER },
  502: { 'Retry-After': RETRY_AFTER },
  503: { 'Retry-After': RETRY_AFTER },
};

function errors(schema: TSchema, statuses: readonly number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of new Set([...COMMON, ...statuses])) {
    const headers = headersOf[status];
    out[status] = Type.Ref(schema, {
      description: descriptions[status] ?? 'Error',
      ...(headers ? { headers } : {}),
    });
  }
  return out;
}

/** Error responses of a v1 route: the common ones plus `statuses`. */
export function v1Errors(...statuses: number[]): Record<number, TSchema> {
  return errors(ErrorV1Schema, [403, ...statuses]);
}

/** Error responses of a v0 route: the common ones plus `statuses`. */
export function v0Errors(...statuses: number[]): Record<number, TSchema> {
  return errors(ErrorV0Schema, [403, ...statuses]);
}

/** A nullable value: `T | null`. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const UuidSchema = Type.String({ format: 'uuid' });
export const DateTimeSchema = Type.String({ format: 'date-time' });
