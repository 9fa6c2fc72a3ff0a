import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * A nullable request field as one schema with `type: [T, 'null']`.
 *
 * The app validates with Ajv's `coerceTypes`, and `Nullable()` (an `anyOf` of the type and null)
 * lets Ajv coerce `null` into the first branch: a nullable string arrives as `""`, an integer as
 * `0`. With a type list Ajv sees that `null` already fits and leaves it alone.
 */
export function NullableInput<T extends TSchema>(schema: T) {
  const { type } = schema as { type?: unknown };
  if (typeof type !== 'string') throw new Error('NullableInput needs a schema with a single type');
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
}
