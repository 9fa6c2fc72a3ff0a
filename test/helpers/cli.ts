import { Command } from 'commander';
import { vi } from 'vitest';

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
