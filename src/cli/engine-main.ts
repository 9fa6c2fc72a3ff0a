/**
 * `vigil engine …` on its own: the same commands and configuration as `src/main.ts` registers,
 * without the other command modules. `bin/vigil.js` loads its entry of the compiled build
 * (`scripts/build.mjs`), so that a local scan loads nothing of the server.
 */
import { describeError, settleCommanderExit } from './errors.ts';

export async function engineMain(argv: string[]): Promise<void> {
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
