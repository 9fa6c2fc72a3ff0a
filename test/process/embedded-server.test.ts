import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Real `vigil` processes on one data folder and its embedded PostgreSQL server: they share one
 * server, and its data survive restarts and a SIGKILL of everything.
 */
const root = path.resolve(import.meta.dirname, '../..');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  for (const dir of dirs) {
    await stopServerOf(dir);
    await rm(dir, { recursive: true, force: true });
  }
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-embedded-'));
  dirs.push(dir);
  return dir;
}

async function serverState(dir: string): Promise<{ pid: number; port: number } | null> {
  return JSON.parse(await readFile(path.join(dir, 'postgres.state.json'), 'utf8').catch(() => 'null'));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a server a failed test may have left (the last vigil process normally stops it). */
async function stopServerOf(dir: string): Promise<void> {
  const state = await serverState(dir);
  if (state && alive(state.pid)) {
    process.kill(state.pid, 'SIGINT');
    await waitFor(() => !alive(state.pid), { what: 'the server to stop', timeoutMs: 30_000 }).catch(
      () => undefined,
    );
  }
}

function vigil(args: string[], env: Record<string, string>, options: { detached?: boolean } = {}) {
  const child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), ...args], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
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
  const waitForOutput = (pattern: RegExp) =>
    waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`vigil ${args.join(' ')} exited early:\n${output}`);
        return pattern.test(output);
      },
      { what: () => `${pattern} in:\n${output}`, timeoutMs: 60_000 },
    );
  return { child, exited, waitFor: waitForOutput, output: () => output };
}

async function stop(run: ReturnType<typeof vigil>): Promise<void> {
  run.child.kill('SIGTERM');
  expect(await run.exited).toBe(0);
}

interface Curl {
  token: string | null;
  url: string;
}

/** The `curl` lines `vigil seed demo` prints. */
function printedCurls(output: string): Curl[] {
  return output
    .split('\n')
    .filter((line) => line.trim().startsWith('curl '))
    .map((line) => {
      const token = /Bearer ([^"]+)"/.exec(line)?.[1] ?? null;
      const url = /(https?:\/\/\S+?)"?$/.exec(line.trim())?.[1] ?? '';
      return { token, url };
    });
}

/** Runs each printed curl against `port`; returns status and body per line. */
async function runCurls(curls: Curl[], port: number): Promise<{ status: number; body: string }[]> {
  return Promise.all(
    curls.map(async ({ token, url }) => {
      const target = new URL(url);
      target.port = String(port);
      const res = await fetch(target, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      return { status: res.status, body: await res.text() };
    }),
  );
}

describe('vigil processes on one data folder share one embedded PostgreSQL server', () => {
  it('npm start and vigil seed demo at once: every printed curl works, also after a restart', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const env = { VIGIL_DATA_DIR: dir, PORT: String(port) };
    const start = vigil(['start'], env);
    const seed = vigil(['seed', 'demo'], env);
    expect(await seed.exited, seed.output()).toBe(0);
    await start.waitFor(/API listening/);
    const curls = printedCurls(seed.output());
    expect(curls.length).toBeGreaterThanOrEqual(4);
    const first = await runCurls(curls, port);
    for (const [i, res] of first.entries()) expect(res.status, `${curls[i]!.url}: ${res.body}`).toBe(200);

    const state = await serverState(dir);
    expect(state).not.toBeNull();
    await stop(start);
    // The last vigil process on the folder stopped the server.
    await waitFor(() => !alive(state!.pid), { what: 'the embedded server to stop', timeoutMs: 60_000 });

    const again = vigil(['start'], env);
    await again.waitFor(/API listening/);
    const second = await runCurls(curls, port);
    expect(second).toEqual(first);
    await stop(again);
  }, 240_000);

  it('two vigil start on one folder serve the same data through one server', async () => {
    const dir = await dataDir();
    const [portA, portB] = [await freePort(), await freePort()];
    const a = vigil(['start'], { VIGIL_DATA_DIR: dir, PORT: String(portA) });
    const b = vigil(['start'], { VIGIL_DATA_DIR: dir, PORT: String(portB) });
    await a.waitFor(/API listening/);
    await b.waitFor(/API listening/);
    const seed = vigil(['seed', 'demo'], { VIGIL_DATA_DIR: dir, PORT: String(portA) });
    expect(await seed.exited, seed.output()).toBe(0);
    const curls = printedCurls(seed.output());
    const viaA = await runCurls(curls, portA);
    const viaB = await runCurls(curls, portB);
    for (const res of viaA) expect(res.status, res.body).toBe(200);
    // Reports link rule pages on the server that answered: the same data apart from that address.
    const sameAddress = viaB.map((res) => ({
      ...res,
      body: res.body.replaceAll(`localhost:${portB}/`, `localhost:${portA}/`),
    }));
    expect(sameAddress).toEqual(viaA);
    // One server: both attached to it, one postmaster for the folder.
    const state = await serverState(dir);
    const attached = await readdir(path.join(dir, 'postgres.attached'));
    expect(attached.sort()).toEqual([String(a.child.pid), String(b.child.pid)].sort());

    // The starter leaves first: the server stays for the other process.
    await stop(a);
    expect(alive(state!.pid)).toBe(true);
    expect((await runCurls(curls, portB)).map((r) => r.status)).toEqual(viaA.map(() => 200));
    await stop(b);
    await waitFor(() => !alive(state!.pid), { what: 'the embedded server to stop', timeoutMs: 60_000 });
  }, 240_000);

  it('SIGKILL of the whole process group (and of the server), then start: the data are intact', async () => {
    const dir = await dataDir();
    const port = await freePort();
    const env = { VIGIL_DATA_DIR: dir, PORT: String(port) };
    const start = vigil(['start'], env, { detached: true });
    await start.waitFor(/API listening/);
    const seed = vigil(['seed', 'demo'], env);
    expect(await seed.exited, seed.output()).toBe(0);
    const curls = printedCurls(seed.output());
    const before = await runCurls(curls, port);

    // Everything of the group at once; the server runs in its own group and is orphaned.
    const state = await serverState(dir);
    process.kill(-start.child.pid!, 'SIGKILL');
    await start.exited;
    expect(alive(state!.pid)).toBe(true);

    // Next start adopts the orphaned server.
    const adopting = vigil(['start'], env, { detached: true });
    await adopting.waitFor(/API listening/);
    expect((await serverState(dir))!.pid).toBe(state!.pid);
    expect(await runCurls(curls, port)).toEqual(before);

    // Again, now killing the server too: a stale postmaster.pid and dead attachments remain.
    const adopted = (await serverState(dir))!;
    process.kill(-adopting.child.pid!, 'SIGKILL');
    process.kill(adopted.pid, 'SIGKILL');
    await adopting.exited;
    await waitFor(() => !alive(adopted.pid), { what: 'the server to die', timeoutMs: 60_000 });
    // Its backends exit once the postmaster is gone.
    await waitFor(
      async () => {
        const ps = await readFile(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => '');
        return ps !== '';
      },
      { what: 'postmaster.pid to be left behind', timeoutMs: 60_000 },
    );

    const recovered = vigil(['start'], env);
    await recovered.waitFor(/API listening/);
    expect((await serverState(dir))!.pid).not.toBe(adopted.pid);
    expect(await runCurls(curls, port)).toEqual(before);
    await stop(recovered);
  }, 300_000);
});
