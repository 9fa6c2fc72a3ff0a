/**
 * Child processes of a benchmark (`vigil serve`, `vigil worker`): started from the repository's
 * root with the given environment, their last output kept for error messages, stopped when the
 * benchmark ends (also when it fails).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export interface Spawned {
  child: ChildProcess;
  output: string[];
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
});

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `node <nodeArgs>` in the repository's root with `env` added to this process's. */
export function spawnNode(nodeArgs: string[], env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: repositoryRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output };
}

/** SIGTERM, then SIGKILL after `timeoutMs`. */
export async function stopProcess(p: Spawned, timeoutMs = 20_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((resolve) => p.child.once('exit', resolve));
  p.child.kill('SIGTERM');
  const done = await Promise.race([exited.then(() => true), sleep(timeoutMs).then(() => false)]);
  if (!done) {
    p.child.kill('SIGKILL');
    await exited;
  }
}

/** Waits until `url` answers 2xx, failing early if the process exits. */
export async function waitFor(url: string, p: Spawned, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (p.child.exitCode !== null) throw new Error(`process exited: ${p.output.join('')}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} did not answer: ${p.output.join('')}`);
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
    server.on('error', reject);
  });
}
