import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CliError, callApi, printResult, type ServerOptions } from './http-client.ts';

type Env = Record<string, string | undefined>;

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A JSON body given inline (`'{"name":"x"}'`) or from a file (`@body.json`). */
function readJsonBody(value: string | undefined): Record<string, unknown> {
  if (!value) return {};
  const text = value.startsWith('@') ? readFileSync(value.slice(1), 'utf8') : value;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new CliError('--body must be a JSON object, inline or as @file.json.');
}

/** `true`/`false` option values. */
function parseBool(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new CliError(`Expected true or false, got "${value}".`);
}

/** Options given on the command line, without the undefined ones; `''` stands for null. */
function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(values)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v === '' ? null : v]),
  );
}

function query(params: Record<string, string | number | boolean | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) search.append(k, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function subcommand(parent: Command, name: string, description: string): Command {
  return parent.commands.find((c) => c.name() === name) ?? parent.command(name).description(description);
}

const USER_COLUMNS = ['userId', 'username', 'name', 'email', 'companyRole', 'joinedAt', 'disabledAt'];
const INVITATION_COLUMNS = ['id', 'username', 'email', 'role', 'state', 'expiresAt'];
const REPOSITORY_COLUMNS = ['id', 'name', 'isPublic', 'role', 'totalFindings', 'finishedAt'];
const REPORT_COLUMNS = ['id', 'projectTitle', 'clientName', 'isPrivate', 'publishedAt'];

/**
 * `vigil admin …` commands of the platform API: company profile, company users and memberships,
 * audit log, SSO rules, repositories (members, change log, finishing), reports and guilds. They
 * drive the HTTP endpoints with the caller's token, so the server decides what is allowed.
 */
export function registerPlatformAdminCommands(admin: Command, env: Env): void {
  const opts = (cmd: Command): ServerOptions => cmd.optsWithGlobals() as ServerOptions;
  const run = (cmd: Command, method: string, path: string, body?: unknown) =>
    callApi(opts(cmd), env, method, path, body);
  const print = (cmd: Command, value: unknown, columns?: string[]) =>
    printResult(value, opts(cmd).json, columns);
  const printItems = (cmd: Command, value: unknown, key: string, columns: string[]) =>
    print(cmd, opts(cmd).json ? value : (value as Record<string, unknown>)[key], columns);

  // --- companies ---
  const companies = subcommand(admin, 'companies', 'companies');
  companies.command('show <companyId>').action(async (companyId: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'GET', `/api/v0/companies/${companyId}`));
  });
  companies
    .command('update <companyId>')
    .description("change a company's profile (company managers); an empty value clears a field")
    .option('--name <name>')
    .option('--handle <handle>')
    .option('--logo <url>')
    .option('--website <url>')
    .option('--sourcehost <account>')
    .option('--microblog <handle>')
    .action(async (companyId: string, o, cmd: Command) => {
      print(cmd, await run(cmd, 'PATCH', `/api/v0/companies/${companyId}`, defined(o)));
    });

  // --- users and memberships ---
  const users = subcommand(admin, 'users', 'users');
  users
    .command('list <companyId>')
    .description('company users')
    .option('--all', 'also deleted, disabled and invited users')
    .option('--q <text>', 'search name and username')
    .action(async (companyId: string, o, cmd: Command) => {
      const res = await run(
        cmd,
        'GET',
        `/api/v0/companies/${companyId}/users${query({ include_all: o.all ? true : undefined, q: o.q })}`,
      );
      printItems(cmd, res, 'users', USER_COLUMNS);
    });
  users
    .command('invite <companyId>')
    .description('invite someone by username or e-mail address (an invitation; they join by accepting it)')
    .option('--username <username>')
    .option('--email <email>')
    .option('--name <name>')
    .option('--role <role>', 'manager or member')
    .action(async (companyId: string, o, cmd: Command) => {
      print(
        cmd,
        await run(cmd, 'POST', `/api/v0/companies/${companyId}/users`, defined(o)),
        INVITATION_COLUMNS,
      );
    });
  const invitations = subcommand(admin, 'invitations', 'company invitations');
  invitations
    .command('list [companyId]')
    .description("a company's invitations; without a company, your own pending ones")
    .option('--state <state>', 'pending, accepted, declined, revoked or expired')
    .action(async (companyId: string | undefined, o, cmd: Command) => {
      const url = companyId
        ? `/api/v0/companies/${companyId}/invitations${query({ state: o.state })}`
        : '/api/v0/invitations';
      printItems(cmd, await run(cmd, 'GET', url), 'invitations', INVITATION_COLUMNS);
    });
  invitations
    .command('revoke <companyId> <invitationId>')
    .action(async (companyId: string, invitationId: string, _o, cmd: Command) => {
      const url = `/api/v0/companies/${companyId}/invitations/${invitationId}/revoke`;
      print(cmd, await run(cmd, 'POST', url), INVITATION_COLUMNS);
    });
  invitations
    .command('accept <invitationId>')
    .option('--secret <secret>', 'the one-time secret of the invitation e-mail')
    .action(async (invitationId: string, o, cmd: Command) => {
      const url = `/api/v0/invitations/${invitationId}/accept`;
      print(cmd, await run(cmd, 'POST', url, defined(o)), USER_COLUMNS);
    });
  invitations
    .command('decline <invitationId>')
    .option('--secret <secret>', 'the one-time secret of the invitation e-mail')
    .action(async (invitationId: string, o, cmd: Command) => {
      const url = `/api/v0/invitations/${invitationId}/decline`;
      print(cmd, await run(cmd, 'POST', url, defined(o)), INVITATION_COLUMNS);
    });
  users
    .command('join <companyId> <userId>')
    .action(async (companyId: string, userId: string, _o, cmd: Command) => {
      print(cmd, await run(cmd, 'POST', `/api/v0/companies/${companyId}/users/${userId}/join`), USER_COLUMNS);
    });
  users
    .command('disable <companyId> <userId>')
    .action(async (companyId: string, userId: string, _o, cmd: Command) => {
      print(
        cmd,
        await run(cmd, 'POST', `/api/v0/companies/${companyId}/users/${userId}/disable`),
        USER_COLUMNS,
      );
    });
  users
    .command('reenable <companyId> <userId>')
    .action(async (companyId: string, userId: string, _o, cmd: Command) => {
      print(
        cmd,
        await run(cmd, 'POST', `/api/v0/companies/${companyId}/users/${userId}/reenable`),
        USER_COLUMNS,
      );
    });
  users
    .command('role <companyId> <userId> <role>')
    .description('change a company role (manager or member)')
    .action(async (companyId: string, userId: string, role: string, _o, cmd: Command) => {
      print(
        cmd,
        await run(cmd, 'PATCH', `/api/v0/companies/${companyId}/users/${userId}`, { role }),
        USER_COLUMNS,
      );
    });
  users
    .command('profile <userId>')
    .description("show a user's auditor profile, or change it with options (an empty value clears a field)")
    .option('--name <name>')
    .option('--avatar <url>')
    .option('--tagline <text>')
    .option('--bio <text>')
    .option('--website <url>')
    .option('--sourcehost <account>')
    .option('--microblog <handle>')
    .option('--chat-a <handle>')
    .option('--chat-b <handle>')
    .option('--timezone <tz>')
    .option('--skill <skill>', 'a skill (repeatable; replaces the list)', collect)
    .option('--reputation <n>', 'platform admins', Number)
    .option('--verified <bool>', 'platform admins', parseBool)
    .option('--nda-signed <bool>', 'platform admins', parseBool)
    .option('--guild <name>', 'platform admins; empty to clear')
    .action(async (userId: string, o, cmd: Command) => {
      const { chatA, chatB, skill, verified, ndaSigned, ...rest } = o;
      const body = defined({
        ...rest,
        chat_a: chatA,
        chat_b: chatB,
        skills: skill,
        verifiedProfile: verified,
        isNdaSigned: ndaSigned,
      });
      const path = `/api/v0/users/${userId}/profile`;
      print(
        cmd,
        Object.keys(body).length === 0 ? await run(cmd, 'GET', path) : await run(cmd, 'PATCH', path, body),
      );
    });
  users
    .command('badge <userId>')
    .description('award a badge (platform admins)')
    .requiredOption('--name <name>')
    .option('--image <url>')
    .option('--description <text>')
    .option('--issued-at <iso>')
    .action(async (userId: string, o, cmd: Command) => {
      print(cmd, await run(cmd, 'POST', `/api/v0/users/${userId}/badges`, defined(o)), [
        'id',
        'username',
        'badges',
      ]);
    });

  // --- audit log ---
  admin
    .command('audit <companyId>')
    .description('the company audit log (company managers, read_all_companies admins)')
    .option('--target <user>', 'target user id or username (repeatable)', collect)
    .option('--performer <user>', 'performing user id or username (repeatable)', collect)
    .option('--action <action>', 'action (repeatable)', collect)
    .option('--since <iso>')
    .option('--limit <n>', 'entries per page (default 5, at most 100)')
    .option('--order <order>', 'asc or desc (default desc)')
    .option('--next <cursor>', 'the nextValue of the previous page')
    .action(async (companyId: string, o, cmd: Command) => {
      const q = query({
        target_users: o.target,
        performing_users: o.performer,
        actions: o.action,
        since: o.since,
        limit: o.limit,
        order_by: o.order ? `created_at_${o.order}` : undefined,
        next: o.next,
      });
      const res = (await run(cmd, 'GET', `/api/v0/companies/${companyId}/audit-log${q}`)) as {
        items: Array<
          Record<string, unknown> & {
            target: { username: string } | null;
            createdBy: { username: string } | null;
          }
        >;
        nextValue: string | null;
      };
      if (opts(cmd).json) return print(cmd, res);
      print(
        cmd,
        res.items.map((e) => ({
          ...e,
          target: e.target?.username ?? '',
          createdBy: e.createdBy?.username ?? '',
        })),
        ['createdAt', 'action', 'target', 'createdBy', 'sourcehost_account_name'],
      );
      if (res.nextValue) process.stdout.write(`next: ${res.nextValue}\n`);
    });

  // --- SSO rules ---
  const sso = admin.command('sso').description('SSO enforcement rules of a company');
  sso.command('list <companyId>').action(async (companyId: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'GET', `/api/v0/companies/${companyId}/sso-enforcement-rules`), [
      'id',
      'domain',
      'createdAt',
    ]);
  });
  sso
    .command('add <companyId> <domain>')
    .action(async (companyId: string, domain: string, _o, cmd: Command) => {
      print(cmd, await run(cmd, 'POST', `/api/v0/companies/${companyId}/sso-enforcement-rules`, { domain }), [
        'id',
        'domain',
        'createdAt',
      ]);
    });
  sso
    .command('remove <companyId> <ruleId>')
    .action(async (companyId: string, ruleId: string, _o, cmd: Command) => {
      await run(cmd, 'DELETE', `/api/v0/companies/${companyId}/sso-enforcement-rules/${ruleId}`);
      print(cmd, { deleted: true });
    });

  // --- repositories ---
  const repos = admin.command('repos').alias('repositories').description('repositories of companies');
  repos.command('list <companyId>').action(async (companyId: string, _o, cmd: Command) => {
    printItems(
      cmd,
      await run(cmd, 'GET', `/api/v0/companies/${companyId}/repositories`),
      'items',
      REPOSITORY_COLUMNS,
    );
  });
  repos.command('show <repoId>').action(async (repoId: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'GET', `/api/v0/repositories/${repoId}`), REPOSITORY_COLUMNS);
  });
  const repoFields = (c: Command) =>
    c
      .option('--name <name>')
      .option('--url <url>')
      .option('--currency <code>')
      .option('--reward-pot <amount>')
      .option('--submission-fee <amount>')
      .option('--public <bool>', 'anyone may join', parseBool)
      .option('--body <json>', 'more fields as JSON (asset groups, safe harbor …), inline or @file.json');
  const repoBody = (o: Record<string, unknown>) => ({
    ...readJsonBody(o.body as string | undefined),
    ...defined({
      name: o.name,
      url: o.url,
      currencyCode: o.currency,
      totalRewardPot: o.rewardPot,
      submissionFee: o.submissionFee,
      isPublic: o.public,
    }),
  });
  repoFields(
    repos.command('create <companyId>').description('create a repository (company managers)'),
  ).action(async (companyId: string, o, cmd: Command) => {
    print(
      cmd,
      await run(cmd, 'POST', `/api/v0/companies/${companyId}/repositories`, repoBody(o)),
      REPOSITORY_COLUMNS,
    );
  });
  repoFields(
    repos.command('update <repoId>').description('change a repository (writes one change-log event)'),
  ).action(async (repoId: string, o, cmd: Command) => {
    print(cmd, await run(cmd, 'PATCH', `/api/v0/repositories/${repoId}`, repoBody(o)), REPOSITORY_COLUMNS);
  });
  repos.command('finish <repoId>').action(async (repoId: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'POST', `/api/v0/repositories/${repoId}/finish`), REPOSITORY_COLUMNS);
  });
  repos.command('log <repoId>').action(async (repoId: string, _o, cmd: Command) => {
    const res = (await run(cmd, 'GET', `/api/v0/repositories/${repoId}/log`)) as {
      events: Array<Record<string, unknown> & { updatedBy: { username: string } | null }>;
    };
    if (opts(cmd).json) return print(cmd, res);
    print(
      cmd,
      res.events.map((e) => ({ ...e, updatedBy: e.updatedBy?.username ?? '' })),
      ['updatedAt', 'updatedBy', 'oldValue', 'newValue'],
    );
  });
  repos.command('members <repoId>').action(async (repoId: string, _o, cmd: Command) => {
    const res = (await run(cmd, 'GET', `/api/v0/repositories/${repoId}/members`)) as {
      members: Array<Record<string, unknown> & { user: { username: string } }>;
    };
    if (opts(cmd).json) return print(cmd, res);
    print(
      cmd,
      res.members.map((m) => ({ ...m, user: m.user.username })),
      ['user', 'role', 'teamId', 'pingsLeft', 'deletedAt'],
    );
  });
  repos
    .command('member-add <repoId> <userId> <role>')
    .description('add a member or change their role (client, reviewer, judge, triager, admin)')
    .option('--team <teamId>', 'team id; empty to clear')
    .option('--pings <n>', '@project pings left', Number)
    .action(async (repoId: string, userId: string, role: string, o, cmd: Command) => {
      const body = { role, ...defined({ teamId: o.team, pingsLeft: o.pings }) };
      print(cmd, await run(cmd, 'PUT', `/api/v0/repositories/${repoId}/members/${userId}`, body), [
        'role',
        'teamId',
        'pingsLeft',
      ]);
    });
  repos
    .command('member-remove <repoId> <userId>')
    .action(async (repoId: string, userId: string, _o, cmd: Command) => {
      await run(cmd, 'DELETE', `/api/v0/repositories/${repoId}/members/${userId}`);
      print(cmd, { removed: true });
    });

  // --- reports ---
  const reports = admin.command('reports').description('reports of finished engagements');
  reports
    .command('list')
    .option('--q <text>', 'search title and client name')
    .option('--guild <name>')
    .option('--limit <n>')
    .option('--next <cursor>')
    .action(async (o, cmd: Command) => {
      const res = (await run(
        cmd,
        'GET',
        `/api/v0/reports${query({ q: o.q, guild: o.guild, limit: o.limit, next: o.next })}`,
      )) as {
        reports: unknown[];
        nextValue: string | null;
      };
      printItems(cmd, res, 'reports', REPORT_COLUMNS);
      if (!opts(cmd).json && res.nextValue) process.stdout.write(`next: ${res.nextValue}\n`);
    });
  reports.command('show <reportId>').action(async (reportId: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'GET', `/api/v0/reports/${reportId}`), REPORT_COLUMNS);
  });
  const reportFields = (c: Command) =>
    c
      .option('--title <title>')
      .option('--client-name <name>')
      .option('--description <text>')
      .option('--pdf <url>')
      .option('--guild <name>', 'empty to clear')
      .option('--private <bool>', '', parseBool)
      .option('--body <json>', 'more fields as JSON, inline or @file.json');
  const reportBody = (o: Record<string, unknown>) => ({
    ...readJsonBody(o.body as string | undefined),
    ...defined({
      projectTitle: o.title,
      clientName: o.clientName,
      description: o.description,
      reportPdfLink: o.pdf,
      guild: o.guild,
      isPrivate: o.private,
    }),
  });
  reportFields(
    reports.command('create <repoId>').description('make the report of a finished repository'),
  ).action(async (repoId: string, o, cmd: Command) => {
    print(
      cmd,
      await run(cmd, 'POST', '/api/v0/reports', { repositoryId: repoId, ...reportBody(o) }),
      REPORT_COLUMNS,
    );
  });
  reportFields(reports.command('update <reportId>')).action(async (reportId: string, o, cmd: Command) => {
    print(cmd, await run(cmd, 'PATCH', `/api/v0/reports/${reportId}`, reportBody(o)), REPORT_COLUMNS);
  });
  reports
    .command('publish <reportId>')
    .option('--public', 'make it public (isPrivate false)')
    .action(async (reportId: string, o, cmd: Command) => {
      print(
        cmd,
        await run(cmd, 'POST', `/api/v0/reports/${reportId}/publish`, o.public ? { isPrivate: false } : {}),
        REPORT_COLUMNS,
      );
    });

  // --- guilds ---
  const guilds = admin.command('guilds').description('guilds');
  guilds.command('list').action(async (_o, cmd: Command) => {
    printItems(cmd, await run(cmd, 'GET', '/api/v0/guilds'), 'guilds', ['id', 'name', 'createdAt']);
  });
  guilds.command('create <name>').action(async (name: string, _o, cmd: Command) => {
    print(cmd, await run(cmd, 'POST', '/api/v0/guilds', { name }), ['id', 'name', 'createdAt']);
  });
}
