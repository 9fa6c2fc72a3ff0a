import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createContainer, createLogger } from '../../src/container.ts';
import { redactUrl } from '../../src/http/request-log.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';

const lines: Array<Record<string, unknown>> = [];
let app: App;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-request-log-'));
  const { config: database, drop } = await createTestDatabaseConfig();
  const config: Config = {
    ...loadConfig(
      { VIGIL_DATA_DIR: dataDir, VIGIL_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'debug' },
      dataDir,
    ),
    database,
  };
  const log = createLogger(config, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const container = await createContainer(config, { log });
  app = await buildApp(container);
  await app.ready();
  cleanup = async () => {
    await app.close();
    await container.close();
    await drop();
    await rm(dataDir, { recursive: true, force: true });
  };
});
afterAll(async () => {
  await cleanup?.();
});

const completed = () => lines.filter((l) => l.msg === 'request completed');

describe('request log', () => {
  it('redacts the signature of an upload URL and tokens in query strings', async () => {
    lines.length = 0;
    const signature = 'c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
    await app.inject({
      method: 'PUT',
      url: `/uploads/${randomUUID()}?expires=1&maxBytes=10&signature=${signature}`,
      payload: 'x',
    });
    await app.inject({ method: 'GET', url: '/api/v0/reports?token=tok-SECRET&q=visible' });
    await app.inject({
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
    await app.inject({ method: 'GET', url: '/healthz' });
    await app.inject({ method: 'GET', url: '/readyz' });
    await app.inject({ method: 'GET', url: '/api/v0/reports' });
    expect(completed().map((l) => [(l.req as { url: string }).url, l.level])).toEqual([
      ['/healthz', 20],
      ['/readyz', 20],
      ['/api/v0/reports', 30],
    ]);
  });

  it('redacts credentials in absolute URLs and S3 presigned parameters', () => {
    expect(redactUrl('https://user:pw@host/x?X-Amz-Signature=abc&X-Amz-Credential=AKID%2F1&a=1')).toBe(
      'https://[redacted]@host/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&a=1',
    );
  });
});
