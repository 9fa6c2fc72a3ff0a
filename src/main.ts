import { Command } from 'commander';
import { registerAdminCommands } from './cli/admin.ts';
import { registerFindingsAdminCommands } from './cli/admin-findings.ts';
import { registerPlatformAdminCommands } from './cli/admin-platform.ts';
import { registerAiCommands } from './cli/ai.ts';
import { registerClientCommands } from './cli/client-commands.ts';
import { registerCommentCommands } from './cli/comments.ts';
import { registerEngineCommandsFromEnv } from './cli/engine.ts';
import { describeError, settleCommanderExit } from './cli/errors.ts';
import { registerScanCommand } from './cli/scan.ts';
import { registerSeedCommands } from './cli/seed-command.ts';
import { registerSourcehostCommands } from './cli/sourcehost.ts';
import { loadConfig } from './config.ts';

/**
 * The server, the database and the OpenAPI generator load only for the commands that use them,
 * so that `vigil --help`, the HTTP clients and `vigil engine scan` start without them.
 */
const runtime = () => import('./cli/runtime.ts');

/** The `vigil` command line. The only reader of process.argv and process.env. */
export async function main(argv: string[]): Promise<void> {
  const env = process.env;
  const config = () => loadConfig(env);
  const program = new Command()
    .name('vigil')
    .description('Vigil security review platform server')
    .option('--debug', 'show the stack trace of an error')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('start')
    .description(
      'run the API and the worker in one process (embedded PostgreSQL in ./data/postgres unless DATABASE_URL is set)',
    )
    .action(async () => (await runtime()).runProcesses(config(), { api: true, worker: true }));
  program
    .command('serve')
    .description('run the HTTP API only')
    .action(async () => (await runtime()).runProcesses(config(), { api: true, worker: false }));
  program
    .command('worker')
    .description('run background jobs only')
    .action(async () => (await runtime()).runProcesses(config(), { api: false, worker: true }));
  program
    .command('migrate')
    .description('apply database migrations')
    .action(async () => {
      const cfg = config();
      const { describeStartupError, StartupError } = await runtime();
      const { migrateDatabase, openDatabase } = await import('./db/client.ts');
      const { MigrationError } = await import('./container.ts');
      let database: Awaited<ReturnType<typeof openDatabase>> | null = null;
      try {
        database = await openDatabase(cfg.database);
        await migrateDatabase(database).catch((err) => {
          throw new MigrationError(err);
        });
        process.stdout.write(`migrations applied (${database.kind})\n`);
      } catch (err) {
        throw new StartupError(describeStartupError(err, cfg), { cause: err });
      } finally {
        await database?.close();
      }
    });
  program
    .command('openapi')
    .description('print the OpenAPI 3.1 document generated from the route schemas')
    .option('--output <file>', 'write it to a file')
    .option('--check <file>', 'fail when the file differs from the generated document')
    .action(async (o: { output?: string; check?: string }) =>
      (await import('./cli/openapi.ts')).runOpenApiCommand(config(), o),
    );
  const admin = registerAdminCommands(program, env);
  registerPlatformAdminCommands(admin, env);
  registerFindingsAdminCommands(admin, env);
  registerScanCommand(program, env);
  registerSourcehostCommands(program, env);
  registerAiCommands(program, env);
  registerCommentCommands(program, env);
  registerClientCommands(program, env);
  registerSeedCommands(program, config);
  registerEngineCommandsFromEnv(program, env);

  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (settleCommanderExit(err)) return;
    const name = err instanceof Error ? err.name : '';
    if (name === 'StartupError' || name === 'EmbeddedServerError') {
      // A start that failed: one line, and out now (timers of half-started parts must not keep
      // the process alive).
      process.stderr.write(`vigil: ${(err as Error).message}\n`);
      process.exit(1);
    }
    const { isConnectionError } = await import('./db/client.ts');
    if (isConnectionError(err)) {
      let line = `could not reach the database: ${(err as Error).message}`;
      try {
        line = (await runtime()).describeStartupError(err, loadConfig(env));
      } catch {
        // the configuration itself is broken: the plain message is all there is
      }
      process.stderr.write(`vigil: ${line}\n`);
      process.exit(1);
    }
    // No stack trace for users: what is wrong and what to do; --debug (or VIGIL_DEBUG=1) adds the trace.
    const { message, exitCode } = describeError(err);
    process.stderr.write(`vigil: ${message}\n`);
    if (argv.includes('--debug') || env.VIGIL_DEBUG === '1')
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = exitCode;
  }
}
