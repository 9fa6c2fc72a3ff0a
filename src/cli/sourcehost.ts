import type { Command } from 'commander';
import { CliError, callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

const collect = (value: string, previous: string[] = []) => [...previous, value];

function repositoryPath(repository: string): string {
  const match = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository);
  if (!match) throw new CliError(`"${repository}" is not a repository name: use owner/name.`);
  return `${encodeURIComponent(match[1]!)}/${encodeURIComponent(match[2]!)}`;
}

/** Adds the server options every command here takes. */
function serverCommand(parent: Command, name: string, description: string): Command {
  return parent
    .command(name)
    .description(description)
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--token <token>', 'user API token (default VIGIL_TOKEN)')
    .option('--json', 'print JSON instead of tables');
}

/**
 * `vigil sourcehost …` (repositories the integration reaches, linking them for scans on every
 * push, webhook deliveries) and `vigil leaderboard`, over HTTP like `vigil admin`.
 */
export function registerSourcehostCommands(program: Command, env: Env): void {
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const run = (cmd: Command, method: string, path: string, body?: unknown) =>
    callApi(opts(cmd), env, method, path, body);

  const sourcehost = program
    .command('sourcehost')
    .description('scanning on every push: repositories, links, webhook deliveries');

  serverCommand(
    sourcehost,
    'repos',
    'repositories the sourcehost integration can reach, and which are linked',
  )
    .argument('<companyId>')
    .option('--refresh', 'read the list from the source host again')
    .action(async (companyId: string, o: { refresh?: boolean }, cmd: Command) => {
      const result = (await run(
        cmd,
        'GET',
        `/api/v0/companies/${companyId}/sourcehost/repositories${o.refresh ? '?refresh=true' : ''}`,
      )) as { items: Array<Record<string, unknown> & { workspaces: Array<Record<string, unknown>> }> };
      printResult(
        opts(cmd).json
          ? result
          : result.items.map((r) => ({
              ...r,
              watching: r.workspaces
                .map(
                  (w) =>
                    `${w.prefix || '/'} (${(w.watchBranches as string[]).join(',') || 'default branch'})`,
                )
                .join('; '),
            })),
        opts(cmd).json,
        ['fullName', 'private', 'defaultBranch', 'linked', 'watching'],
      );
    });

  serverCommand(sourcehost, 'link', 'scan a repository on every push to its watched branches')
    .argument('<companyId>')
    .argument('<repository>', 'owner/name')
    .option('--prefix <path>', 'folder of the repository to scan')
    .option('--branch <name>', 'a watched branch (repeat; default: the default branch)', collect)
    .option('--type <type>', 'scan type: lite, standard or audit')
    .option('--fail-on <severity>', 'commit status failure at: critical, high, medium, low or informational')
    .action(
      async (
        companyId: string,
        repository: string,
        o: { prefix?: string; branch?: string[]; type?: string; failOn?: string },
        cmd: Command,
      ) => {
        if (o.type !== undefined && !['lite', 'standard', 'audit'].includes(o.type))
          throw new CliError(`--type must be lite, standard or audit (got "${o.type}").`);
        if (
          o.failOn !== undefined &&
          !['critical', 'high', 'medium', 'low', 'informational'].includes(o.failOn)
        )
          throw new CliError(
            `--fail-on must be critical, high, medium, low or informational (got "${o.failOn}").`,
          );
        const result = (await run(
          cmd,
          'PUT',
          `/api/v0/companies/${companyId}/sourcehost/repositories/${repositoryPath(repository)}/link`,
          {
            ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
            ...(o.branch ? { watchBranches: o.branch } : {}),
            ...(o.type ? { scanType: o.type } : {}),
            ...(o.failOn ? { failOn: o.failOn } : {}),
          },
        )) as { repository: string; workspace: Record<string, unknown> };
        printResult(
          opts(cmd).json ? result : { repository: result.repository, ...result.workspace },
          opts(cmd).json,
          ['repository', 'id', 'prefix', 'watchBranches', 'autoScanType', 'failOn'],
        );
      },
    );

  serverCommand(sourcehost, 'unlink', 'stop scanning a repository on push (its workspace and scans stay)')
    .argument('<companyId>')
    .argument('<repository>', 'owner/name')
    .option('--prefix <path>')
    .action(async (companyId: string, repository: string, o: { prefix?: string }, cmd: Command) => {
      const query = o.prefix !== undefined ? `?prefix=${encodeURIComponent(o.prefix)}` : '';
      await run(
        cmd,
        'DELETE',
        `/api/v0/companies/${companyId}/sourcehost/repositories/${repositoryPath(repository)}/link${query}`,
      );
      printResult({ repository, unlinked: true }, opts(cmd).json);
    });

  serverCommand(sourcehost, 'deliveries', 'webhook deliveries of the last 7 days, newest first')
    .argument('<companyId>')
    .option('--limit <n>', 'how many', '50')
    .option('--next <cursor>', 'the nextValue of the previous page')
    .action(async (companyId: string, o: { limit: string; next?: string }, cmd: Command) => {
      const query = new URLSearchParams({ limit: o.limit, ...(o.next ? { next: o.next } : {}) });
      const result = (await run(
        cmd,
        'GET',
        `/api/v0/companies/${companyId}/sourcehost/deliveries?${query}`,
      )) as {
        items: unknown[];
        nextValue: string | null;
      };
      printResult(opts(cmd).json ? result : result.items, opts(cmd).json, [
        'id',
        'event',
        'repository',
        'commit',
        'outcome',
        'reason',
        'scanIds',
        'receivedAt',
      ]);
      if (!opts(cmd).json && result.nextValue) process.stdout.write(`more: --next ${result.nextValue}\n`);
    });

  serverCommand(
    sourcehost,
    'redeliver',
    'process a stored delivery again (a scan it created is not created twice)',
  )
    .argument('<companyId>')
    .argument('<deliveryId>')
    .action(async (companyId: string, deliveryId: string, _o: unknown, cmd: Command) => {
      printResult(
        await run(
          cmd,
          'POST',
          `/api/v0/companies/${companyId}/sourcehost/deliveries/${deliveryId}/redeliver`,
        ),
        opts(cmd).json,
        ['id', 'event', 'outcome', 'reason', 'scanIds'],
      );
    });

  serverCommand(program, 'leaderboard', 'reviewers or teams of a repository ranked by confirmed findings')
    .argument('<repositoryId>')
    .option('--teams', 'rank teams instead of reviewers')
    .option('--team <teamId>', 'only this team')
    .option('--limit <n>', 'how many', '50')
    .option('--next <cursor>', 'the nextValue of the previous page')
    .action(
      async (
        repositoryId: string,
        o: { teams?: boolean; team?: string; limit: string; next?: string },
        cmd: Command,
      ) => {
        const query = new URLSearchParams({
          limit: o.limit,
          ...(o.teams ? { by: 'teams' } : {}),
          ...(o.team ? { team: o.team } : {}),
          ...(o.next ? { next: o.next } : {}),
        });
        const result = (await run(
          cmd,
          'GET',
          `/api/v0/repositories/${repositoryId}/leaderboard?${query}`,
        )) as {
          items: Array<
            Record<string, unknown> & {
              user: { username: string } | null;
              members: Array<{ username: string }>;
            }
          >;
          nextValue: string | null;
        };
        printResult(
          opts(cmd).json
            ? result
            : result.items.map((e) => ({
                ...e,
                who: e.user
                  ? e.user.username
                  : `team ${e.teamId} (${e.members.map((m) => m.username).join(', ')})`,
              })),
          opts(cmd).json,
          ['rank', 'who', 'score', 'confirmedFindings', 'rewards'],
        );
      },
    );
}
