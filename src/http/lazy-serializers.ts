/**
 * Response serializers compiled on first use instead of at start-up. Fastify compiles a
 * fast-json-stringify function for every response schema of every route when the app becomes
 * ready — about a third of the CPU a `vigil start` spends before it answers — although a process
 * serves a few of them most of the time. The compiled functions are the same; the first response
 * of each route and status pays for its own compilation (a few milliseconds).
 *
 * The schemas the serializers compile from are also rewritten for speed (never the schemas of the
 * OpenAPI document): a nullable value, `anyOf: [X, { type: 'null' }]` in the contract, becomes
 * `X` with `nullable: true`. fast-json-stringify picks an `anyOf` branch by running an Ajv
 * validation of each branch against the value — for every nullable field of every row, a whole
 * validation of the nested object when X is one — while a nullable schema is a `=== null` test.
 * Likewise a union of string literals (an enum) is written as a string, without a validation per
 * literal. The output is the same for every value the schema allows.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;

type JsonSchema = Record<string | symbol, unknown>;

const isObject = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullSchema = (value: unknown) =>
  isObject(value) && value.type === 'null' && Object.keys(value).every((k) => k === 'type' || k === '$id');
/** Keywords that make fast-json-stringify pick among branches: a schema with one is left as it is. */
const COMPOSITION = ['anyOf', 'oneOf', 'allOf', 'if', 'not'] as const;

/**
 * The `type` of each named schema (by `$id`): a nullable reference keeps its target's type beside
 * `nullable`, which Ajv (compiling the validators of the unions left) requires.
 */
export function namedSchemaTypes(schemas: Record<string, unknown>): Map<string, string> {
  const types = new Map<string, string>();
  for (const schema of Object.values(schemas)) {
    if (isObject(schema) && typeof schema.$id === 'string' && typeof schema.type === 'string')
      types.set(schema.$id, schema.type);
  }
  return types;
}

/**
 * A copy of `schema` whose nullable values (`anyOf` of one schema and `{ type: 'null' }`) are
 * that schema with `nullable: true` — a reference only when `refTypes` knows its target's type;
 * everything else is kept. Shared sub-schemas stay shared.
 */
export function serializerSchema<T>(
  schema: T,
  refTypes: ReadonlyMap<string, string> = new Map(),
  seen = new WeakMap<object, unknown>(),
): T {
  if (Array.isArray(schema)) return schema.map((item) => serializerSchema(item, refTypes, seen)) as T;
  if (!isObject(schema)) return schema;
  const done = seen.get(schema);
  if (done !== undefined) return done as T;
  const copy: JsonSchema = {};
  seen.set(schema, copy);
  for (const key of Reflect.ownKeys(schema)) copy[key] = serializerSchema(schema[key], refTypes, seen);
  const branches = copy.anyOf;
  if (
    Array.isArray(branches) &&
    branches.length > 0 &&
    branches.every((b) => isObject(b) && b.type === 'string' && typeof b.const === 'string')
  ) {
    // A union of string literals (an enum) is written as the string it is.
    delete copy.anyOf;
    copy.type = 'string';
  } else if (Array.isArray(branches) && branches.length === 2 && copy.oneOf === undefined) {
    const nullIndex = branches.findIndex(isNullSchema);
    const other = branches[1 - nullIndex];
    if (
      nullIndex >= 0 &&
      isObject(other) &&
      !isNullSchema(other) &&
      other.nullable === undefined &&
      COMPOSITION.every((k) => other[k] === undefined) &&
      (typeof other.type === 'string' || (typeof other.$ref === 'string' && refTypes.has(other.$ref)))
    ) {
      delete copy.anyOf;
      Object.assign(copy, other, { nullable: true });
      if (typeof copy.type !== 'string') copy.type = refTypes.get(other.$ref as string);
    }
  }
  return copy as T;
}

/** The `schemaController.compilersFactory.buildSerializer` of Fastify's default, made lazy. */
export const lazySerializers: NonNullable<CompilersFactory['buildSerializer']> = (
  externalSchemas,
  options,
) => {
  const seen = new WeakMap<object, unknown>();
  const refTypes = namedSchemaTypes(externalSchemas as Record<string, unknown>);
  const compile = SerializerSelector()(serializerSchema(externalSchemas, refTypes, seen), options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compile({ ...route, schema: serializerSchema(route.schema, refTypes, seen) });
      return serialize(data);
    };
  };
};
