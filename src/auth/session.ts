import { timingSafeEqual } from 'node:crypto';
import { hashSecret } from './credentials.ts';
import type { SecretBox } from './secret-box.ts';

/** The HttpOnly cookie that carries a console session: its id (`vgl_cs_…`), never a token. */
export const SESSION_COOKIE = 'vigil_session';
/** The header that carries the CSRF token on cookie-authenticated writes. */
export const CSRF_HEADER = 'x-csrf-token';
/** The header naming the company a cookie session acts for on the scanner API. */
export const COMPANY_HEADER = 'x-vigil-company';

/**
 * CSRF tokens of console sessions. A token is an HMAC of the session id's hash under the server
 * secret: stateless (any replica checks it), bound to one session, and unknowable to a page of
 * another origin, which can make the browser send the cookie but cannot read the token.
 */
export function createSessionCodec(secretBox: SecretBox) {
  return {
    /** The CSRF token of the session whose id is `secret`. */
    csrfTokenFor(secret: string): string {
      return secretBox.sign(`csrf:${hashSecret(secret)}`);
    },
    /** True when `presented` is the CSRF token of the session whose id is `secret`. */
    verifyCsrfToken(secret: string, presented: string | undefined): boolean {
      if (!presented) return false;
      const expected = Buffer.from(this.csrfTokenFor(secret));
      const given = Buffer.from(presented);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}

export type SessionCodec = ReturnType<typeof createSessionCodec>;
