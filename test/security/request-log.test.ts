import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/request-log.ts';
import { sharedTestApp } from '../helpers/app.ts';

const lines: Array<Record<string, unknown>> = [];
const t = sharedTestApp({
  env: { LOG_LEVEL: 'debug' },
  logTo: (line) => void lines.push(JSON.parse(line)),
});

const completed = () => lines.filter((l) => l.msg === 'request completed');

describe('request log', () => {
  it('redacts the signature of an upload URL and tokens in query strings', async () => {
    lines.length = 0;
    const signature = 'c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
    await t.app.inject({
      method: 'PUT',
      url: `/uploads/${randomUUID()}?expires=1&maxBytes=10&signature=${signature}`,
      payload: 'x',
    });
    await t.app.inject({ method: 'GET', url: '/api/v0/reports?token=tok-SECRET&q=visible' });
    await t.app.inject({
      method: 'GET',
      url: '/api/v0/reports',
      headers: { authorization: 'Bearer vgl_u_SECRETSECRET', 'x-api-key': 'vgl_sk_SECRET' },
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain(signature);
    expect(text).not.toContain('tok-SECRET');
    expect(text).not.toContain('SECRETSECRET');
    expect(text).not.toContain('vgl_sk_SECRET');
    const urls = completed().map((l) => (l.req as { url: string }).url);
    expect(urls).toContainEqual(expect.stringMatching(/signature=\[redacted\]$/));
    expect(urls).toContain('/api/v0/reports?token=[redacted]&q=visible');
  });

  it('logs health probes at debug and other requests at info', async () => {
    lines.length = 0;
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.inject({ method: 'GET', url: '/readyz' });
    await t.app.inject({ method: 'GET', url: '/api/v0/reports' });
    expect(completed().map((l) => [(l.req as { url: string }).url, l.level])).toEqual([
      ['/healthz', 20],
      ['/readyz', 20],
      ['/api/v0/reports', 30],
    ]);
  });

  it('writes no line for a level the logger leaves out', async () => {
    lines.length = 0;
    const log = t.container.log as { level: string };
    log.level = 'info';
    try {
      await t.app.inject({ method: 'GET', url: '/healthz' });
      await t.app.inject({ method: 'GET', url: '/api/v0/reports' });
    } finally {
      log.level = 'debug';
    }
    expect(completed().map((l) => (l.req as { url: string }).url)).toEqual(['/api/v0/reports']);
  });

  it('writes no token, key, webhook secret, signature or cookie wherever it is sent: path, query, headers, error messages', async () => {
    lines.length = 0;
    const token = t.adminToken; // a real, valid user token
    const serviceKey = `vgl_sk_${'K3y'.repeat(13)}x`;
    const webhookSecret = `whsec_${'S3cr3t-'.repeat(6)}`;
    const signature = 'c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
    const hmac = 'ab12'.repeat(16);
    const secrets = [
      token.slice(6),
      serviceKey.slice(7),
      webhookSecret.slice(6),
      signature,
      hmac,
      'dXNlcjpwYXNzd29yZDE',
    ];
    const requests = [
      // In the path.
      { url: `/api/v0/repositories/${token}` },
      { url: `/api/v0/reports/${serviceKey}/x` },
      { url: `/api/v0/companies/${encodeURIComponent(webhookSecret)}/integrations` },
      // In the query, under names no filter knows.
      { url: `/api/v0/reports?q=${token}` },
      { url: `/api/v0/reports?search=${encodeURIComponent(`Bearer ${token}`)}&k=${serviceKey}` },
      { url: `/api/v0/reports?q=vgl%5Fu%5F${token.slice(6)}` },
      { url: `/uploads/${randomUUID()}?expires=1&maxBytes=10&Signature=${signature}` },
      // In headers.
      {
        url: '/api/v0/reports',
        headers: {
          authorization: `Bearer ${token}`,
          'x-api-key': serviceKey,
          cookie: `vigil_session=${token}`,
          'x-vigil-signature': `sha256=${hmac}`,
          'proxy-authorization': 'Basic dXNlcjpwYXNzd29yZDE=',
        },
      },
    ];
    for (const { url, headers } of requests) {
      await t.app.inject({ method: 'GET', url, ...(headers ? { headers } : {}) });
    }
    // In error messages and in objects logged under keys no path names.
    const cause = new Error(`upstream refused https://h.example/x?sig=${signature} for Bearer ${token}`);
    t.container.log.error(
      {
        err: new Error(`call with ${serviceKey} and ${webhookSecret} failed`, { cause }),
        call: { request: { headers: { authorization: `Basic dXNlcjpwYXNzd29yZDE=`, cookie: `a=${token}` } } },
        note: `X-Vigil-Signature: sha256=${hmac}`,
      },
      `delivery failed: ${token}`,
    );
    expect(completed()).toHaveLength(requests.length);
    expect(lines.some((l) => l.msg === 'delivery failed: vgl_u_[redacted]')).toBe(true);
    const text = lines.map((l) => JSON.stringify(l)).join('\n');
    for (const secret of secrets) {
      expect(
        lines.filter((l) => JSON.stringify(l).includes(secret)),
        secret,
      ).toEqual([]);
    }
    expect(text).toContain('[redacted]');
    expect(completed().map((l) => (l.req as { url: string }).url)).toEqual([
      '/api/v0/repositories/vgl_u_[redacted]',
      '/api/v0/reports/vgl_sk_[redacted]/x',
      '/api/v0/companies/whsec_[redacted]/integrations',
      '/api/v0/reports?q=vgl_u_[redacted]',
      '/api/v0/reports?search=Bearer%20[redacted]&k=vgl_sk_[redacted]',
      '/api/v0/reports?q=vgl%5Fu%5F[redacted]',
      expect.stringMatching(/&Signature=\[redacted\]$/),
      '/api/v0/reports',
    ]);
  });

  it('redacts credentials in absolute URLs and S3 presigned parameters', () => {
    expect(redactUrl('https://user:pw@host/x?X-Amz-Signature=abc&X-Amz-Credential=AKID%2F1&a=1')).toBe(
      'https://[redacted]@host/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&a=1',
    );
  });
});
