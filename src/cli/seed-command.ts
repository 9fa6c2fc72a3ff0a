import type { Command } from 'commander';
import type { Config } from '../config.ts';

/** `vigil seed demo`; the seeding code (and the server it needs) loads only when the command runs. */
export function registerSeedCommands(program: Command, loadConfig: () => Config): void {
  const seed = program.command('seed').description('fill an instance with data');
  seed
    .command('demo')
    .description(
      'fill an empty instance with a demo: a company, users in every role, two repositories, findings in every status, a report and a completed scan',
    )
    .action(async () => {
      const { runSeedDemo } = await import('./seed.ts');
      await runSeedDemo(loadConfig(), { out: (text) => process.stdout.write(text) });
    });
}
