import type { Command } from 'commander';
import { severities } from '../db/schema/index.ts';
import { isUuid } from '../strings.ts';
import { UsageError } from './cli-error.ts';
import { printResult } from './http-client.ts';
import { cliClient, expectOk, readStoredLogin, resolveConnection, writeStoredLogin } from './settings.ts';

type Env = Record<string, string | undefined>;

interface ClientOptions {
  url?: string;
  key?: string;
  token?: string;
  json?: boolean;
}

const USER_TOKEN_HINT = 'pass --token, set VIGIL_TOKEN or run "vigil login --token vgl_u_…"';

const PROVIDERS = ['tracker_a', 'tracker_b'] as const;
const SCAN_STATUSES = ['preparing', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;

function requireUuid(what: string, value: string): string {
  if (!isUuid(value)) throw new UsageError(`${what} must be a UUID (got "${value}").`);
  return value;
}

function requireProvider(value: string): (typeof PROVIDERS)[number] {
  const found = PROVIDERS.find((p) => p === value);
  if (!found) throw new UsageError(`The provider must be one of ${PROVIDERS.join(', ')} (got "${value}").`);
  return found;
}

/** A scanner API client with the service key from --key, VIGIL_API_KEY or the login. */
async function serviceClient(options: ClientOptions, env: Env) {
  const connection = await resolveConnection(options, env);
  if (!connection.key)
    throw new UsageError(
      'No service key: pass --key, set VIGIL_API_KEY or run "vigil login --key vgl_sk_…".',
    );
  return cliClient({ url: connection.url, credential: connection.key });
}

/**
 * A client of a person (the user token from --token, VIGIL_TOKEN or the login) for the scanner
 * API, and the company it acts for: --company, else the only company the user belongs to.
 */
async function personClient(options: ClientOptions & { company?: string }, env: Env, what: string) {
  const connection = await resolveConnection(options, env);
  if (!connection.token)
    throw new UsageError(`${what} needs a user token (it acts as a person): ${USER_TOKEN_HINT}.`);
  if (!connection.token.startsWith('vgl_u_'))
    throw new UsageError(`${what} needs a user token (vgl_u_…), not a service key: ${USER_TOKEN_HINT}.`);
  const api = cliClient({ url: connection.url, credential: connection.token });
  if (options.company) return { api, companyId: requireUuid('--company', options.company) };
  const session = expectOk(await api.GET('/api/v0/session'), 'Reading your companies', {
    401: `Check the user token: ${USER_TOKEN_HINT}.`,
  });
  const companies = session.companies.filter((c) => c.role !== null);
  if (companies.length === 1) return { api, companyId: companies[0]!.id };
  if (companies.length === 0)
    throw new UsageError(`${session.username} belongs to no company: pass --company <companyId>.`);
  throw new UsageError(
    `${session.username} belongs to ${companies.length} companies; pass --company with one of:\n${companies
      .map((c) => `  ${c.id}  ${c.handle}  ${c.name}`)
      .join('\n')}`,
  );
}

function withServiceOptions(command: Command): Command {
  return command
    .option('--url <url>', 'server URL (default VIGIL_URL, the login, or http://localhost:3000)')
    .option('--key <key>', 'service key vgl_sk_… (default VIGIL_API_KEY or the login)')
    .option('--json', 'print JSON instead of a table');
}

const opts = (cmd: Command) => cmd.optsWithGlobals() as ClientOptions;

/** `vigil login`, `vigil credits`, `vigil scans …`, `vigil tickets …`: the scanner API from the command line. */
export function registerClientCommands(program: Command, env: Env): void {
  program
    .command('login')
    .description(
      'store the server URL and a credential (a service key and/or a user token) in the user config folder, so that later commands need no flags',
    )
    .option('--url <url>', 'server URL', 'http://localhost:3000')
    .option('--key <key>', 'organization service key vgl_sk_… (for scan, credits, scans, tickets)')
    .option('--token <token>', 'user API token vgl_u_… (for admin commands and drafts publish)')
    .action(async (o: { url: string; key?: string; token?: string }) => {
      if (!o.key && !o.token)
        throw new UsageError('Pass --key vgl_sk_… and/or --token vgl_u_… to log in with.');
      if (o.key && !o.key.startsWith('vgl_sk_'))
        throw new UsageError('--key takes an organization service key (vgl_sk_…).');
      if (o.token && !o.token.startsWith('vgl_u_'))
        throw new UsageError('--token takes a user API token (vgl_u_…).');
      const url = o.url.replace(/\/+$/, '');
      if (o.key) {
        const api = cliClient({ url, credential: o.key });
        expectOk(await api.GET('/api/scanner/v1/credits'), 'Checking the service key');
      }
      if (o.token) {
        const api = cliClient({ url, credential: o.token });
        // Any signed-in user may list guilds: a cheap check that the token is accepted.
        expectOk(await api.GET('/api/v0/guilds'), 'Checking the user token');
      }
      const previous = await readStoredLogin(env);
      const sameServer = previous.url === url;
      const file = await writeStoredLogin(env, {
        url,
        ...(o.key ? { key: o.key } : sameServer && previous.key ? { key: previous.key } : {}),
        ...(o.token ? { token: o.token } : sameServer && previous.token ? { token: previous.token } : {}),
      });
      process.stdout.write(`Logged in to ${url}; saved in ${file} (readable by you only).\n`);
    });

  withServiceOptions(program.command('credits').description('the organization’s scan credits')).action(
    async (_o, cmd: Command) => {
      const o = opts(cmd);
      const api = await serviceClient(o, env);
      const balances = expectOk(await api.GET('/api/scanner/v1/credits'), 'Reading the credits');
      if (o.json) return printResult(balances, true);
      process.stdout.write(
        `purchased ${balances.purchased}, used ${balances.used}, reserved ${balances.reserved}, remaining ${balances.remaining}\n`,
      );
      printResult(
        Object.entries(balances.scanTypes).map(([type, a]) => ({
          type,
          cost: a.cost,
          available: a.available ? 'yes' : 'no',
          reason: a.reason ?? '',
        })),
        false,
      );
    },
  );

  const scans = program.command('scans').description('scans of the organization');
  withServiceOptions(scans.command('list').description('the latest scans, newest first'))
    .option('--status <status>', `only scans in this status: ${SCAN_STATUSES.join(', ')}`)
    .option('--workspace <id>', "only this workspace's scans")
    .option('--limit <n>', 'how many (1 to 100)', '20')
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd) as ClientOptions & { status?: string; workspace?: string; limit: string };
      const workspaceId =
        o.workspace === undefined ? undefined : requireUuid('The workspace id', o.workspace);
      const status = o.status === undefined ? undefined : SCAN_STATUSES.find((s) => s === o.status);
      if (o.status !== undefined && !status)
        throw new UsageError(`--status must be one of ${SCAN_STATUSES.join(', ')} (got "${o.status}").`);
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new UsageError(`--limit must be a whole number from 1 to 100 (got "${o.limit}").`);
      const api = await serviceClient(o, env);
      const list = expectOk(
        await api.GET('/api/scanner/v1/scans', {
          params: {
            query: { limit, ...(status ? { status } : {}), ...(workspaceId ? { workspaceId } : {}) },
          },
        }),
        'Listing the scans',
      );
      printResult(
        o.json
          ? list.scans
          : list.scans.map((s) => ({
              id: s.id,
              type: s.type,
              status: s.status,
              files: `${s.progress.filesDone}/${s.progress.filesTotal}`,
              findings: s.findingsCount,
              createdAt: s.createdAt,
            })),
        o.json,
      );
    });
  withServiceOptions(scans.command('show <scanId>').description('status and progress of a scan')).action(
    async (scanId: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const api = await serviceClient(o, env);
      const scan = expectOk(
        await api.GET('/api/scanner/v1/scans/{scanId}', {
          params: { path: { scanId: requireUuid('The scan id', scanId) } },
        }),
        'Reading the scan',
      );
      printResult(scan, o.json, [
        'id',
        'type',
        'status',
        'createdAt',
        'completedAt',
        'findingsCount',
        'progress',
        'error',
      ]);
    },
  );
  withServiceOptions(scans.command('cancel <scanId>').description('cancel a queued or running scan')).action(
    async (scanId: string, _o, cmd: Command) => {
      const o = opts(cmd);
      const api = await serviceClient(o, env);
      const scan = expectOk(
        await api.POST('/api/scanner/v1/scans/{scanId}/cancel', {
          params: { path: { scanId: requireUuid('The scan id', scanId) } },
        }),
        'Cancelling the scan',
        { 409: 'Only a queued or running scan can be cancelled.' },
      );
      printResult(scan, o.json, ['id', 'status', 'cancelledAt']);
    },
  );

  const tickets = program
    .command('tickets')
    .description('tickets of findings in the connected issue trackers');
  withServiceOptions(
    tickets.command('list <findingId>').description('the tickets linked to a finding'),
  ).action(async (findingId: string, _o, cmd: Command) => {
    const o = opts(cmd);
    const api = await serviceClient(o, env);
    const result = expectOk(
      await api.GET('/api/scanner/v1/findings/{findingId}/tickets', {
        params: { path: { findingId: requireUuid('The finding id', findingId) } },
      }),
      'Listing the tickets',
    );
    printResult(result.tickets, o.json, ['provider', 'key', 'title', 'status', 'source', 'url']);
  });
  withServiceOptions(
    tickets
      .command('link <findingId> <provider> <issueRef>')
      .description(
        `link a finding to an existing ticket (provider: ${PROVIDERS.join(', ')}; issueRef: key or URL)`,
      ),
  ).action(async (findingId: string, provider: string, issueRef: string, _o, cmd: Command) => {
    const o = opts(cmd);
    const body = { provider: requireProvider(provider), issueRef };
    const api = await serviceClient(o, env);
    const result = expectOk(
      await api.POST('/api/scanner/v1/findings/{findingId}/tickets', {
        params: { path: { findingId: requireUuid('The finding id', findingId) } },
        body,
      }),
      'Linking the ticket',
      { 409: 'The finding is already linked to another ticket of this provider.' },
    );
    if (o.json) return printResult(result, true);
    process.stdout.write(
      `${result.linked ? 'linked' : 'already linked'}: ${result.ticket.key} ${result.ticket.url}\n`,
    );
  });
  withServiceOptions(
    tickets
      .command('send <findingId> <provider>')
      .description(
        `create a ticket from a finding in the saved destination (provider: ${PROVIDERS.join(', ')})`,
      ),
  ).action(async (findingId: string, provider: string, _o, cmd: Command) => {
    const o = opts(cmd);
    const api = await serviceClient(o, env);
    const result = expectOk(
      await api.POST('/api/scanner/v1/findings/{findingId}/issue-trackers/{provider}', {
        params: {
          path: { findingId: requireUuid('The finding id', findingId), provider: requireProvider(provider) },
        },
      }),
      'Sending the finding',
      {
        409: 'Connect the tracker and save a destination first (vigil admin integrations put …).',
        502: 'The tracker failed; sending again is safe (it links the ticket an earlier attempt created).',
      },
    );
    if (o.json) return printResult(result, true);
    const ticket = result.export.ticket;
    process.stdout.write(
      `${result.created ? 'created' : 'already sent'}: ${ticket ? `${ticket.key} ${ticket.url}` : result.export.state}\n`,
    );
  });

  registerDraftCommands(program, env);
}

const DISMISS_REASONS = ['false_positive', 'wont_fix', 'used_in_tests'] as const;

/**
 * `vigil drafts list|dismiss|reopen|publish`: a workspace's or a scan's draft findings, their
 * triage, and publishing them as repository findings (as a person: a user token).
 */
function registerDraftCommands(program: Command, env: Env): void {
  const drafts = program.command('drafts').description('draft findings of scans: list, triage and publish');
  withServiceOptions(
    drafts
      .command('list')
      .description('a workspace’s drafts (--workspace) or a scan’s (--scan), critical first')
      .option('--workspace <id>', 'the workspace')
      .option('--scan <id>', 'the scan')
      .option('--state <state>', 'open, dismissed, published, fixed or reopened')
      .option('--severity <severity>', 'critical, high, medium, low or informational')
      .option('--rule <ruleId>', 'one rule')
      .option('--path <path>', 'a file, or a folder ending in /')
      .option('--new-in <scanId>', 'with --workspace: only drafts new in that scan')
      .option('--baseline-state <state>', 'with --scan: new, unchanged, reopened or fixed')
      .option('--limit <n>', 'at most this many (all pages up to it)', '200'),
  ).action(async (_o, cmd: Command) => {
    const o = cmd.optsWithGlobals() as ClientOptions & {
      workspace?: string;
      scan?: string;
      state?: string;
      severity?: string;
      rule?: string;
      path?: string;
      newIn?: string;
      baselineState?: string;
      limit: string;
    };
    if (Boolean(o.workspace) === Boolean(o.scan)) throw new UsageError('Pass either --workspace or --scan.');
    const max = Number(o.limit);
    if (!Number.isInteger(max) || max < 1) throw new UsageError('--limit must be a whole number above 0.');
    const api = await serviceClient(o, env);
    const filters = {
      ...(o.state ? { state: o.state } : {}),
      ...(o.severity ? { severity: o.severity } : {}),
      ...(o.rule ? { rule: o.rule } : {}),
      ...(o.path ? { path: o.path } : {}),
    } as Record<string, string>;
    const items: Array<Record<string, unknown>> = [];
    let next: string | undefined;
    do {
      const query = { ...filters, limit: Math.min(100, max - items.length), ...(next ? { next } : {}) };
      const page = o.workspace
        ? expectOk(
            await api.GET('/api/scanner/v1/workspaces/{workspaceId}/drafts', {
              params: {
                path: { workspaceId: requireUuid('The workspace id', o.workspace) },
                query: {
                  ...query,
                  ...(o.newIn ? { newInScan: requireUuid('--new-in', o.newIn) } : {}),
                } as never,
              },
            }),
            'Listing the drafts',
          )
        : expectOk(
            await api.GET('/api/scanner/v1/scans/{scanId}/drafts', {
              params: {
                path: { scanId: requireUuid('The scan id', o.scan!) },
                query: { ...query, ...(o.baselineState ? { baselineState: o.baselineState } : {}) } as never,
              },
            }),
            'Listing the drafts',
            { 409: 'The scan has not completed.' },
          );
      items.push(...(page.items as Array<Record<string, unknown>>));
      next = page.nextValue ?? undefined;
    } while (next && items.length < max);
    const rows = items.map((d) => {
      const location = d.location as { file: string; startLine: number };
      return {
        id: d.id,
        severity: d.severity,
        state: d.state,
        ...(o.scan ? { baseline: d.baselineState ?? '' } : {}),
        title: d.title,
        location: `${location.file}:${location.startLine}`,
      };
    });
    printResult(o.json ? items : rows, o.json, [
      'id',
      'severity',
      'state',
      ...(o.scan ? ['baseline'] : []),
      'title',
      'location',
    ]);
  });

  const triage = async (
    ids: string[],
    body: { action: 'dismiss' | 'reopen'; reason?: (typeof DISMISS_REASONS)[number]; comment?: string },
    o: ClientOptions,
  ) => {
    const api = await serviceClient(o, env);
    const result = expectOk(
      await api.POST('/api/scanner/v1/drafts/triage', {
        body: { draftIds: ids.map((id) => requireUuid('A draft id', id)), ...body },
      }),
      body.action === 'dismiss' ? 'Dismissing' : 'Reopening',
      {
        403: 'Triage needs a service key with findings:write.',
        409: 'A published draft is followed on its finding.',
      },
    );
    printResult(
      result.items.map((d) => ({ id: d.id, state: d.state, title: d.title })),
      o.json,
      ['id', 'state', 'title'],
    );
  };
  withServiceOptions(
    drafts
      .command('dismiss <draftIds...>')
      .description('dismiss drafts: they stay dismissed in later scans')
      .requiredOption('--reason <reason>', DISMISS_REASONS.join(', '))
      .option('--comment <text>', 'why'),
  ).action(async (ids: string[], _o, cmd: Command) => {
    const o = cmd.optsWithGlobals() as ClientOptions & { reason: string; comment?: string };
    const reason = DISMISS_REASONS.find((r) => r === o.reason);
    if (!reason) throw new UsageError(`--reason must be one of ${DISMISS_REASONS.join(', ')}.`);
    await triage(ids, { action: 'dismiss', reason, ...(o.comment ? { comment: o.comment } : {}) }, o);
  });
  withServiceOptions(
    drafts.command('reopen <draftIds...>').description('take dismissed drafts back to open'),
  ).action(async (ids: string[], _o, cmd: Command) => {
    await triage(ids, { action: 'reopen' }, opts(cmd));
  });

  drafts
    .command('publish <draftIds...>')
    .description(
      'publish drafts as findings of a repository, as the user of the token (their author); a draft published before shows its finding again',
    )
    .requiredOption('--repository <repositoryId>', 'the repository (of the drafts’ company)')
    .option(
      '--severity <severity>',
      `for every draft given: ${severities.join(', ')} (default: each draft’s own)`,
    )
    .option('--company <companyId>', 'the company the drafts belong to (default: your only company)')
    .option('--url <url>', 'server URL (default VIGIL_URL, the login, or http://localhost:3000)')
    .option('--token <token>', 'user API token vgl_u_… (default VIGIL_TOKEN or the login)')
    .option('--json', 'print JSON instead of a table')
    .action(async (ids: string[], _o, cmd: Command) => {
      const o = cmd.optsWithGlobals() as ClientOptions & {
        repository: string;
        severity?: string;
        company?: string;
      };
      const severity = o.severity === undefined ? undefined : severities.find((s) => s === o.severity);
      if (o.severity !== undefined && !severity)
        throw new UsageError(`--severity must be one of ${severities.join(', ')} (got "${o.severity}").`);
      const repositoryId = requireUuid('--repository', o.repository);
      const draftIds = ids.map((id) => requireUuid('A draft id', id));
      const { api, companyId } = await personClient(o, env, 'Publishing');
      const result = expectOk(
        await api.POST('/api/scanner/v1/drafts/publish', {
          headers: { 'x-vigil-company': companyId },
          body: {
            repositoryId,
            drafts: draftIds.map((draftId) => ({ draftId, ...(severity ? { severity } : {}) })),
          },
        }),
        'Publishing',
        {
          401: `Publishing needs a valid user token: ${USER_TOKEN_HINT}.`,
          403: 'Ask a company manager to publish, or to allow you in the company’s draft settings.',
          404: 'Check the draft ids, --repository and --company: each must be of the company.',
        },
      );
      printResult(
        o.json
          ? result.items
          : result.items.map((p) => ({
              draft: p.draftId,
              finding: `#${p.number}`,
              findingId: p.findingId,
              result: p.created ? 'created' : 'published before',
            })),
        o.json,
        ['draft', 'finding', 'findingId', 'result'],
      );
    });
}
