/**
 * A JSON value as PostgreSQL's `jsonb` stores it and `JSON.parse` returns it: the type of a column
 * whose content is any JSON (an audit entry's details, a stored response body). Columns with a
 * known format are typed with that format instead.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/** A JSON object. */
export interface JsonObject {
  [key: string]: JsonValue;
}
