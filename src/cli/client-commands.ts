import type { Command } from 'commander';
import { isUuid } from '../strings.ts';
import { printResult } from './http-client.ts';
import { UsageError } from './scan.ts';
import { cliClient, expectOk, readStoredLogin, resolveConnection, writeStoredLogin } from './settings.ts';

type Env = Record<string, string | undefined>;

interface ClientOptions {
  url?: string;
  key?: string;
  token?: string;
  json?: boolean;
}

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
    .option('--token <token>', 'user API token vgl_u_… (for admin commands)')
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
    .option('--limit <n>', 'how many (1 to 100)', '20')
    .action(async (_o, cmd: Command) => {
      const o = opts(cmd) as ClientOptions & { status?: string; limit: string };
      const status = o.status === undefined ? undefined : SCAN_STATUSES.find((s) => s === o.status);
      if (o.status !== undefined && !status)
        throw new UsageError(`--status must be one of ${SCAN_STATUSES.join(', ')} (got "${o.status}").`);
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new UsageError(`--limit must be a whole number from 1 to 100 (got "${o.limit}").`);
      const api = await serviceClient(o, env);
      const list = expectOk(
        await api.GET('/api/scanner/v1/scans', {
          params: { query: { limit, ...(status ? { status } : {}) } },
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
}
