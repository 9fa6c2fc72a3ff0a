/**
 * `vigil engine …` on its own: the same commands and configuration as `src/main.ts` registers,
 * without the other command modules. `bin/vigil.js` loads its entry of the compiled build
 * (`scripts/build.mjs`), so that a local scan loads nothing of the server.
 */
import { defaultWorkerCount, SolidityScanPool } from '../engine/solidity/scan-pool.ts';
import { describeError, settleCommanderExit } from './errors.ts';

/**
 * Whether `argv` is a scan that will analyse in parallel if its tree is large: not `audit` (one
 * thread), not `--workers` given, not a help request.
 */
function mayScanInParallel(argv: string[]): boolean {
  const args = argv.slice(2);
  if (args[0] !== 'engine' || args[1] !== 'scan' || defaultWorkerCount() < 1) return false;
  return !args.some(
    (a, i) =>
      a === '--help' ||
      a === '-h' ||
      a.startsWith('--workers') ||
      a === '--type=audit' ||
      (a === '--type' && args[i + 1] === 'audit'),
  );
}

export async function engineMain(argv: string[]): Promise<void> {
  // The workers load the parser and the rules while this thread loads the engine commands.
  // Commander and the commands load after that (commander alone takes 10-18 ms).
  if (mayScanInParallel(argv)) void SolidityScanPool.startEarly(defaultWorkerCount());
  const [{ Command }, { registerEngineCommandsFromEnv }] = await Promise.all([
    import('commander'),
    import('./engine.ts'),
  ]);
  const env = process.env;
  const program = new Command()
    .name('vigil')
    .option('--debug', 'show the stack trace of an error')
    .showHelpAfterError()
    .exitOverride();
  registerEngineCommandsFromEnv(program, env);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (settleCommanderExit(err)) return;
    const { message, exitCode } = describeError(err);
    process.stderr.write(`vigil: ${message}\n`);
    if (argv.includes('--debug') || env.VIGIL_DEBUG === '1')
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = exitCode;
  }
}
