import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompanyWorld, buildRepository, buildUser } from '../../../test/helpers/factories.ts';

/**
 * Every security-relevant change reaches the company audit log (ADR 0017): service keys, SSO
 * rules, integrations and source-host repository links, the notification webhook, credits, repository membership and console
 * sign-ins. Entries that concern no user have a null target and say what changed in `details`;
 * no entry carries a secret.
 */
const t = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });

interface Entry {
  action: string;
  target: { userId: string } | null;
  createdBy: { userId: string } | null;
  sourcehost_account_name: string | null;
  details: Record<string, unknown>;
}

async function entries(companyId: string): Promise<Entry[]> {
  return (
    await apiOk<{ items: Entry[] }>(
      t,
      'GET',
      `/api/v0/companies/${companyId}/audit-log?limit=100`,
      t.adminToken,
    )
  ).items;
}

/** The entries written since `before` (newest first), and the raw page text for secret checks. */
async function newSince(companyId: string, before: number): Promise<{ added: Entry[]; raw: string }> {
  const res = await api(t, 'GET', `/api/v0/companies/${companyId}/audit-log?limit=100`, t.adminToken);
  const items = (res.json() as { items: Entry[] }).items;
  return { added: items.slice(0, items.length - before), raw: res.body };
}

describe('the audit log records security-relevant changes', () => {
  it('service keys: created and revoked, without a target and without the key; revoking again writes nothing', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    const key = await apiOk<{ id: string; key: string; prefix: string }>(
      t,
      'POST',
      `/api/v0/companies/${company.id}/service-keys`,
      manager.token,
      { name: 'ci', scopes: ['scans:read'] },
    );
    await apiOk(t, 'DELETE', `/api/v0/companies/${company.id}/service-keys/${key.id}`, manager.token);
    await apiOk(t, 'DELETE', `/api/v0/companies/${company.id}/service-keys/${key.id}`, manager.token);
    const { added, raw } = await newSince(company.id, before);
    expect(added.map((e) => e.action)).toEqual(['service_key_revoked', 'service_key_created']);
    for (const e of added) {
      expect(e).toMatchObject({
        target: null,
        createdBy: { userId: manager.id },
        details: { keyId: key.id, name: 'ci', prefix: key.prefix, scopes: ['scans:read'] },
      });
    }
    expect(raw).not.toContain(key.key);
  });

  it('SSO rules: added and removed, with the domain', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    const domain = `sso${Date.now()}.example`;
    const rule = await apiOk<{ id: string }>(
      t,
      'POST',
      `/api/v0/companies/${company.id}/sso-enforcement-rules`,
      manager.token,
      { domain },
    );
    await apiOk(
      t,
      'DELETE',
      `/api/v0/companies/${company.id}/sso-enforcement-rules/${rule.id}`,
      manager.token,
    );
    const { added } = await newSince(company.id, before);
    expect(added.map((e) => e.action)).toEqual(['sso_rule_removed', 'sso_rule_added']);
    for (const e of added) {
      expect(e).toMatchObject({
        target: null,
        createdBy: { userId: manager.id },
        details: { ruleId: rule.id, domain },
      });
    }
  });

  it('integrations: connected, replaced and disconnected, for trackers and the source host, without credentials', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    const tracker = `/api/v0/companies/${company.id}/integrations/tracker_b`;
    const trackerBody = {
      site: 'https://acme.tracker-b.example',
      credentials: { email: 'bot@example.com', apiToken: 'tracker-secret-token' },
      settings: {},
    };
    await apiOk(t, 'PUT', tracker, manager.token, trackerBody);
    await apiOk(t, 'PUT', tracker, manager.token, trackerBody);
    await apiOk(t, 'DELETE', tracker, manager.token);
    const sourcehost = `/api/v0/companies/${company.id}/integrations/sourcehost`;
    const sourcehostBody = {
      credentials: { token: 'sourcehost-secret-token', webhookSecret: 'sourcehost-webhook-secret' },
      settings: { baseUrl: 'http://127.0.0.1:1' },
    };
    await apiOk(t, 'PUT', sourcehost, manager.token, sourcehostBody);
    await apiOk(t, 'PUT', sourcehost, manager.token, sourcehostBody);
    await apiOk(t, 'DELETE', sourcehost, manager.token);
    const { added, raw } = await newSince(company.id, before);
    expect(added.map((e) => [e.action, e.details.provider])).toEqual([
      ['sourcehost_integration_removed', 'sourcehost'],
      ['integration_updated', 'sourcehost'],
      ['sourcehost_integration_added', 'sourcehost'],
      ['integration_disconnected', 'tracker_b'],
      ['integration_updated', 'tracker_b'],
      ['integration_connected', 'tracker_b'],
    ]);
    for (const e of added) expect(e).toMatchObject({ target: null, createdBy: { userId: manager.id } });
    expect(added[3]!.details.site).toBe('https://acme.tracker-b.example');
    for (const secret of ['tracker-secret-token', 'sourcehost-secret-token', 'sourcehost-webhook-secret']) {
      expect(raw).not.toContain(secret);
    }
  });

  it('source-host repository links: linked and unlinked, with the repository and the workspace', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    await apiOk(t, 'PUT', `/api/v0/companies/${company.id}/integrations/sourcehost`, manager.token, {
      credentials: { token: 'sourcehost-secret-token' },
      settings: { baseUrl: 'http://127.0.0.1:1' },
    });
    const before = (await entries(company.id)).length;
    const link = `/api/v0/companies/${company.id}/sourcehost/repositories/acme/vault/link`;
    const linked = await apiOk<{ workspace: { id: string } }>(t, 'PUT', link, manager.token, {
      scanType: 'lite',
      watchBranches: ['main'],
    });
    await apiOk(t, 'DELETE', link, manager.token);
    const { added } = await newSince(company.id, before);
    expect(added.map((e) => e.action)).toEqual([
      'sourcehost_repository_unlinked',
      'sourcehost_repository_linked',
    ]);
    expect(added[1]).toMatchObject({
      target: null,
      createdBy: { userId: manager.id },
      details: {
        repository: 'acme/vault',
        workspaceId: linked.workspace.id,
        watchBranches: ['main'],
        scanType: 'lite',
      },
    });
    expect(added[0]!.details).toMatchObject({ repository: 'acme/vault', workspaceId: linked.workspace.id });
  });

  it('the notification webhook: set and removed, recording where it points but not its path or secret', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    const hook = `/api/v0/companies/${company.id}/notification-webhook`;
    const set = await apiOk<{ secret: string }>(t, 'PUT', hook, manager.token, {
      url: 'http://127.0.0.1:9/services/T0/B0/path-is-the-credential',
    });
    await apiOk(t, 'DELETE', hook, manager.token);
    const { added, raw } = await newSince(company.id, before);
    expect(added.map((e) => e.action)).toEqual(['notification_webhook_removed', 'notification_webhook_set']);
    expect(added[1]).toMatchObject({
      target: null,
      createdBy: { userId: manager.id },
      details: { destination: 'http://127.0.0.1:9' },
    });
    expect(raw).not.toContain('path-is-the-credential');
    expect(raw).not.toContain(set.secret);
  });

  it('credits: a grant, with the granting admin, the amount and the note', async () => {
    const { company } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    await apiOk(t, 'POST', `/api/v0/admin/companies/${company.id}/credits`, t.adminToken, {
      amount: 25,
      note: 'pilot',
    });
    const { added } = await newSince(company.id, before);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      action: 'credits_granted',
      target: null,
      createdBy: { userId: expect.any(String) },
      details: { amount: 25, note: 'pilot' },
    });
  });

  it('repository membership: added, role changed, removed, and joining a public repository', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const repository = await buildRepository(t, { companyId: company.id, isPublic: true });
    const user = await buildUser(t);
    const before = (await entries(company.id)).length;
    const member = `/api/v0/repositories/${repository.id}/members/${user.id}`;
    await apiOk(t, 'PUT', member, manager.token, { role: 'reviewer' });
    await apiOk(t, 'PUT', member, manager.token, { role: 'reviewer', pingsLeft: 3 });
    await apiOk(t, 'PUT', member, manager.token, { role: 'judge' });
    await apiOk(t, 'DELETE', member, manager.token);
    const joiner = await buildUser(t);
    await apiOk(t, 'POST', `/api/v0/repositories/${repository.id}/join`, joiner.token);
    const { added } = await newSince(company.id, before);
    expect(added.map((e) => [e.action, e.target?.userId, e.details.role])).toEqual([
      ['repository_member_added', joiner.id, 'reviewer'],
      ['repository_member_removed', user.id, 'judge'],
      ['repository_member_changed', user.id, 'judge'],
      ['repository_member_added', user.id, 'reviewer'],
    ]);
    expect(added[2]!.details).toMatchObject({ repositoryId: repository.id, from: 'reviewer' });
    expect(added[0]!.createdBy?.userId).toBe(joiner.id);
    expect(added[3]!.createdBy?.userId).toBe(manager.id);
  });

  it('console sign-ins: in each company of the user; a refused sign-in writes nothing', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const before = (await entries(company.id)).length;
    expect(
      (await api(t, 'POST', '/api/v0/session', null, { token: `vgl_u_${'A'.repeat(40)}` })).statusCode,
    ).toBe(401);
    const res = await api(t, 'POST', '/api/v0/session', null, { token: member.token });
    expect(res.statusCode).toBe(200);
    const { added, raw } = await newSince(company.id, before);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      action: 'session_signed_in',
      target: { userId: member.id },
      createdBy: { userId: member.id },
      details: { via: 'console' },
    });
    expect(raw).not.toContain(member.token);
  });

  it('filters by the extension actions', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/service-keys`, manager.token, { name: 'k' });
    const page = await apiOk<{ items: Entry[] }>(
      t,
      'GET',
      `/api/v0/companies/${company.id}/audit-log?actions=service_key_created,sso_rule_added`,
      manager.token,
    );
    expect(page.items.map((e) => e.action)).toEqual(['service_key_created']);
  });
});
