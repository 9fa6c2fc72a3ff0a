import type { SwaggerTransformObject } from '@fastify/swagger';
import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

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
  504: 'An upstream service did not answer in time',
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

/**
 * A reference to a named schema (one with an `$id`, registered once with `app.addSchema`), typed
 * as that schema. Validation and serialization resolve it to the registered schema; the OpenAPI
 * document shows it as `#/components/schemas/<$id>`. Shapes nested in other shapes must be
 * referenced this way: the same `$id` twice inline in one schema is ambiguous to Ajv.
 */
export function ref<T extends TSchema>(schema: T): TUnsafe<Static<T>> {
  if (typeof schema.$id !== 'string') throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

export const UuidSchema = Type.String({ format: 'uuid' });
export const DateTimeSchema = Type.String({ format: 'date-time' });

/**
 * Named schemas in the OpenAPI document: request bodies and responses refer to every schema with an
 * `$id` (the shapes named in the `*.schemas.ts` files) as `#/components/schemas/<$id>` instead of
 * repeating it inline, so that the generated SDK types carry the same names. Only the document
 * changes; validation and serialization keep the inline schemas.
 */
export function namedSchemaTransforms() {
  const named = new Map<string, unknown>();
  const refer = (value: unknown, top: boolean): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((item) => refer(item, false));
    const { $id, ...rest } = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(rest)) {
      // A `ref()` to a registered schema names it by `$id` alone; in the document it points into
      // the components.
      out[key] =
        key === '$ref' && typeof child === 'string' && !child.startsWith('#')
          ? `#/components/schemas/${child.replace(/#$/, '')}`
          : refer(child, false);
    }
    if (typeof $id !== 'string' || top) return out;
    const known = named.get($id);
    if (known === undefined) named.set($id, out);
    else if (JSON.stringify(known) !== JSON.stringify(out)) {
      // Two different shapes under one name would silently document one of them for both.
      throw new Error(`Two different schemas are named ${$id}`);
    }
    const { description } = rest;
    return typeof description === 'string'
      ? { $ref: `#/components/schemas/${$id}`, description }
      : { $ref: `#/components/schemas/${$id}` };
  };
  return {
    transform(route: { schema: FastifySchema; url: string }): { schema: FastifySchema; url: string } {
      const schema = route.schema as Record<string, unknown> | undefined;
      if (!schema || (!schema.body && !schema.response)) return { schema: route.schema, url: route.url };
      return {
        url: route.url,
        schema: {
          ...schema,
          ...(schema.body ? { body: refer(schema.body, false) } : {}),
          ...(schema.response ? { response: refer(schema.response, true) } : {}),
        },
      };
    },
    transformObject(
      documentObject: Parameters<SwaggerTransformObject>[0],
    ): ReturnType<SwaggerTransformObject> {
      const document = ('openapiObject' in documentObject ? documentObject.openapiObject : {}) as {
        components?: { schemas?: Record<string, unknown> };
      };
      const components = document.components ?? {};
      const schemas: Record<string, unknown> = { ...components.schemas };
      for (const [id, schema] of [...named].sort(([a], [b]) => a.localeCompare(b))) schemas[id] ??= schema;
      return { ...document, components: { ...components, schemas } } as ReturnType<SwaggerTransformObject>;
    },
  };
}

/** The answer of a creation that returns the new resource's id only (v0 §2.4, §2.5). */
export const CreatedIdSchema = Type.Object({ id: UuidSchema }, { $id: 'CreatedId' });
