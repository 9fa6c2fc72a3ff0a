import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitServer, startFakeGitServer } from '../../../test/fakes/git-server.ts';
import { type FakeSourcehostApi, startFakeSourcehostApi } from '../../../test/fakes/sourcehost-api-server.ts';
import { createTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { buildCompanyWorld, buildUser, grantCredits } from '../../../test/helpers/factories.ts';
import { REENTRANT_BANK } from '../../../test/helpers/scan-helpers.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { scans, sourcehostCommitStatuses, sourcehostDeliveries } from '../../db/schema/index.ts';
import { signWebhookBody } from '../../integrations/sourcehost/github-rest.ts';

const SECRET = 'whsec-test-secret';
const TOKEN = 'ghs-test-token';

let t: TestApp;
let git: FakeGitServer;
let api: FakeSourcehostApi;

beforeAll(async () => {
  git = await startFakeGitServer({ token: TOKEN });
  api = await startFakeSourcehostApi({ token: TOKEN });
  t = await createTestApp({ worker: true, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
});

afterAll(async () => {
  await t?.close();
  await git?.close();
  await api?.close();
});

async function call(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  token: string,
  payload?: unknown,
) {
  return t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
}

/** A company with a manager, credits and a sourcehost integration pointing at the fakes. */
async function tenant(credits: number, settings: Record<string, unknown> = {}) {
  const { company, manager } = await buildCompanyWorld(t);
  if (credits > 0) await grantCredits(t, company.id, credits);
  const res = await call('PUT', `/api/v0/companies/${company.id}/integrations/sourcehost`, manager.token, {
    credentials: { token: TOKEN, webhookSecret: SECRET },
    settings: { baseUrl: git.baseUrl, apiBaseUrl: api.baseUrl, ...settings },
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return { company, manager, integrationId: res.json().id as string };
}

function deliver(
  integrationId: string,
  event: string,
  body: unknown,
  options: { deliveryId?: string; secret?: string; signature?: string | null } = {},
) {
  const raw = Buffer.from(JSON.stringify(body));
  const signature =
    options.signature === null
      ? undefined
      : (options.signature ?? signWebhookBody(options.secret ?? SECRET, raw));
  return t.app.inject({
    method: 'POST',
    url: `/api/v0/webhooks/sourcehost/${integrationId}`,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': options.deliveryId ?? randomUUID(),
      ...(signature ? { 'x-hub-signature-256': signature } : {}),
    },
    payload: raw,
  });
}

const pushBody = (repository: string, commit: string, branch = 'main') => ({
  ref: `refs/heads/${branch}`,
  before: '0'.repeat(40),
  after: commit,
  deleted: false,
  repository: { full_name: repository, default_branch: 'main' },
  pusher: { name: 'dev' },
});

async function deliveriesOf(companyId: string) {
  return t.container.database.db
    .select()
    .from(sourcehostDeliveries)
    .where(eq(sourcehostDeliveries.companyId, companyId));
}

async function balances(companyId: string) {
  return t.container.services.credits.getBalances(companyId);
}

async function postedStatusOf(scanId: string) {
  return waitFor(
    async () => {
      const [row] = await t.container.database.db
        .select()
        .from(sourcehostCommitStatuses)
        .where(eq(sourcehostCommitStatuses.scanId, scanId));
      return row?.state === 'posted' || row?.state === 'failed' ? row : undefined;
    },
    { what: `the commit status of ${scanId}`, timeoutMs: 60_000, intervalMs: 100 },
  );
}

describe('POST /api/v0/webhooks/sourcehost/{integrationId}', () => {
  it('scans a push to a watched branch once, charges once, and posts one commit status', async () => {
    const { company, manager, integrationId } = await tenant(10);
    const repository = `acme-${randomUUID().slice(0, 8)}/bank`;
    const { commit } = await git.createRepository(repository, { 'Bank.sol': REENTRANT_BANK });
    const link = await call(
      'PUT',
      `/api/v0/companies/${company.id}/sourcehost/repositories/${repository}/link`,
      manager.token,
      {
        failOn: 'high',
      },
    );
    expect(link.statusCode, link.body).toBe(200);

    const deliveryId = randomUUID();
    const first = await deliver(integrationId, 'push', pushBody(repository, commit), { deliveryId });
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json()).toMatchObject({ outcome: 'scanned', duplicate: false, commit });
    const [scanId] = first.json().scanIds as string[];
    expect(scanId).toBeDefined();

    const again = await deliver(integrationId, 'push', pushBody(repository, commit), { deliveryId });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ duplicate: true, scanIds: [scanId] });

    const status = await postedStatusOf(scanId!);
    expect(status.state).toBe('posted');
    // The sample contract holds a high re-entrancy finding: fail-on high fails the commit.
    expect(status.postedState).toBe('failure');
    const posted = api.statuses.filter((s) => s.sha === commit);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ repository, state: 'failure', context: 'vigil/scan' });
    expect(posted[0]!.target_url).toContain(`/scans/${scanId}/findings`);

    const [scan] = await t.container.database.db.select().from(scans).where(eq(scans.id, scanId!));
    expect(scan).toMatchObject({ status: 'completed', type: 'standard', createdByKey: null });
    expect(await balances(company.id)).toMatchObject({ used: 2, reserved: 0, remaining: 8 });
    expect(await deliveriesOf(company.id)).toHaveLength(1);
  });

  it('answers 401 and stores nothing for a forged, missing or foreign signature and an unknown integration', async () => {
    const { company, integrationId } = await tenant(5);
    const body = pushBody('acme/vault', 'a'.repeat(40));
    const forged = await deliver(integrationId, 'push', body, { secret: 'not-the-secret' });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toEqual({ msg: expect.stringContaining('signature') });
    expect((await deliver(integrationId, 'push', body, { signature: null })).statusCode).toBe(401);
    expect((await deliver(integrationId, 'push', body, { signature: 'sha256=zz' })).statusCode).toBe(401);
    expect((await deliver(randomUUID(), 'push', body)).statusCode).toBe(401);
    expect((await deliver('not-a-uuid', 'push', body)).statusCode).toBe(401);
    // A body changed after signing no longer matches.
    const raw = Buffer.from(JSON.stringify(body));
    const tampered = await t.app.inject({
      method: 'POST',
      url: `/api/v0/webhooks/sourcehost/${integrationId}`,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': signWebhookBody(SECRET, raw),
      },
      payload: Buffer.from(JSON.stringify({ ...body, after: 'b'.repeat(40) })),
    });
    expect(tampered.statusCode).toBe(401);
    expect(await deliveriesOf(company.id)).toHaveLength(0);
  });

  it('records and ignores events it does not scan: no linked workspace, unwatched branch, tag, deletion, ping', async () => {
    const { company, manager, integrationId } = await tenant(5);
    const unlinked = await deliver(integrationId, 'push', pushBody('acme/unlinked', 'c'.repeat(40)));
    expect(unlinked.statusCode).toBe(202);
    expect(unlinked.json()).toMatchObject({
      outcome: 'ignored',
      reason: 'No active workspace is linked to acme/unlinked.',
    });

    const linked = await call(
      'PUT',
      `/api/v0/companies/${company.id}/sourcehost/repositories/acme/watched/link`,
      manager.token,
      {
        watchBranches: ['release'],
      },
    );
    expect(linked.statusCode, linked.body).toBe(200);
    const other = await deliver(integrationId, 'push', pushBody('acme/watched', 'd'.repeat(40), 'main'));
    expect(other.json()).toMatchObject({
      outcome: 'ignored',
      reason: 'No workspace linked to acme/watched watches main.',
    });
    const tag = await deliver(integrationId, 'push', {
      ...pushBody('acme/watched', 'e'.repeat(40)),
      ref: 'refs/tags/v1',
    });
    expect(tag.json()).toMatchObject({ outcome: 'ignored' });
    const deleted = await deliver(integrationId, 'push', {
      ...pushBody('acme/watched', '0'.repeat(40), 'release'),
      deleted: true,
    });
    expect(deleted.json()).toMatchObject({ outcome: 'ignored', reason: 'The branch was deleted.' });
    const ping = await deliver(integrationId, 'ping', { zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(ping.statusCode).toBe(202);
    expect(ping.json()).toMatchObject({ event: 'ping', outcome: 'ignored', reason: 'ping' });

    const rows = await deliveriesOf(company.id);
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.outcome === 'ignored' && r.reason)).toBe(true);
    expect(await balances(company.id)).toMatchObject({ used: 0, reserved: 0, remaining: 5 });
  });

  it('scans a pull request update against a watched branch, and only opened, reopened and synchronize', async () => {
    const { company, manager, integrationId } = await tenant(5);
    const name = `acme-${randomUUID().slice(0, 8)}/pulls`;
    const { commit } = await git.createRepository(name, {
      'Safe.sol': 'pragma solidity ^0.8.20;\ncontract Safe { uint256 public x; }\n',
    });
    await call('PUT', `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`, manager.token, {
      scanType: 'lite',
    });
    const pr = (action: string) => ({
      action,
      number: 7,
      pull_request: { head: { sha: commit, ref: 'feature' }, base: { ref: 'main' } },
      repository: { full_name: name, default_branch: 'main' },
    });
    const closed = await deliver(integrationId, 'pull_request', pr('closed'));
    expect(closed.json()).toMatchObject({ outcome: 'ignored' });
    const sync = await deliver(integrationId, 'pull_request', pr('synchronize'));
    expect(sync.json()).toMatchObject({ outcome: 'scanned', commit });
    const scanId = (sync.json().scanIds as string[])[0]!;
    const status = await postedStatusOf(scanId);
    expect(status.postedState).toBe('success');
    const [scan] = await t.container.database.db.select().from(scans).where(eq(scans.id, scanId));
    expect(scan?.type).toBe('lite');
    expect(await balances(company.id)).toMatchObject({ used: 1, remaining: 4 });
  });

  it('records no_credits, and a redelivery after a grant scans once however often it is repeated', async () => {
    const { company, manager, integrationId } = await tenant(0);
    const name = `acme-${randomUUID().slice(0, 8)}/poor`;
    const { commit } = await git.createRepository(name, { 'Bank.sol': REENTRANT_BANK });
    const link = await call(
      'PUT',
      `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`,
      manager.token,
      {},
    );
    expect(link.statusCode, link.body).toBe(200);
    const first = await deliver(integrationId, 'push', pushBody(name, commit));
    expect(first.statusCode).toBe(202);
    expect(first.json(), first.body).toMatchObject({ outcome: 'no_credits', scanIds: [] });
    expect(first.json().reason).toContain('INSUFFICIENT_CREDITS');

    await grantCredits(t, company.id, 4);
    const id = first.json().id as string;
    const redelivered = await call(
      'POST',
      `/api/v0/companies/${company.id}/sourcehost/deliveries/${id}/redeliver`,
      manager.token,
    );
    expect(redelivered.statusCode, redelivered.body).toBe(200);
    expect(redelivered.json()).toMatchObject({ outcome: 'scanned' });
    const [scanId] = redelivered.json().scanIds as string[];
    const twice = await Promise.all(
      [1, 2, 3].map(() =>
        call('POST', `/api/v0/companies/${company.id}/sourcehost/deliveries/${id}/redeliver`, manager.token),
      ),
    );
    // One run at a time: the others are told to try again (409), none scans again.
    for (const res of twice) {
      if (res.statusCode === 200) expect(res.json().scanIds).toEqual([scanId]);
      else expect(res.statusCode).toBe(409);
    }
    const later = await call(
      'POST',
      `/api/v0/companies/${company.id}/sourcehost/deliveries/${id}/redeliver`,
      manager.token,
    );
    expect(later.json()).toMatchObject({ outcome: 'scanned', scanIds: [scanId] });
    await postedStatusOf(scanId!);
    expect(await balances(company.id)).toMatchObject({ used: 2, reserved: 0, remaining: 2 });
    const all = await t.container.database.db.select().from(scans).where(eq(scans.companyId, company.id));
    expect(all).toHaveLength(1);
  });

  it('retries a commit status the host refused with 500 and posts it once', async () => {
    const { company, manager, integrationId } = await tenant(5);
    const name = `acme-${randomUUID().slice(0, 8)}/retry`;
    const { commit } = await git.createRepository(name, {
      'Safe.sol': 'pragma solidity ^0.8.20;\ncontract Safe {}\n',
    });
    await call('PUT', `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`, manager.token, {
      scanType: 'lite',
      failOn: 'critical',
    });
    api.failNextStatuses(1);
    const res = await deliver(integrationId, 'push', pushBody(name, commit));
    const scanId = (res.json().scanIds as string[])[0]!;
    const status = await postedStatusOf(scanId);
    expect(status).toMatchObject({ state: 'posted', postedState: 'success', attempts: 2 });
    expect(api.statuses.filter((s) => s.sha === commit)).toHaveLength(1);
  });

  it('fails a commit status answered with a redirect after its one POST, never following it', async () => {
    const { company, manager, integrationId } = await tenant(5);
    const name = `acme-${randomUUID().slice(0, 8)}/moved`;
    const { commit } = await git.createRepository(name, {
      'Safe.sol': 'pragma solidity ^0.8.20;\ncontract Safe {}\n',
    });
    await call('PUT', `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`, manager.token, {
      scanType: 'lite',
      failOn: 'critical',
    });
    api.redirectNextStatuses(1);
    const res = await deliver(integrationId, 'push', pushBody(name, commit));
    const scanId = (res.json().scanIds as string[])[0]!;
    const status = await postedStatusOf(scanId);
    expect(status).toMatchObject({ state: 'failed', attempts: 1 });
    expect(status.lastError).toContain('redirect');
    const posts = api.requests.filter((r) => r.startsWith('POST') && r.includes(commit));
    expect(posts).toHaveLength(1);
    expect(api.statuses.filter((s) => s.sha === commit)).toHaveLength(0);
  });
});

describe('several workspaces of one repository', () => {
  it('scans each watching workspace once, reports under its own context, and a redelivery scans only those refused', async () => {
    const { company, manager, integrationId } = await tenant(2);
    const name = `acme-${randomUUID().slice(0, 8)}/mono`;
    const { commit } = await git.createRepository(name, {
      'contracts/Bank.sol': REENTRANT_BANK,
      'web/Safe.sol': 'pragma solidity ^0.8.20;\ncontract Safe {}\n',
    });
    for (const prefix of ['contracts', 'web']) {
      const link = await call(
        'PUT',
        `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`,
        manager.token,
        {
          prefix,
        },
      );
      expect(link.statusCode, link.body).toBe(200);
    }
    // Credits for one standard scan: the first workspace is scanned, the second refused.
    const first = await deliver(integrationId, 'push', pushBody(name, commit));
    expect(first.json()).toMatchObject({ outcome: 'scanned' });
    expect(first.json().reason).toContain('INSUFFICIENT_CREDITS');
    expect(first.json().scanIds).toHaveLength(1);
    await grantCredits(t, company.id, 10);
    const id = first.json().id as string;
    const again = await call(
      'POST',
      `/api/v0/companies/${company.id}/sourcehost/deliveries/${id}/redeliver`,
      manager.token,
    );
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ outcome: 'scanned', reason: null });
    const scanIds = again.json().scanIds as string[];
    expect(scanIds).toHaveLength(2);
    expect(scanIds).toContain(first.json().scanIds[0]);
    const third = await call(
      'POST',
      `/api/v0/companies/${company.id}/sourcehost/deliveries/${id}/redeliver`,
      manager.token,
    );
    expect([...(third.json().scanIds as string[])].sort()).toEqual([...scanIds].sort());
    const statuses = await Promise.all(scanIds.map((scanId) => postedStatusOf(scanId)));
    expect(await balances(company.id)).toMatchObject({ used: 4, reserved: 0, remaining: 8 });
    expect(statuses.map((s) => s.context).sort()).toEqual(['vigil/scan/contracts', 'vigil/scan/web']);
    const posted = api.statuses.filter((s) => s.sha === commit);
    expect(posted.map((s) => s.context).sort()).toEqual(['vigil/scan/contracts', 'vigil/scan/web']);
  });

  it('the status sweep enqueues a finished scan whose commit status still waits, once', async () => {
    const { company, manager, integrationId } = await tenant(5);
    const name = `acme-${randomUUID().slice(0, 8)}/swept`;
    const { commit } = await git.createRepository(name, {
      'Safe.sol': 'pragma solidity ^0.8.20;\ncontract Safe {}\n',
    });
    await call('PUT', `/api/v0/companies/${company.id}/sourcehost/repositories/${name}/link`, manager.token, {
      scanType: 'lite',
    });
    const res = await deliver(integrationId, 'push', pushBody(name, commit));
    const scanId = (res.json().scanIds as string[])[0]!;
    await postedStatusOf(scanId);
    // As if the scan had ended without its hook (a scan failed by the abandoned-scan sweep).
    await t.container.database.db
      .update(sourcehostCommitStatuses)
      .set({ state: 'waiting' })
      .where(eq(sourcehostCommitStatuses.scanId, scanId));
    const swept = await Promise.all([1, 2].map(() => t.container.services.sourcehost.sweepCommitStatuses()));
    expect(swept.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await t.container.services.sourcehost.sweepCommitStatuses()).toBe(0);
  });

  it('ignores a payload whose repository or ref cannot be stored, without a 500', async () => {
    const { integrationId } = await tenant(0);
    const res = await deliver(
      integrationId,
      'push',
      pushBody('acme/\u0000bad', 'f'.repeat(40), 'ma\ud800in'),
    );
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ outcome: 'ignored', repository: null });
  });
});

describe('GET /api/v0/companies/{companyId}/sourcehost/deliveries', () => {
  it('pages the deliveries newest first with a cursor, for managers only', async () => {
    const { company, manager, integrationId } = await tenant(0);
    for (let i = 0; i < 5; i += 1) await deliver(integrationId, 'ping', { zen: `z${i}` });
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const res = await call(
        'GET',
        `/api/v0/companies/${company.id}/sourcehost/deliveries?limit=2${next ? `&next=${next}` : ''}`,
        manager.token,
      );
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...(res.json().items as Array<{ id: string }>).map((d) => d.id));
      next = res.json().nextValue;
    } while (next);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const member = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    expect(
      (await call('GET', `/api/v0/companies/${company.id}/sourcehost/deliveries`, member.token)).statusCode,
    ).toBe(403);
    const stranger = await buildCompanyWorld(t);
    expect(
      (await call('GET', `/api/v0/companies/${company.id}/sourcehost/deliveries`, stranger.manager.token))
        .statusCode,
    ).toBe(404);
  });
});

describe('GET /api/v0/companies/{companyId}/sourcehost/repositories', () => {
  it('lists every page of the installation repositories with their links, cached until refreshed', async () => {
    const names = Array.from({ length: 230 }, (_, i) => `acme/repo-${String(i).padStart(3, '0')}`);
    api.setRepositories(names);
    const { company, manager } = await tenant(0);
    await call(
      'PUT',
      `/api/v0/companies/${company.id}/sourcehost/repositories/acme/repo-101/link`,
      manager.token,
      {
        prefix: 'contracts',
        watchBranches: ['main', 'release'],
      },
    );
    const before = api.requests.length;
    const res = await call('GET', `/api/v0/companies/${company.id}/sourcehost/repositories`, manager.token);
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as Array<{
      fullName: string;
      linked: boolean;
      workspaces: Array<Record<string, unknown>>;
    }>;
    expect(items.map((r) => r.fullName)).toEqual(names);
    expect(res.json().truncated).toBe(false);
    const linked = items.filter((r) => r.linked);
    expect(linked.map((r) => r.fullName)).toEqual(['acme/repo-101']);
    expect(linked[0]!.workspaces[0]).toMatchObject({
      prefix: 'contracts',
      watchBranches: ['main', 'release'],
    });
    const pages = api.requests.slice(before);
    expect(pages).toEqual([
      'GET /installation/repositories?per_page=100',
      'GET /installation/repositories?per_page=100&page=2',
      'GET /installation/repositories?per_page=100&page=3',
    ]);
    await call('GET', `/api/v0/companies/${company.id}/sourcehost/repositories`, manager.token);
    expect(api.requests.length).toBe(before + 3);
    await call('GET', `/api/v0/companies/${company.id}/sourcehost/repositories?refresh=true`, manager.token);
    expect(api.requests.length).toBe(before + 6);

    const unlink = await call(
      'DELETE',
      `/api/v0/companies/${company.id}/sourcehost/repositories/acme/repo-101/link?prefix=contracts`,
      manager.token,
    );
    expect(unlink.statusCode, unlink.body).toBe(204);
    const after = await call('GET', `/api/v0/companies/${company.id}/sourcehost/repositories`, manager.token);
    expect((after.json().items as Array<{ linked: boolean }>).some((r) => r.linked)).toBe(false);
    const again = await call(
      'DELETE',
      `/api/v0/companies/${company.id}/sourcehost/repositories/acme/repo-101/link?prefix=contracts`,
      manager.token,
    );
    expect(again.statusCode).toBe(404);
  });

  it('reads /user/repos for a user token, and answers 409 without an integration and 502 when the token is refused', async () => {
    api.setRepositories(['dev/one', 'dev/two']);
    const { company, manager } = await tenant(0, { repositoryListing: 'user' });
    const res = await call('GET', `/api/v0/companies/${company.id}/sourcehost/repositories`, manager.token);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json().items as Array<{ fullName: string }>).map((r) => r.fullName)).toEqual([
      'dev/one',
      'dev/two',
    ]);
    expect(api.requests.at(-1)).toBe('GET /user/repos?per_page=100');

    const bare = await buildCompanyWorld(t);
    const none = await call(
      'GET',
      `/api/v0/companies/${bare.company.id}/sourcehost/repositories`,
      bare.manager.token,
    );
    expect(none.statusCode).toBe(409);
    expect(none.json()).toEqual({ msg: expect.stringContaining('sourcehost') });

    const wrong = await buildCompanyWorld(t);
    await call('PUT', `/api/v0/companies/${wrong.company.id}/integrations/sourcehost`, wrong.manager.token, {
      credentials: { token: 'wrong', webhookSecret: SECRET },
      settings: { baseUrl: git.baseUrl, apiBaseUrl: api.baseUrl },
    });
    const refused = await call(
      'GET',
      `/api/v0/companies/${wrong.company.id}/sourcehost/repositories`,
      wrong.manager.token,
    );
    expect(refused.statusCode).toBe(502);
    expect(refused.json().msg).toContain('refused');
  });
});

describe('sourcehost.deliveries-cleanup', () => {
  it('deletes deliveries older than 7 days and keeps newer ones', async () => {
    const { company, integrationId } = await tenant(0);
    await deliver(integrationId, 'ping', { zen: 'old' });
    await deliver(integrationId, 'ping', { zen: 'new' });
    const [old] = await deliveriesOf(company.id);
    await t.container.database.db
      .update(sourcehostDeliveries)
      .set({ receivedAt: new Date(Date.now() - 8 * 86_400_000) })
      .where(eq(sourcehostDeliveries.id, old!.id));
    expect(await t.container.services.sourcehost.purgeDeliveries()).toBeGreaterThanOrEqual(1);
    const left = await deliveriesOf(company.id);
    expect(left).toHaveLength(1);
    expect(left[0]!.id).not.toBe(old!.id);
  });
});
