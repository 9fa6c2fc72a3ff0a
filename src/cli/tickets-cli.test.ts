import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../../test/fakes/tracker-a-server.ts';
import { createTestApp, type TestApp } from '../../test/helpers/app.ts';
import { runCli } from '../../test/helpers/cli.ts';
import {
  buildCompany,
  buildScannerFinding,
  buildServiceKey,
  connectTrackerA,
} from '../../test/helpers/factories.ts';
import { registerClientCommands } from './client-commands.ts';

let t: TestApp;
let url: string;
let tracker: FakeTrackerA;
beforeAll(async () => {
  tracker = await startFakeTrackerA();
  t = await createTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await tracker?.close();
});

/** Runs `vigil …` in this process against the test server; returns what it printed. */
async function vigil(key: string, ...args: string[]): Promise<string> {
  return runCli(
    (program) =>
      registerClientCommands(program, {
        VIGIL_URL: url,
        VIGIL_API_KEY: key,
        VIGIL_CONFIG_DIR: '/nonexistent',
      }),
    args,
  );
}

describe('vigil tickets against a tracker', () => {
  it('sends a finding once, links another to an existing issue, and lists both', async () => {
    const company = await buildCompany(t);
    await connectTrackerA(t, company.id, tracker);
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    const sent = await buildScannerFinding(t, { companyId: company.id });
    const linked = await buildScannerFinding(t, { companyId: company.id });

    const first = await vigil(key, 'tickets', 'send', sent.id, 'tracker_a');
    expect(first).toMatch(/^created: [A-Z]+-\d+ http/);
    const before = tracker.issues.count();
    const again = await vigil(key, 'tickets', 'send', sent.id, 'tracker_a');
    expect(again).toMatch(/^already sent: [A-Z]+-\d+ http/);
    expect(tracker.issues.count()).toBe(before);

    const existing = tracker.seedIssue({ teamKey: tracker.teams[0]!.key, title: 'Filed by hand' });
    const link = await vigil(key, 'tickets', 'link', linked.id, 'tracker_a', existing.identifier);
    expect(link).toContain(`linked: ${existing.identifier}`);
    const relink = await vigil(key, 'tickets', 'link', linked.id, 'tracker_a', existing.identifier);
    expect(relink).toContain(`already linked: ${existing.identifier}`);

    const listed = JSON.parse(await vigil(key, 'tickets', 'list', linked.id, '--json')) as Array<{
      key: string;
      source: string;
    }>;
    expect(listed).toEqual([expect.objectContaining({ key: existing.identifier, source: 'linked' })]);
    const table = await vigil(key, 'tickets', 'list', sent.id);
    expect(table).toMatch(/^provider\s+key\s+title\s+status\s+source\s+url/);
    expect(table).toMatch(/tracker_a\s+[A-Z]+-\d+/);
  });
});
