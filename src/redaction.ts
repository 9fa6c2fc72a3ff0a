/**
 * Secrets recognised by what they look like, wherever they appear in a text: a log line's URL
 * path or query, a header logged under any key, an error message or stack. The logger applies
 * {@link redactSecrets} to every line it writes (`createLogger` in container.ts), after the
 * name-based redaction of known fields (`REDACTED_LOG_PATHS`), so that a secret sent where no
 * field name announces it (a token in `?q=` or in a path segment, a URL inside an error message)
 * is not written either.
 */

/** The replacement of a secret value. */
export const REDACTED = '[redacted]';

/** Query and form parameters whose values are secrets (compared case-insensitively). */
export const SECRET_PARAMS = [
  'signature',
  'sig',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'apikey',
  'api_key',
  'key',
  'secret',
  'client_secret',
  'password',
  'code',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'vigil_session',
] as const;

/** Header names whose values are secrets, when a header is written as `"name":"value"` or `name: value`. */
const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'x-csrf-token',
  'x-hub-signature-256',
  'x-hub-signature',
  'x-vigil-signature',
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

/**
 * One pass over the text, each alternative a named group (the replacement keeps what names the
 * secret and drops the value). A value never takes in a quote or a backslash, so a JSON line stays
 * JSON:
 * - `token`: user tokens, service keys, invitation secrets and console session ids (`vgl_u_…`,
 *   `vgl_sk_…`, `vgl_inv_…`, `vgl_cs_…`), also inside a word or
 *   percent-encoded (`%20vgl_u_…`, `vgl%5Fu%5F…`);
 * - `whsec`: notification webhook secrets (`whsec_…`);
 * - `scheme`: `Bearer …`, `Basic …` credentials (a value with a digit or a symbol, not a word);
 * - `digest`: HMAC signatures written `sha256=<hex>` (webhook signature headers);
 * - `quoted`: a secret header's value written as JSON (`"authorization":"…"`, at any depth);
 * - `line`: a secret header's value written as a header line (`Authorization: …`);
 * - `param`: a secret parameter's value in a query or form (`signature=…`, `token=…`).
 */
const HEADER_NAMES = SECRET_HEADERS.map(escapeRegExp).join('|');
const NOT_DONE = String.raw`(?!\[redacted\])`;
const SECRET_PATTERN = new RegExp(
  [
    '(?<token>vgl(?:_|%5f)(?:u|sk|inv|cs)(?:_|%5f))[0-9A-Za-z_-]+',
    '(?<whsec>whsec(?:_|%5f))[A-Za-z0-9_-]+',
    String.raw`(?<scheme>\b(?:bearer|basic)(?:\s+|%20|\+))${NOT_DONE}(?=[A-Za-z._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]+`,
    String.raw`(?<digest>\bsha256(?:=|%3d))[0-9a-f]{16,}`,
    String.raw`(?<quoted>\\?"(?:${HEADER_NAMES})\\?"\s*:\s*\\?")${NOT_DONE}[^"\\]+`,
    String.raw`(?<line>\b(?:${HEADER_NAMES}):[ \t]*)${NOT_DONE}[^\s"\\][^"\\\r\n]*`,
    String.raw`(?<param>(?:^|[?&;\s]|\b)(?:${SECRET_PARAMS.map(escapeRegExp).join('|')})=)${NOT_DONE}[^&#\s"\\;]+`,
  ].join('|'),
  'gi',
);

/** Group names of {@link SECRET_PATTERN}, in order. */
const GROUPS = ['token', 'whsec', 'scheme', 'digest', 'quoted', 'line', 'param'] as const;

/** The text with every secret it recognises replaced by `[redacted]` (what names it is kept). */
export function redactSecrets(text: string): string {
  return text.replace(SECRET_PATTERN, (match, ...args) => {
    const groups = args.at(-1) as Record<string, string | undefined>;
    for (const name of GROUPS) {
      const kept = groups[name];
      if (kept !== undefined) return `${kept}${REDACTED}`;
    }
    return match;
  });
}
