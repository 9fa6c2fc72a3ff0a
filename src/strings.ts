const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The reason a string is refused, or null: a NUL, or not well-formed UTF-16 (a lone surrogate). */
export function badStringReason(value: string): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(value)) return 'contains a lone UTF-16 surrogate';
  return null;
}
