import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSourcehostApi, startFakeSourcehostApi } from '../../test/fakes/sourcehost-api-server.ts';
import { createTestApp, type TestApp } from '../../test/helpers/app.ts';
import { runCli } from '../../test/helpers/cli.ts';
import { buildCompanyWorld } from '../../test/helpers/factories.ts';
import { repositories } from '../db/schema/index.ts';
import { signWebhookBody } from '../integrations/sourcehost/github-rest.ts';
import { registerSourcehostCommands } from './sourcehost.ts';

let t: TestApp;
let url: string;
let api: FakeSourcehostApi;
beforeAll(async () => {
  api = await startFakeSourcehostApi({ token: 'cli-token' });
  t = await createTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await api?.close();
});

/** Runs `vigil …` against the test server; returns what it printed. */
async function vigil(token: string, ...args: string[]): Promise<string> {
  return runCli(
    (program) => registerSourcehostCommands(program, { VIGIL_URL: url, VIGIL_TOKEN: token }),
    args,
  );
}

describe('vigil sourcehost and vigil leaderboard', () => {
  it('lists, links and unlinks repositories, lists and redelivers deliveries, and shows the leaderboard', async () => {
    api.setRepositories(['acme/vault', 'acme/bridge']);
    const { company, manager } = await buildCompanyWorld(t);
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/sourcehost`,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: {
        credentials: { token: 'cli-token', webhookSecret: 's3cret' },
        settings: { baseUrl: api.baseUrl },
      },
    });
    expect(put.statusCode, put.body).toBe(201);

    const linked = JSON.parse(
      await vigil(
        manager.token,
        'sourcehost',
        'link',
        company.id,
        'acme/vault',
        '--branch',
        'main',
        '--branch',
        'release',
        '--type',
        'lite',
        '--fail-on',
        'medium',
        '--json',
      ),
    );
    expect(linked.workspace).toMatchObject({
      watchBranches: ['main', 'release'],
      autoScanType: 'lite',
      failOn: 'medium',
    });
    const table = await vigil(manager.token, 'sourcehost', 'repos', company.id);
    expect(table).toMatch(/^fullName\s+private\s+defaultBranch\s+linked\s+watching/);
    expect(table).toMatch(/acme\/vault\s+false\s+main\s+true\s+\/ \(main,release\)/);
    expect(table).toMatch(/acme\/bridge\s+false\s+main\s+false/);

    const body = Buffer.from(JSON.stringify({ zen: 'hello' }));
    const ping = await t.app.inject({
      method: 'POST',
      url: `/api/v0/webhooks/sourcehost/${put.json().id}`,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'ping',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': signWebhookBody('s3cret', body),
      },
      payload: body,
    });
    expect(ping.statusCode).toBe(202);
    const deliveries = JSON.parse(
      await vigil(manager.token, 'sourcehost', 'deliveries', company.id, '--json'),
    );
    expect(deliveries.items).toHaveLength(1);
    expect(deliveries.items[0]).toMatchObject({ event: 'ping', outcome: 'ignored' });
    const again = JSON.parse(
      await vigil(manager.token, 'sourcehost', 'redeliver', company.id, deliveries.items[0].id, '--json'),
    );
    expect(again).toMatchObject({ id: deliveries.items[0].id, outcome: 'ignored' });

    await vigil(manager.token, 'sourcehost', 'unlink', company.id, 'acme/vault');
    const after = JSON.parse(await vigil(manager.token, 'sourcehost', 'repos', company.id, '--json'));
    expect(after.items.every((r: { linked: boolean }) => !r.linked)).toBe(true);

    const [repository] = await t.container.database.db
      .insert(repositories)
      .values({ companyId: company.id, name: 'board' })
      .returning();
    const board = await vigil(manager.token, 'leaderboard', repository!.id);
    expect(board).toBe('(none)\n');
  });

  it('refuses a bad scan type or repository name before calling the server', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    await expect(
      vigil(manager.token, 'sourcehost', 'link', company.id, 'acme/vault', '--type', 'bogus'),
    ).rejects.toThrow('--type must be lite, standard or audit');
    await expect(vigil(manager.token, 'sourcehost', 'link', company.id, 'not a repo')).rejects.toThrow(
      'owner/name',
    );
  });
});
