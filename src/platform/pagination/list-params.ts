import { AppError } from '../../errors.ts';

/** Largest number of values one list parameter takes, after splitting. */
export const MAX_LIST_VALUES = 100;

/** Splits a comma list, trims the items and drops empty ones. */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

/**
 * The values of an array query parameter that accepts both repeated parameters (`?a=x&a=y`) and
 * comma-separated lists (`?a=x,y`): split, trimmed, empty items dropped, duplicates removed.
 * Undefined when the parameter is absent; 400 naming the parameter when it has too many values.
 */
export function splitListParam(
  name: string,
  values: readonly string[] | string | undefined,
): string[] | undefined {
  if (values === undefined) return undefined;
  const raw = typeof values === 'string' ? [values] : values;
  const out = [...new Set(raw.flatMap(splitList))];
  if (out.length > MAX_LIST_VALUES) {
    throw invalidParam(name, `at most ${MAX_LIST_VALUES} values are allowed`);
  }
  return out;
}

/** 400 naming a query parameter, in the wording of the schema validation errors. */
export function invalidParam(name: string, reason: string): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid query parameter '${name}': ${reason}.`,
    details: { field: name, location: 'querystring' },
  });
}

/** A timestamp as PostgreSQL text with microseconds: `to_char` output used as an exact cursor key. */
export const ISO_MICROS_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

const ISO_MICROS_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** True for a timestamp key made with ISO_MICROS_FORMAT that names a real instant (no month 13). */
export function isIsoMicros(value: unknown): value is string {
  if (typeof value !== 'string' || !ISO_MICROS_PATTERN.test(value)) return false;
  const millis = Date.parse(`${value.slice(0, 23)}Z`);
  return (
    !Number.isNaN(millis) && value.startsWith(new Date(millis).toISOString().slice(0, 23)) && value >= '0001'
  );
}
