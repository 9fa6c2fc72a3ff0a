import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConsole } from '../../src/http/console.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';

let root: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'vigil-console-'));
  await mkdir(path.join(root, 'assets'));
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>Vigil</title><div id="root"></div>');
  await writeFile(path.join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
  app = Fastify();
  registerErrorHandling(app as never);
  await registerConsole(app, { root, objectStore: 'file:/tmp/x' });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await rm(root, { recursive: true, force: true });
});

describe('the console at /app', () => {
  it('serves hashed assets with a year of immutable cache', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.body).toBe('console.log(1)');
  });

  it('answers the page, never cached and with a same-origin CSP, at /app and every console path', async () => {
    for (const url of ['/app', '/app/', '/app/findings?s=status:new', '/app/repositories/x/findings/3']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-type'], url).toMatch(/text\/html/);
      expect(res.headers['content-security-policy'], url).toContain("connect-src 'self'");
      expect(res.body).toContain('<div id="root">');
    }
  });

  it('answers 404 for a hashed asset that does not exist instead of the page', async () => {
    const res = await app.inject({ method: 'GET', url: '/app/assets/index-old999.js' });
    expect(res.statusCode).toBe(404);
  });

  it('says how to build the console when it is not built', async () => {
    const bare = Fastify();
    registerErrorHandling(bare as never);
    await registerConsole(bare, { root: path.join(root, 'missing'), objectStore: 'file:/tmp/x' });
    const res = await bare.inject({ method: 'GET', url: '/app/findings' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:console');
    await bare.close();
  });
});
