import { describe, expect, it } from 'vitest';
import { sharedTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { buildCompany } from '../../../test/helpers/factories.ts';
import { isAppError } from '../../errors.ts';

const t = sharedTestApp();

async function put(app: TestApp, companyId: string, provider: string, payload: Record<string, unknown>) {
  return app.app.inject({
    method: 'PUT',
    url: `/api/v0/companies/${companyId}/integrations/${provider}`,
    headers: { authorization: `Bearer ${app.adminToken}` },
    payload,
  });
}

describe('integration settings', () => {
  it("refuses settings that do not fit the provider's schema: 400 naming the setting, nothing saved", async () => {
    const company = await buildCompany(t);
    const cases = [
      ['tracker_a', { apiKey: 'k' }, { destination: { teamId: 42 } }, 'settings.destination.teamId'],
      ['tracker_a', { apiKey: 'k' }, { destination: {} }, 'settings.destination.teamId'],
      [
        'tracker_a',
        { apiKey: 'k' },
        { destination: { teamId: 'T', priority: 9 } },
        'settings.destination.priority',
      ],
      ['tracker_a', { apiKey: 'k' }, { destinaton: { teamId: 'T' } }, 'settings.destinaton'],
      // A setting of another provider is unknown to this one.
      ['tracker_a', { apiKey: 'k' }, { repositoryListing: 'user' }, 'settings.repositoryListing'],
      [
        'tracker_b',
        { accessToken: 'a' },
        { destination: { issueType: 'Bug' } },
        'settings.destination.projectKey',
      ],
      ['tracker_b', { accessToken: 'a' }, { default: 'yes' }, 'settings.default'],
      ['sourcehost', { token: 't' }, { repositoryListing: 'org' }, 'settings.repositoryListing'],
      ['sourcehost', { token: 't' }, { accountName: ['acme'] }, 'settings.accountName'],
    ] as const;
    for (const [provider, credentials, settings, field] of cases) {
      const res = await put(t, company.id, provider, {
        ...(provider === 'tracker_b' ? { site: 'https://acme.example.net' } : {}),
        credentials,
        settings,
      });
      const label = `${provider} ${JSON.stringify(settings)}`;
      expect(res.statusCode, label).toBe(400);
      const body = res.json() as { msg: string };
      expect(Object.keys(body), label).toEqual(['msg']);
      expect(body.msg.startsWith(`${field}: `), `${label}: ${body.msg}`).toBe(true);
      expect(body.msg, label).toContain(`the ${provider} settings`);
    }
    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/integrations`,
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(list.json()).toEqual({ items: [] });
  });

  it("saves each provider's settings as given and hands them to the adapters typed", async () => {
    const company = await buildCompany(t);
    const trackerA = {
      workspaceUrlKey: 'acme',
      appUrl: 'https://tracker.example.com',
      destination: { teamId: 'team-1', labelIds: ['l1'], priority: 2 },
    };
    const trackerB = { destination: { projectKey: 'ENG', issueType: 'Bug' }, default: true };
    const sourcehost = { repositoryListing: 'user', accountName: 'acme-bot' };
    expect(
      (await put(t, company.id, 'tracker_a', { credentials: { apiKey: 'k' }, settings: trackerA }))
        .statusCode,
    ).toBe(201);
    const b = await put(t, company.id, 'tracker_b', {
      site: 'https://acme.example.net',
      credentials: { accessToken: 'a' },
      settings: trackerB,
    });
    expect(b.statusCode, b.body).toBe(201);
    expect(
      (await put(t, company.id, 'sourcehost', { credentials: { token: 't' }, settings: sourcehost }))
        .statusCode,
    ).toBe(201);

    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/integrations`,
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    const items = (list.json() as { items: Array<{ provider: string; settings: unknown }> }).items;
    expect(Object.fromEntries(items.map((i) => [i.provider, i.settings]))).toEqual({
      tracker_a: trackerA,
      tracker_b: trackerB,
      sourcehost,
    });

    const service = t.container.services.integrations;
    const [a] = await service.getConnections(company.id, 'tracker_a');
    expect(a?.settings.destination?.priority).toBe(2);
    const [sh] = await service.getConnections(company.id, 'sourcehost');
    expect(sh?.settings.repositoryListing).toBe('user');
  });

  it('answers INTEGRATION_NOT_CONNECTED, naming the setting, for stored settings that no longer fit', async () => {
    const company = await buildCompany(t);
    const res = await put(t, company.id, 'tracker_a', {
      credentials: { apiKey: 'k' },
      settings: { destination: { teamId: 'team-1' } },
    });
    expect(res.statusCode).toBe(201);
    // Settings saved before they were checked: a priority out of range.
    await t.container.database.executeSql(
      'update integrations set settings = $1::jsonb where company_id = $2',
      [JSON.stringify({ destination: { teamId: 'team-1', priority: 9 } }), company.id],
    );
    const err = await t.container.services.integrations.getConnections(company.id, 'tracker_a').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAppError(err, 'INTEGRATION_NOT_CONNECTED')).toBe(true);
    expect((err as Error).message).toContain('settings.destination.priority');
  });
});
