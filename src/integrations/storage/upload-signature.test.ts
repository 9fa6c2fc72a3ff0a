import { describe, expect, it } from 'vitest';
import { signUploadUrl, verifyUploadSignature } from './upload-signature.ts';

const secret = 'a-test-secret-of-thirty-two-bytes!!';
const now = new Date('2026-03-01T12:00:00Z');
const expiresAt = new Date('2026-03-01T12:15:00.750Z');

function signedQuery(overrides: Partial<Parameters<typeof signUploadUrl>[0]> = {}) {
  const { url } = signUploadUrl({
    baseUrl: 'https://vigil.example.com',
    uploadId: 'upl_123',
    expiresAt,
    maxBytes: 1_000_000,
    secret,
    ...overrides,
  });
  const parsed = new URL(url);
  return {
    url: parsed,
    expires: parsed.searchParams.get('expires') ?? undefined,
    maxBytes: parsed.searchParams.get('maxBytes') ?? undefined,
    signature: parsed.searchParams.get('signature') ?? undefined,
  };
}

describe('signed upload URLs', () => {
  it('builds a PUT address under /uploads with the expiry rounded down to the second', () => {
    const { url, expires, maxBytes } = signedQuery();
    const signed = signUploadUrl({
      baseUrl: 'https://vigil.example.com',
      uploadId: 'upl_123',
      expiresAt,
      maxBytes: 1,
      secret,
    });

    expect(url.origin + url.pathname).toBe('https://vigil.example.com/uploads/upl_123');
    expect(expires).toBe(String(Date.parse('2026-03-01T12:15:00Z') / 1000));
    expect(maxBytes).toBe('1000000');
    expect(signed.expiresAt.toISOString()).toBe('2026-03-01T12:15:00.000Z');
  });

  it('keeps a path prefix of the base URL', () => {
    const { url } = signedQuery({ baseUrl: 'https://example.com/vigil' });

    expect(url.pathname).toBe('/vigil/uploads/upl_123');
  });

  it('accepts its own signature before the expiry and returns the signed limit', () => {
    const q = signedQuery();

    expect(verifyUploadSignature({ uploadId: 'upl_123', ...q, secret, now })).toEqual({
      ok: true,
      expiresAt: new Date('2026-03-01T12:15:00Z'),
      maxBytes: 1_000_000,
    });
  });

  it('accepts numbers where the route parsed the query as integers', () => {
    const q = signedQuery();

    const check = verifyUploadSignature({
      uploadId: 'upl_123',
      expires: Number(q.expires),
      maxBytes: Number(q.maxBytes),
      signature: q.signature,
      secret,
      now,
    });

    expect(check.ok).toBe(true);
  });

  it('reports a genuine URL past its expiry as expired', () => {
    const q = signedQuery();

    expect(
      verifyUploadSignature({ uploadId: 'upl_123', ...q, secret, now: new Date('2026-03-01T12:15:00Z') }),
    ).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it.each([
    ['a raised maxBytes', { maxBytes: '999999999' }],
    ['a later expiry', { expires: String(Date.parse('2027-01-01T00:00:00Z') / 1000) }],
    ['another upload id', { uploadId: 'upl_456' }],
    ['a missing signature', { signature: undefined }],
    ['a truncated signature', { signature: 'abc' }],
    ['a non-numeric expiry', { expires: '12abc' }],
    ['a negative limit', { maxBytes: '-1' }],
  ])('reports %s as forged', (_title, change) => {
    const q = signedQuery();

    expect(verifyUploadSignature({ uploadId: 'upl_123', ...q, ...change, secret, now })).toEqual({
      ok: false,
      reason: 'forged',
    });
  });

  it('reports a URL signed with another secret as forged, even once expired', () => {
    const q = signedQuery({ secret: 'another-secret-another-secret-0000' });

    expect(verifyUploadSignature({ uploadId: 'upl_123', ...q, secret, now: new Date('2030-01-01') })).toEqual(
      {
        ok: false,
        reason: 'forged',
      },
    );
  });

  it('encodes an upload id that is not URL-safe', () => {
    const { url } = signedQuery({ uploadId: 'a b/c' });

    expect(url.pathname).toBe('/uploads/a%20b%2Fc');
  });

  it('refuses to sign or verify with an empty secret', () => {
    expect(() => signedQuery({ secret: '' })).toThrow('must not be empty');
  });
});
