import type { Command } from 'commander';
import { callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

const FINDING_COLUMNS = ['number', 'title', 'status', 'severity', 'id'];
const LABEL_COLUMNS = ['id', 'name', 'reviewerRead', 'reviewerUse', 'archivedAt'];
const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `vigil admin findings …` and `vigil admin labels …`: filing findings, changing status,
 * severity, assignee, labels and duplicates, listing all findings, and managing labels, through
 * the same extension endpoints the API offers.
 */
export function registerFindingsAdminCommands(admin: Command, env: Env): void {
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const run = (cmd: Command, method: string, path: string, body?: unknown) =>
    callApi(opts(cmd), env, method, path, body);
  const findingPath = (repo: string, ref: string) =>
    `/api/v0/repositories/${repo}/findings/${encodeURIComponent(ref)}`;
  const show = (cmd: Command, value: unknown) => printResult(value, opts(cmd).json, FINDING_COLUMNS);

  const findings = admin.command('findings').description('findings of repositories');
  findings
    .command('list')
    .description('list the findings you can see (GET /api/v0/repositories/all-findings)')
    .option('--limit <n>', 'page size (0-100)')
    .option('--order-by <order>', 'for example number_desc, severity_desc')
    .option('--next <cursor>', 'nextValue of the previous page')
    .option('--status <list>', 'comma-separated statuses')
    .option('--severity <list>', 'comma-separated severities')
    .option('--repository <id>', 'repository id (repeatable)', collect)
    .option('-s, --search <s>', 'search syntax, for example "status:new label:bug"')
    .option('-q, --query <q>', 'number, title or description')
    .action(async (o, cmd: Command) => {
      const params = new URLSearchParams();
      const set = (key: string, value: string | undefined) => {
        if (value !== undefined) params.set(key, value);
      };
      set('limit', o.limit);
      set('order_by', o.orderBy);
      set('next', o.next);
      set('status', o.status);
      set('severity', o.severity);
      set('s', o.search);
      set('q', o.query);
      for (const id of (o.repository as string[] | undefined) ?? []) params.append('repositories', id);
      const result = (await run(cmd, 'GET', `/api/v0/repositories/all-findings?${params}`)) as {
        findings: unknown[];
        filteredTotal: number;
        nextValue: string | null;
      };
      if (opts(cmd).json) return printResult(result, true);
      printResult(result.findings, false, FINDING_COLUMNS);
      process.stdout.write(
        `\n${result.filteredTotal} in all${result.nextValue ? `; next page: --next ${result.nextValue}` : ''}\n`,
      );
    });
  findings
    .command('create')
    .description('file a finding on a repository')
    .requiredOption('--repository <id>')
    .requiredOption('--title <title>')
    .requiredOption('--severity <severity>')
    .option('--description <text>', 'markdown', '')
    .option('--file <path>', 'related file (repeatable)', collect)
    .option('--label <id>', 'label id (repeatable)', collect)
    .action(async (o, cmd: Command) => {
      const body = {
        title: o.title,
        description: o.description,
        severity: o.severity,
        ...(o.file ? { relatedFiles: (o.file as string[]).map((path) => ({ path })) } : {}),
        ...(o.label ? { labels: o.label } : {}),
      };
      show(cmd, await run(cmd, 'POST', `/api/v0/repositories/${o.repository}/findings`, body));
    });
  findings
    .command('status <repository> <finding> <status>')
    .description('change the status of a finding (id or number)')
    .action(async (repo: string, ref: string, status: string, _o, cmd: Command) => {
      show(cmd, await run(cmd, 'PUT', `${findingPath(repo, ref)}/status`, { status }));
    });
  findings
    .command('severity <repository> <finding> <severity>')
    .description('change the severity of a finding')
    .action(async (repo: string, ref: string, severity: string, _o, cmd: Command) => {
      show(cmd, await run(cmd, 'PUT', `${findingPath(repo, ref)}/severity`, { severity }));
    });
  findings
    .command('assign <repository> <finding> [username]')
    .description('assign a finding to a user, or unassign it without a username')
    .action(async (repo: string, ref: string, username: string | undefined, _o, cmd: Command) => {
      show(cmd, await run(cmd, 'PUT', `${findingPath(repo, ref)}/assignee`, { assignee: username ?? null }));
    });
  findings
    .command('label <repository> <finding>')
    .description('add and remove labels of a finding')
    .option('--add <labelId>', 'label to add (repeatable)', collect)
    .option('--remove <labelId>', 'label to remove (repeatable)', collect)
    .action(async (repo: string, ref: string, o, cmd: Command) => {
      show(
        cmd,
        await run(cmd, 'PATCH', `${findingPath(repo, ref)}/labels`, {
          add: o.add ?? [],
          remove: o.remove ?? [],
        }),
      );
    });
  findings
    .command('duplicate <repository> <finding> [of]')
    .description('mark a finding a duplicate of another (id or number), or unmark it without one')
    .option('--description <text>', 'description of the duplicate group')
    .action(async (repo: string, ref: string, of: string | undefined, o, cmd: Command) => {
      const body = { duplicateOf: of ?? null, ...(o.description ? { description: o.description } : {}) };
      show(cmd, await run(cmd, 'PUT', `${findingPath(repo, ref)}/duplicate-of`, body));
    });

  const labels = admin.command('labels').description('labels of repositories');
  labels.command('list <repository>').action(async (repo: string, _o, cmd: Command) => {
    const result = (await run(cmd, 'GET', `/api/v0/repositories/${repo}/labels`)) as { labels: unknown[] };
    printResult(result.labels, opts(cmd).json, LABEL_COLUMNS);
  });
  labels
    .command('create <repository> <name>')
    .option('--description <text>')
    .option('--reviewer-use', 'reviewers may put it on their findings')
    .option('--reviewer-hidden', 'reviewers do not see it')
    .action(async (repo: string, name: string, o, cmd: Command) => {
      const body = {
        name,
        ...(o.description ? { description: o.description } : {}),
        reviewerUse: Boolean(o.reviewerUse),
        reviewerRead: !o.reviewerHidden,
      };
      printResult(
        await run(cmd, 'POST', `/api/v0/repositories/${repo}/labels`, body),
        opts(cmd).json,
        LABEL_COLUMNS,
      );
    });
  labels
    .command('archive <repository> <labelId>')
    .action(async (repo: string, labelId: string, _o, cmd: Command) => {
      printResult(
        await run(cmd, 'PATCH', `/api/v0/repositories/${repo}/labels/${labelId}`, { archived: true }),
        opts(cmd).json,
        LABEL_COLUMNS,
      );
    });
  labels
    .command('delete <repository> <labelId>')
    .action(async (repo: string, labelId: string, _o, cmd: Command) => {
      await run(cmd, 'DELETE', `/api/v0/repositories/${repo}/labels/${labelId}`);
      process.stdout.write('deleted\n');
    });
}
