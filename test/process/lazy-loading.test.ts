import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { waitFor } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];
let child: ChildProcess | undefined;

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/**
 * A module-resolution hook for `node --import`: every module the process resolves (static and
 * dynamic `import`, the way the compiled build loads npm packages) is appended to a log file.
 */
async function resolutionLogger(dir: string, log: string): Promise<string> {
  const hooks = path.join(dir, 'hooks.mjs');
  const register = path.join(dir, 'register.mjs');
  await writeFile(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
  return resolved;
}
`,
  );
  await writeFile(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  return register;
}

/** The packages a process on the defaults uses only when configured (S3, an LLM, SMTP, Redis). */
const ON_DEMAND = ['@aws-sdk/client-s3', '@aws-sdk/s3-request-presigner', 'openai', 'nodemailer', 'ioredis'];

describe('vigil start on the defaults (embedded PostgreSQL) loads the optional integrations only on first use', () => {
  it('serves /healthz without having loaded the S3, LLM, SMTP or Redis packages', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-lazy-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'resolved.log');
    await writeFile(log, '');
    const register = await resolutionLogger(dir, log);
    const port = await freePort();

    child = spawn(process.execPath, ['--import', register, path.join(root, 'bin/vigil.js'), 'start'], {
      cwd: root,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATABASE_URL: '',
        VIGIL_DATA_DIR: dir,
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => {
      output += String(d);
    });
    child.stderr!.on('data', (d) => {
      output += String(d);
    });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    await waitFor(
      async () => {
        if (child!.exitCode !== null) throw new Error(`vigil start exited early:\n${output}`);
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
        return res?.status === 200;
      },
      { what: () => `/healthz of vigil start:\n${output}`, timeoutMs: 90_000 },
    );
    child.kill('SIGTERM');
    expect(await exited, output).toBe(0);

    const resolved = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    const packageOf = (url: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    const packages = new Set(resolved.map(packageOf).filter((p): p is string => p !== undefined));
    // The hook saw the packages a start does load: it would see the others too.
    expect(packages).toContain('fastify');
    expect(packages).toContain('pg');
    expect(packages).toContain('pg-boss');
    for (const name of ON_DEMAND) expect(packages, `${name} was loaded at start`).not.toContain(name);
  }, 150_000);
});
