import { execFile } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { vi } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** What a run of the `vigil` binary gave back. */
export interface VigilRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `vigil` binary (bin/vigil.js, from the checkout) with a clean environment whose
 * home and config folder are `home`; never throws, hands back the exit code and both streams.
 */
export function runVigil(
  args: string[],
  options: { home: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<VigilRun> {
  return new Promise<VigilRun>((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'bin/vigil.js'), ...args],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: options.home,
          VIGIL_CONFIG_DIR: path.join(options.home, 'config'),
          LOG_LEVEL: 'silent',
          ...options.env,
        },
        timeout: options.timeoutMs ?? 120_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs a `vigil` command in this process: `register` adds the commands to a fresh program, `args`
 * are parsed as typed by a user. Returns what the command printed to stdout.
 */
export async function runCli(register: (program: Command) => void, args: string[]): Promise<string> {
  const program = new Command().exitOverride();
  register(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    spy.mockRestore();
  }
  return out;
}
