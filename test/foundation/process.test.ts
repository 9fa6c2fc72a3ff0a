import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabaseConfig } from '../helpers/database.ts';
import { freePort } from '../helpers/net.ts';
import { waitFor } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function runVigil(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => {
    output += String(d);
  });
  child.stderr!.on('data', (d) => {
    output += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForOutput = (pattern: RegExp, timeoutMs = 60_000) =>
    waitFor(
      () => {
        if (pattern.test(output)) return true;
        if (child.exitCode !== null) throw new Error(`vigil exited early:\n${output}`);
        return false;
      },
      { what: () => `${pattern}:\n${output}`, timeoutMs },
    );
  return { child, exited, waitFor: waitForOutput, output: () => output };
}

const adminToken = () => `vgl_u_${randomBytes(20).toString('hex')}`;

describe('vigil processes', () => {
  it('creates the admin on first start, prints it once, and drains an in-flight request on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-proc-'));
    dirs.push(dataDir);
    const port = await freePort();
    const token = adminToken();
    const env = { VIGIL_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', VIGIL_ADMIN_TOKEN: token };
    const first = runVigil(['start'], env);
    await first.waitFor(/API listening/);
    expect(first.output()).toContain('Created the platform admin "admin"');
    expect(first.output()).not.toContain(token);

    // A request whose body is still arriving when SIGTERM comes must be answered.
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v0/admin/companies',
          // 100-continue: the server answers it when it has read the headers and taken the request,
          // so the signal below cannot overtake the request itself.
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            expect: '100-continue',
          },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => {
            body += String(d);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      // SIGTERM once the server has taken the request and the first half of the body is on the
      // wire; the rest once the server is shutting down.
      req.on('continue', () => {
        req.write('{"name": "Drain Co", ', () => {
          first.child.kill('SIGTERM');
          first.waitFor(/shutting down/).then(() => req.end('"handle": "drain-co"}'), reject);
        });
      });
      req.flushHeaders();
    });
    const answered = await response;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.body)).toMatchObject({ handle: 'drain-co' });
    expect(await first.exited, first.output()).toBe(0);
    expect(first.output()).toContain('shutting down');

    // A second start on the same data keeps the admin and prints no token.
    const second = runVigil(['serve'], { ...env, VIGIL_ADMIN_TOKEN: '' });
    await second.waitFor(/API listening/);
    expect(second.output()).not.toContain('Created the platform admin');
    const res = await fetch(`http://127.0.0.1:${port}/api/v0/admin/companies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Again', handle: 'again-co' }),
    });
    expect(res.status).toBe(201);
    second.child.kill('SIGTERM');
    expect(await second.exited, second.output()).toBe(0);
  });

  it('listens on 127.0.0.1 unless HOST says otherwise; metrics need the token, or the loopback metrics port', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-proc-'));
    dirs.push(dataDir);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const metricsToken = randomBytes(24).toString('hex');
    const run = runVigil(['start'], {
      VIGIL_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '',
      VIGIL_METRICS_TOKEN: metricsToken,
      VIGIL_METRICS_PORT: String(metricsPort),
    });
    await run.waitFor(/metrics listening/);
    const listening = run
      .output()
      .split('\n')
      .filter((l) => l.includes('"API listening"'))
      .map((l) => JSON.parse(l) as { address: string });
    expect(listening).toEqual([expect.objectContaining({ address: `http://127.0.0.1:${port}` })]);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    // Another address of this machine reaches neither listener.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (external) {
      for (const p of [port, metricsPort]) {
        await expect(fetch(`http://${external}:${p}/healthz`)).rejects.toThrow();
      }
    }
    // The API port: the token, or nothing.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    const wrong = await fetch(`http://127.0.0.1:${port}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken.slice(1)}x` },
    });
    expect(wrong.status).toBe(401);
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('http_request_duration_seconds');
    // The metrics port, on loopback: no token.
    const local = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(local.status).toBe(200);
    expect(await local.text()).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v0/reports`)).status).toBe(404);
    run.child.kill('SIGTERM');
    expect(await run.exited, run.output()).toBe(0);
  });

  it('stops a worker cleanly on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-proc-'));
    dirs.push(dataDir);
    const worker = runVigil(['worker'], { VIGIL_DATA_DIR: dataDir });
    await worker.waitFor(/worker started/);
    worker.child.kill('SIGTERM');
    expect(await worker.exited, worker.output()).toBe(0);
    expect(worker.output()).toContain('stopped');
  });

  it('explains a bad configuration instead of crashing', async () => {
    const run = runVigil(['serve'], { DATABASE_URL: 'mysql://nope', VIGIL_DATA_DIR: os.tmpdir() });
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain('DATABASE_URL must start with postgres://');
  });

  it('migrates and serves on a PostgreSQL server with DATABASE_URL', async () => {
    const { config, drop } = await createTestDatabaseConfig();
    try {
      const url = (config as { url: string }).url;
      const secret = randomBytes(32).toString('hex');
      const migrate = runVigil(['migrate'], { DATABASE_URL: url, VIGIL_SECRET_KEY: secret });
      expect(await migrate.exited, migrate.output()).toBe(0);
      expect(migrate.output()).toContain('migrations applied (postgres)');
      const port = await freePort();
      const token = adminToken();
      const serve = runVigil(['serve'], {
        DATABASE_URL: url,
        VIGIL_SECRET_KEY: secret,
        PORT: String(port),
        HOST: '127.0.0.1',
        VIGIL_ADMIN_TOKEN: token,
      });
      await serve.waitFor(/API listening/);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', database: 'ok' });
      serve.child.kill('SIGTERM');
      expect(await serve.exited, serve.output()).toBe(0);
      const noKey = runVigil(['serve'], { DATABASE_URL: url, PORT: String(port) });
      expect(await noKey.exited).toBe(1);
      expect(noKey.output()).toContain('VIGIL_SECRET_KEY is required');
    } finally {
      await drop();
    }
  });
});
