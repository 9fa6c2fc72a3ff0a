import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabaseConfig } from '../helpers/database.ts';
import { freePort } from '../helpers/net.ts';

const root = path.resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-startfail-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `vigil start` and resolves with its exit code and outputs once it exits by itself. */
async function startFails(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), 'start'], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr, stdout };
}

/** One line on stderr naming the problem, no stack trace anywhere, a non-zero exit. */
function expectOneClearLine(
  result: { code: number | null; stderr: string; stdout: string },
  pattern: RegExp,
) {
  expect(result.code, result.stderr + result.stdout).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^vigil: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr + result.stdout).not.toMatch(/\n\s+at /);
}

const secret = () => randomBytes(32).toString('hex');

describe('vigil start exits with one clear line when it cannot start', () => {
  it('a bad variable', async () => {
    const result = await startFails({ VIGIL_DATA_DIR: await tempDir(), PORT: 'eighty' });
    expectOneClearLine(result, /PORT must be an integer/);
  });

  it('a port in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as net.AddressInfo).port;
    const { config, drop } = await createTestDatabaseConfig();
    cleanups.push(drop);
    const result = await startFails({
      VIGIL_DATA_DIR: await tempDir(),
      PORT: String(port),
      DATABASE_URL: (config as { url: string }).url,
      VIGIL_SECRET_KEY: secret(),
    });
    expectOneClearLine(result, new RegExp(`port ${port} .*already in use; .*PORT`));
  });

  it('a data folder that is a file', async () => {
    const file = path.join(await tempDir(), 'data');
    await writeFile(file, 'not a folder');
    const result = await startFails({ VIGIL_DATA_DIR: file, PORT: String(await freePort()) });
    expectOneClearLine(result, /data folder .* cannot be used.*VIGIL_DATA_DIR/);
  });

  it('a data folder whose postgres/ is not a PostgreSQL cluster', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'postgres'));
    await writeFile(path.join(dir, 'postgres', 'notes.txt'), 'something else');
    const result = await startFails({ VIGIL_DATA_DIR: dir, PORT: String(await freePort()) });
    expectOneClearLine(result, /is not a PostgreSQL data folder; move it away/);
  });

  it('an unreachable DATABASE_URL', async () => {
    const port = await freePort();
    const result = await startFails({
      VIGIL_DATA_DIR: await tempDir(),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/vigil`,
      VIGIL_SECRET_KEY: secret(),
    });
    expectOneClearLine(
      result,
      new RegExp(`cannot reach the database at 127\\.0\\.0\\.1:${port}/vigil \\(DATABASE_URL\\)`),
    );
  });

  it('a failed migration', async () => {
    const { config, drop } = await createTestDatabaseConfig({ empty: true });
    cleanups.push(drop);
    const url = (config as { url: string }).url;
    // A table of the first migration already exists with another shape: the migration fails.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('create table companies (legacy int)');
    await client.end();
    const result = await startFails({
      VIGIL_DATA_DIR: await tempDir(),
      DATABASE_URL: url,
      VIGIL_SECRET_KEY: secret(),
    });
    expectOneClearLine(result, /applying the database migrations failed: .*"companies" already exists/);
  });

  it('a bad VIGIL_ADMIN_TOKEN', async () => {
    const { config, drop } = await createTestDatabaseConfig();
    cleanups.push(drop);
    const result = await startFails({
      VIGIL_DATA_DIR: await tempDir(),
      PORT: String(await freePort()),
      DATABASE_URL: (config as { url: string }).url,
      VIGIL_SECRET_KEY: secret(),
      VIGIL_ADMIN_TOKEN: 'letmein',
    });
    expectOneClearLine(result, /VIGIL_ADMIN_TOKEN must look like vgl_u_/);
  });
});
