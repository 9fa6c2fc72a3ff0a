import type { Command } from 'commander';
import { callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

function parsePairs(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new Error(`Expected key=value, got "${pair}".`);
    out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

function parseSettings(pairs: string[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsePairs(pairs))) {
    try {
      out[k] = JSON.parse(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `vigil admin …`: management over HTTP (`--url`, `--token` or VIGIL_URL, VIGIL_TOKEN). */
export function registerAdminCommands(program: Command, env: Env): Command {
  const admin = program
    .command('admin')
    .description('manage a running server over HTTP (companies, users, tokens, credits, keys, integrations)')
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--token <token>', 'user API token (default VIGIL_TOKEN)')
    .option('--json', 'print JSON instead of tables');
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const run = (cmd: Command, method: string, path: string, body?: unknown) =>
    callApi(opts(cmd), env, method, path, body);

  const companies = admin.command('companies').description('companies');
  companies
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption('--handle <handle>')
    .option('--website <url>')
    .action(async (o, cmd: Command) => {
      printResult(await run(cmd, 'POST', '/api/v0/admin/companies', o), opts(cmd).json, [
        'id',
        'handle',
        'name',
      ]);
    });

  companies
    .command('list')
    .description('every company (platform admins)')
    .action(async (_o, cmd: Command) => {
      const result = (await run(cmd, 'GET', '/api/v0/admin/companies')) as { companies: unknown[] };
      printResult(result.companies, opts(cmd).json, ['id', 'handle', 'name', 'createdAt']);
    });

  const users = admin.command('users').description('users');
  users
    .command('create')
    .requiredOption('--username <username>')
    .requiredOption('--name <name>')
    .option('--email <email>')
    .option('--company <companyId>')
    .option('--role <role>', 'manager or member', 'member')
    .action(async (o, cmd: Command) => {
      const body = {
        username: o.username,
        name: o.name,
        email: o.email,
        ...(o.company ? { companyId: o.company, companyRole: o.role } : {}),
      };
      printResult(await run(cmd, 'POST', '/api/v0/admin/users', body), opts(cmd).json, [
        'id',
        'username',
        'companyId',
        'companyRole',
      ]);
    });

  const tokens = admin.command('tokens').description('user API tokens');
  tokens
    .command('create <userId>')
    .option('--expires-at <iso>', 'expiry (default in 90 days)')
    .action(async (userId: string, o, cmd: Command) => {
      const body = o.expiresAt ? { expiresAt: o.expiresAt } : {};
      printResult(await run(cmd, 'POST', `/api/v0/admin/users/${userId}/tokens`, body), opts(cmd).json, [
        'id',
        'token',
        'expiresAt',
      ]);
    });

  admin
    .command('credits')
    .description('grant scan credits')
    .command('grant <companyId> <amount>')
    .option('--note <note>')
    .action(async (companyId: string, amount: string, o, cmd: Command) => {
      const body = { amount: Number(amount), ...(o.note ? { note: o.note } : {}) };
      printResult(
        await run(cmd, 'POST', `/api/v0/admin/companies/${companyId}/credits`, body),
        opts(cmd).json,
        ['purchased', 'used', 'reserved', 'remaining'],
      );
    });

  const keys = admin.command('keys').description('organization service keys');
  keys
    .command('create <companyId>')
    .requiredOption('--name <name>')
    .option('--scopes <list>', 'comma-separated (default: all but findings:write)')
    .option('--expires-at <iso>')
    .action(async (companyId: string, o, cmd: Command) => {
      const body = {
        name: o.name,
        ...(o.scopes ? { scopes: String(o.scopes).split(',') } : {}),
        ...(o.expiresAt ? { expiresAt: o.expiresAt } : {}),
      };
      printResult(
        await run(cmd, 'POST', `/api/v0/companies/${companyId}/service-keys`, body),
        opts(cmd).json,
        ['id', 'key', 'scopes', 'expiresAt'],
      );
    });
  keys.command('list <companyId>').action(async (companyId: string, _o, cmd: Command) => {
    const res = (await run(cmd, 'GET', `/api/v0/companies/${companyId}/service-keys`)) as {
      items: unknown[];
    };
    printResult(opts(cmd).json ? res : res.items, opts(cmd).json, [
      'id',
      'name',
      'prefix',
      'scopes',
      'expiresAt',
      'revokedAt',
    ]);
  });
  keys
    .command('revoke <companyId> <keyId>')
    .action(async (companyId: string, keyId: string, _o, cmd: Command) => {
      printResult(
        await run(cmd, 'DELETE', `/api/v0/companies/${companyId}/service-keys/${keyId}`),
        opts(cmd).json,
        ['id', 'name', 'revokedAt'],
      );
    });

  const integrations = admin
    .command('integrations')
    .description('company integrations (tracker_a, tracker_b, sourcehost)');
  integrations
    .command('put <companyId> <provider>')
    .option('--site <url>', 'tracker_b site')
    .option('--credential <key=value>', 'a credential field (repeatable)', collect)
    .option('--setting <key=value>', 'a setting; JSON values allowed (repeatable)', collect)
    .action(async (companyId: string, provider: string, o, cmd: Command) => {
      const body = {
        ...(o.site ? { site: o.site } : {}),
        credentials: parsePairs(o.credential),
        settings: parseSettings(o.setting),
      };
      printResult(
        await run(cmd, 'PUT', `/api/v0/companies/${companyId}/integrations/${provider}`, body),
        opts(cmd).json,
        ['id', 'provider', 'site', 'credentialFields'],
      );
    });
  integrations.command('list <companyId>').action(async (companyId: string, _o, cmd: Command) => {
    const res = (await run(cmd, 'GET', `/api/v0/companies/${companyId}/integrations`)) as {
      items: unknown[];
    };
    printResult(opts(cmd).json ? res : res.items, opts(cmd).json, [
      'id',
      'provider',
      'site',
      'credentialFields',
      'settings',
    ]);
  });
  integrations
    .command('delete <companyId> <provider>')
    .option('--site <url>')
    .action(async (companyId: string, provider: string, o, cmd: Command) => {
      const q = o.site ? `?site=${encodeURIComponent(o.site)}` : '';
      await run(cmd, 'DELETE', `/api/v0/companies/${companyId}/integrations/${provider}${q}`);
      printResult({ deleted: true }, opts(cmd).json);
    });
  return admin;
}
