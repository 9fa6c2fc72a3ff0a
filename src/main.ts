import { Command } from 'commander';
import { registerAdminCommands } from './cli/admin.ts';
import { registerFindingsAdminCommands } from './cli/admin-findings.ts';
import { registerPlatformAdminCommands } from './cli/admin-platform.ts';
import { registerEngineCommands } from './cli/engine.ts';
import { CliError } from './cli/http-client.ts';
import { runOpenApiCommand } from './cli/openapi.ts';
import { runProcesses } from './cli/runtime.ts';
import { registerScanCommand } from './cli/scan.ts';
import { registerSeedCommands } from './cli/seed.ts';
import { ConfigError, loadConfig, loadLlmConfig } from './config.ts';
import { migrateDatabase, openDatabase } from './db/client.ts';
import { AppError } from './errors.ts';

/** The `vigil` command line. The only reader of process.argv and process.env. */
export async function main(argv: string[]): Promise<void> {
  const env = process.env;
  const config = () => loadConfig(env);
  const program = new Command()
    .name('vigil')
    .description('Vigil security review platform server')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('start')
    .description(
      'run the API and the worker in one process (embedded PGlite in ./data unless DATABASE_URL is set)',
    )
    .action(() => runProcesses(config(), { api: true, worker: true }));
  program
    .command('serve')
    .description('run the HTTP API only')
    .action(() => runProcesses(config(), { api: true, worker: false }));
  program
    .command('worker')
    .description('run background jobs only')
    .action(() => runProcesses(config(), { api: false, worker: true }));
  program
    .command('migrate')
    .description('apply database migrations')
    .action(async () => {
      const cfg = config();
      const database = await openDatabase(cfg.database);
      try {
        await migrateDatabase(database);
        process.stdout.write(`migrations applied (${database.kind})\n`);
      } finally {
        await database.close();
      }
    });
  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document generated from the route schemas')
    .option('--output <file>', 'write it to a file')
    .option('--check <file>', 'fail when the file differs from the generated document')
    .action((o: { output?: string; check?: string }) => runOpenApiCommand(config(), o));
  const admin = registerAdminCommands(program, env);
  registerPlatformAdminCommands(admin, env);
  registerFindingsAdminCommands(admin, env);
  registerScanCommand(program, env);
  registerSeedCommands(program, config);
  const llm = loadLlmConfig(env);
  registerEngineCommands(
    program,
    llm ? { llm: { baseUrl: llm.baseUrl, apiKey: llm.apiKey ?? undefined, model: llm.model } } : {},
  );

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
    if (err instanceof ConfigError || err instanceof CliError || err instanceof AppError) {
      process.stderr.write(`vigil: ${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}
