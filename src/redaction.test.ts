import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redaction.ts';

const token = `vgl_u_${'A1b2C3d4E5'.repeat(4)}`;
const key = `vgl_sk_${'Z9y8X7w6V5'.repeat(4)}`;

describe('redactSecrets', () => {
  it('replaces tokens and keys wherever they are, also inside a word or percent-encoded', () => {
    expect(redactSecrets(`/api/v0/reports/${token}?q=x${key}`)).toBe(
      '/api/v0/reports/vgl_u_[redacted]?q=xvgl_sk_[redacted]',
    );
    expect(redactSecrets(`q=vgl%5Fu%5F${token.slice(6)}`)).toBe('q=vgl%5Fu%5F[redacted]');
    expect(redactSecrets('accept failed for vgl_inv_Ab-9_zQ2xY7')).toBe(
      'accept failed for vgl_inv_[redacted]',
    );
    expect(redactSecrets('cookie vgl_cs_Q1w2E3r4T5y6')).toBe('cookie vgl_cs_[redacted]');
  });

  it('keeps a JSON line valid JSON, whatever the secret headers hold', () => {
    const line = JSON.stringify({
      a: { headers: { authorization: `Bearer ${token}`, cookie: { s: 'x' }, 'x-api-key': null } },
      msg: `failed: "authorization":"Basic dXNlcjpwYXNz" at https://h/x?signature=abc&token=t0k`,
      note: `X-Hub-Signature-256: sha256=${'ab'.repeat(32)}`,
    });
    const out = redactSecrets(line);
    const parsed = JSON.parse(out) as Record<string, unknown>;
    expect(out).not.toContain(token.slice(6));
    expect(out).not.toContain('dXNlcjpwYXNz');
    expect(out).not.toContain('abc&');
    expect(out).not.toContain('t0k');
    expect(out).not.toContain('abab');
    expect(parsed).toMatchObject({ a: { headers: { authorization: '[redacted]', cookie: { s: 'x' } } } });
  });

  it('leaves words that only look like a scheme alone', () => {
    expect(redactSecrets('Bearer authentication required; the Basic plan')).toBe(
      'Bearer authentication required; the Basic plan',
    );
    expect(redactSecrets('[redacted] stays as it is: authorization: [redacted]')).toBe(
      '[redacted] stays as it is: authorization: [redacted]',
    );
  });
});
