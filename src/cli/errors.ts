import { ConfigError } from '../config.ts';
import { AppError } from '../errors.ts';
import { CliError } from './http-client.ts';

const DATABASE_CODES: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user may not connect',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up or shutting down',
};

/**
 * What a user of the command line sees for an error: one message saying what is wrong and what to
 * do, and the exit code. The stack trace is for `--debug` only.
 */
export function describeError(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode ?? 1 };
  if (err instanceof ConfigError || err instanceof AppError) return { message: err.message, exitCode: 1 };
  const e = err as { code?: unknown; message?: unknown; path?: unknown; address?: unknown; port?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  const where = typeof e?.address === 'string' ? `${e.address}${e.port ? `:${String(e.port)}` : ''}` : '';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'ETIMEDOUT')
    return {
      message: `Cannot connect${where ? ` to ${where}` : ''} (${code}). If this is the database, is PostgreSQL running and is DATABASE_URL right? Unset DATABASE_URL to use the embedded database.`,
      exitCode: 1,
    };
  if (code && DATABASE_CODES[code])
    return {
      message: `The database refused the connection: ${DATABASE_CODES[code]} (${text}). Check DATABASE_URL.`,
      exitCode: 1,
    };
  if (code === 'EADDRINUSE')
    return {
      message: `The port is already in use${where ? ` (${where})` : ''}. Stop the other process or set PORT.`,
      exitCode: 1,
    };
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return {
      message: `${typeof e.path === 'string' ? e.path : 'A file'}: no such file or directory.`,
      exitCode: 1,
    };
  if (code === 'EACCES' || code === 'EPERM')
    return { message: `Permission denied${typeof e.path === 'string' ? `: ${e.path}` : ''}.`, exitCode: 1 };
  return {
    message: `Unexpected error: ${text}. Run again with --debug to see where it happened.`,
    exitCode: 1,
  };
}

/**
 * Settles an error commander threw for help, a version or a usage mistake (commander has already
 * printed what to say): true when it was one, with the exit code set (2 for a usage mistake).
 */
export function settleCommanderExit(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('commander.')) return false;
  if (code !== 'commander.helpDisplayed' && code !== 'commander.version' && code !== 'commander.help')
    process.exitCode = 2;
  return true;
}
