/**
 * `vigil engine …` on its own: the same commands and configuration as `src/main.ts` registers,
 * without the other command modules. `bin/vigil.js` loads it as one bundle (see
 * `src/engine/bundle-cache.mjs`), so that a local scan starts without tsx.
 */
import { Command } from 'commander';
import { loadLlmConfig, loadRulesUrl } from '../config.ts';
import { registerEngineCommands } from './engine.ts';
import { describeError } from './errors.ts';

export async function engineMain(argv: string[]): Promise<void> {
  const env = process.env;
  const program = new Command()
    .name('vigil')
    .option('--debug', 'show the stack trace of an error')
    .showHelpAfterError()
    .exitOverride();
  const llm = loadLlmConfig(env);
  registerEngineCommands(program, {
    rulesUrl: loadRulesUrl(env),
    ...(llm ? { llm: { baseUrl: llm.baseUrl, apiKey: llm.apiKey ?? undefined, model: llm.model } } : {}),
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help')
      return;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      process.exitCode = 2;
      return;
    }
    const { message, exitCode } = describeError(err);
    process.stderr.write(`vigil: ${message}\n`);
    if (argv.includes('--debug') || env.VIGIL_DEBUG === '1')
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = exitCode;
  }
}
