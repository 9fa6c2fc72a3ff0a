import { createHash, randomBytes } from 'node:crypto';

/** Scopes of organization service keys. */
export const SCOPES = [
  'findings:read',
  'findings:write',
  'scans:read',
  'scans:create',
  'credits:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** What a key gets when created without a scope list: everything except `findings:write`. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'findings:write');

export const USER_TOKEN_PREFIX = 'vgl_u_';
export const SERVICE_KEY_PREFIX = 'vgl_sk_';
/** Console session ids: never accepted where a token or key is (`classifySecret` says null). */
export const SESSION_ID_PREFIX = 'vgl_cs_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;
const TOKEN_PATTERN = /^vgl_(u|sk)_[0-9A-Za-z]{40}$/;
const SESSION_PATTERN = /^vgl_cs_[0-9A-Za-z]{40}$/;

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export interface IssuedSecret {
  /** The full secret, shown once. */
  secret: string;
  /** SHA-256 hex of the secret: the only thing stored. */
  hash: string;
  /** A short visible prefix to recognise the secret in lists. */
  prefix: string;
}

/** Creates a new user token (`vgl_u_…`) or service key (`vgl_sk_…`). */
export function issueSecret(kind: 'user' | 'service'): IssuedSecret {
  const secret = (kind === 'user' ? USER_TOKEN_PREFIX : SERVICE_KEY_PREFIX) + randomBase62(SECRET_LENGTH);
  return { secret, hash: hashSecret(secret), prefix: secret.slice(0, secret.indexOf('_', 4) + 5) };
}

/** Creates a console session id (`vgl_cs_…`); only its hash is stored. */
export function issueSessionSecret(): IssuedSecret {
  const secret = SESSION_ID_PREFIX + randomBase62(SECRET_LENGTH);
  return { secret, hash: hashSecret(secret), prefix: secret.slice(0, SESSION_ID_PREFIX.length + 4) };
}

/** True when `secret` has the form of a console session id. */
export function isSessionSecretFormat(secret: string): boolean {
  return SESSION_PATTERN.test(secret);
}

/** SHA-256 hex of a secret. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The kind of a well-formed secret, or null when it is malformed. */
export function classifySecret(secret: string): 'user' | 'service' | null {
  const match = TOKEN_PATTERN.exec(secret);
  if (!match) return null;
  return match[1] === 'u' ? 'user' : 'service';
}

/** Accepts a caller-chosen admin token only when it has the user token format. */
export function isValidUserTokenFormat(secret: string): boolean {
  return classifySecret(secret) === 'user';
}

/** Prefix of the one-time secret an invitation e-mail carries. */
export const INVITATION_SECRET_PREFIX = 'vgl_inv_';

/** A one-time invitation secret (`vgl_inv_…`, 238 bits) and its SHA-256 hash (the stored part). */
export function issueInvitationSecret(): { secret: string; hash: string } {
  const secret = INVITATION_SECRET_PREFIX + randomBase62(SECRET_LENGTH);
  return { secret, hash: hashSecret(secret) };
}
