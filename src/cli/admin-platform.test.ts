import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { buildCompanyWorld, buildUser } from '../../test/helpers/factories.ts';
import { registerPlatformAdminCommands } from './admin-platform.ts';

let url: string;
const t = sharedTestApp();
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

/** Runs `vigil admin …` against the test server and returns what it printed (parsed with --json). */
async function vigil<T = Record<string, unknown>>(token: string, ...args: string[]): Promise<T> {
  const program = new Command().exitOverride();
  const admin = program.command('admin').option('--url <url>').option('--token <token>').option('--json');
  registerPlatformAdminCommands(admin, {});
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['admin', '--url', url, '--token', token, '--json', ...args], { from: 'user' });
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(out) as T;
}

describe('vigil admin (platform commands)', () => {
  it('drives companies, users, SSO rules, the audit log, repositories, reports and guilds over HTTP', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const m = manager.token;

    expect(
      await vigil(m, 'companies', 'update', company.id, '--website', 'https://acme.example'),
    ).toMatchObject({
      website: 'https://acme.example',
    });

    const invited = await vigil<{ id: string }>(
      m,
      'users',
      'invite',
      company.id,
      '--username',
      `x${randomBytes(3).toString('hex')}`,
    );
    expect(invited).toMatchObject({ state: 'pending' });
    const pending = await vigil<{ invitations: Array<{ id: string }> }>(m, 'invitations', 'list', company.id);
    expect(pending.invitations.map((i) => i.id)).toEqual([invited.id]);
    expect(await vigil(m, 'invitations', 'revoke', company.id, invited.id)).toMatchObject({
      state: 'revoked',
    });
    await vigil(m, 'users', 'role', company.id, member.id, 'manager');
    await vigil(m, 'users', 'disable', company.id, member.id);
    await vigil(m, 'users', 'reenable', company.id, member.id);
    const listed = await vigil<{ users: unknown[] }>(m, 'users', 'list', company.id, '--all');
    expect(listed.users).toHaveLength(2);

    const domain = `${randomBytes(4).toString('hex')}.example`;
    const rule = await vigil<{ id: string; domain: string }>(m, 'sso', 'add', company.id, domain);
    expect(rule.domain).toBe(domain);
    expect(await vigil<unknown[]>(m, 'sso', 'list', company.id)).toHaveLength(1);
    expect(await vigil(m, 'sso', 'remove', company.id, rule.id)).toEqual({ deleted: true });

    const audit = await vigil<{ items: Array<{ action: string }>; nextValue: string | null }>(
      m,
      'audit',
      company.id,
      '--action',
      'user_disabled',
      '--action',
      'user_reenabled',
      '--target',
      member.username,
      '--order',
      'asc',
    );
    expect(audit.items.map((e) => e.action)).toEqual(['user_disabled', 'user_reenabled']);

    const repo = await vigil<{ id: string; assetGroups: unknown[]; isPublic: boolean }>(
      m,
      'repos',
      'create',
      company.id,
      '--name',
      'Vault',
      '--public',
      'true',
      '--body',
      JSON.stringify({ assetGroups: [{ name: 'Contracts', assets: [{ name: 'Vault.sol' }] }] }),
    );
    expect(repo).toMatchObject({ isPublic: true, assetGroups: [{ name: 'Contracts' }] });
    const reviewer = await buildUser(t);
    await vigil(m, 'repos', 'member-add', repo.id, reviewer.id, 'reviewer', '--pings', '2');
    await vigil(m, 'repos', 'update', repo.id, '--reward-pot', '5000');
    const log = await vigil<{ events: Array<{ newValue: Record<string, unknown> }> }>(
      m,
      'repos',
      'log',
      repo.id,
    );
    expect(log.events[0]!.newValue).toEqual({ totalRewardPot: '5000' });
    expect((await vigil<{ members: unknown[] }>(m, 'repos', 'members', repo.id)).members).toHaveLength(1);
    expect((await vigil<{ items: unknown[] }>(m, 'repos', 'list', company.id)).items).toHaveLength(1);
    await vigil(m, 'repos', 'finish', repo.id);

    const guild = `Guild ${randomBytes(3).toString('hex')}`;
    await vigil(t.adminToken, 'guilds', 'create', guild);
    const report = await vigil<{ id: string; guildId: string | null }>(
      m,
      'reports',
      'create',
      repo.id,
      '--title',
      `CLI ${guild}`,
      '--guild',
      guild,
    );
    expect(report.guildId).not.toBeNull();
    const published = await vigil<{ isPrivate: boolean; publishedAt: string | null }>(
      m,
      'reports',
      'publish',
      report.id,
      '--public',
    );
    expect(published).toMatchObject({ isPrivate: false, publishedAt: expect.any(String) });
    const page = await vigil<{ reports: Array<{ id: string }> }>(m, 'reports', 'list', '--guild', guild);
    expect(page.reports.map((r) => r.id)).toEqual([report.id]);
    expect(await vigil(t.adminToken, 'users', 'badge', reviewer.id, '--name', 'First blood')).toMatchObject({
      badges: [{ name: 'First blood' }],
    });
    expect(
      await vigil(reviewer.token, 'users', 'profile', reviewer.id, '--tagline', 'hi', '--skill', 'solidity'),
    ).toMatchObject({
      tagline: 'hi',
      skills: ['solidity'],
    });
  });

  it('reports the server’s refusal with the status and message', async () => {
    const { company, member } = await buildCompanyWorld(t);
    await expect(vigil(member.token, 'sso', 'add', company.id, 'example.com')).rejects.toThrow(
      /403: Only company managers/,
    );
  });
});
