/**
 * Signed upload URLs for the embedded object store, served by the service itself at
 * `PUT /uploads/:uploadId?expires=…&maxBytes=…&signature=…`.
 *
 * The signature is an HMAC-SHA256, keyed by a server secret, over a versioned string of the
 * upload id, the expiry (Unix seconds) and the byte limit, so none of them can be changed
 * without the secret. It is compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Distinguishes this MAC from any other the same secret might be used for. */
const SIGNATURE_CONTEXT = 'vigil-upload-v1';
const DIGITS = /^[0-9]{1,16}$/;
const BASE64URL = /^[A-Za-z0-9_-]{1,128}$/;

/** Input of {@link signUploadUrl}. */
export interface SignUploadUrlInput {
  /** The service's public base URL, e.g. `https://vigil.example.com` (a path prefix is kept). */
  baseUrl: string;
  uploadId: string;
  expiresAt: Date;
  maxBytes: number;
  /** The server's upload signing secret; at least 32 random bytes are advised. */
  secret: string | Buffer;
}

/**
 * Builds the signed upload URL of an upload session. The expiry is rounded down to the second,
 * so the URL never outlives `expiresAt`.
 */
export function signUploadUrl(input: SignUploadUrlInput): { url: string; expiresAt: Date } {
  assertSecret(input.secret);
  if (!Number.isSafeInteger(input.maxBytes) || input.maxBytes < 0) {
    throw new RangeError('maxBytes must be a non-negative integer.');
  }
  const expires = Math.floor(input.expiresAt.getTime() / 1000);
  const signature = computeSignature(input.secret, input.uploadId, expires, input.maxBytes);
  const base = input.baseUrl.endsWith('/') ? input.baseUrl : `${input.baseUrl}/`;
  const url = new URL(`uploads/${encodeURIComponent(input.uploadId)}`, base);
  url.searchParams.set('expires', String(expires));
  url.searchParams.set('maxBytes', String(input.maxBytes));
  url.searchParams.set('signature', signature);
  return { url: url.toString(), expiresAt: new Date(expires * 1000) };
}

/** Input of {@link verifyUploadSignature}: the route's path parameter and query values. */
export interface VerifyUploadSignatureInput {
  uploadId: string;
  expires: unknown;
  maxBytes: unknown;
  signature: unknown;
  secret: string | Buffer;
  /** The current time; default now. */
  now?: Date;
}

/** The outcome of {@link verifyUploadSignature}. */
export type UploadSignatureCheck =
  | { ok: true; expiresAt: Date; maxBytes: number }
  | { ok: false; reason: 'forged' | 'expired' };

/**
 * Checks a signed upload URL's query. `forged` when a value is missing, malformed or does not
 * match the signature (checked first, so an altered URL is never reported as merely expired);
 * `expired` when it is genuine but past its expiry. On success returns the signed `maxBytes`,
 * which the route must enforce while streaming the body.
 */
export function verifyUploadSignature(input: VerifyUploadSignatureInput): UploadSignatureCheck {
  assertSecret(input.secret);
  const expires = String(input.expires ?? '');
  const maxBytes = String(input.maxBytes ?? '');
  const signature = String(input.signature ?? '');
  if (!DIGITS.test(expires) || !DIGITS.test(maxBytes) || !BASE64URL.test(signature)) {
    return { ok: false, reason: 'forged' };
  }
  const expected = Buffer.from(
    computeSignature(input.secret, input.uploadId, Number(expires), Number(maxBytes)),
  );
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'forged' };
  const expiresAt = new Date(Number(expires) * 1000);
  if ((input.now ?? new Date()).getTime() >= expiresAt.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, expiresAt, maxBytes: Number(maxBytes) };
}

function computeSignature(
  secret: string | Buffer,
  uploadId: string,
  expires: number,
  maxBytes: number,
): string {
  return createHmac('sha256', secret)
    .update(`${SIGNATURE_CONTEXT}\n${uploadId}\n${expires}\n${maxBytes}`)
    .digest('base64url');
}

function assertSecret(secret: string | Buffer): void {
  if (secret.length === 0) throw new RangeError('The upload signing secret must not be empty.');
}
