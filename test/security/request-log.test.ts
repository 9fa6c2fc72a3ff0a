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

  it('redacts credentials in absolute URLs and S3 presigned parameters', () => {
    expect(redactUrl('https://user:pw@host/x?X-Amz-Signature=abc&X-Amz-Credential=AKID%2F1&a=1')).toBe(
      'https://[redacted]@host/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&a=1',
    );
  });
});
