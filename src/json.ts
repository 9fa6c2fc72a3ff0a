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

/**
 * JSON text without the white space between its tokens (strings are left as they are):
 * PostgreSQL writes `json` values as `{"key" : value, "other" : value}`, which an answer that
 * puts them in as they came would otherwise carry.
 */
export function compactJson(text: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}
