import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeTrackerB, startFakeTrackerB, validateAdf } from '../../../test/fakes/tracker-b-server.ts';
import { parseIssueRef } from './issue-ref.ts';
import { buildFindingLabel } from './ticket-content.ts';
import type { TicketFindingContent, TrackerBDestination, TrackerBIssueRef } from './tracker.types.ts';
import { createTrackerBAdapter, resolveTrackerBIssue, type TrackerBOptions } from './tracker-b.ts';

function buildFinding(overrides: Partial<TicketFindingContent> = {}): TicketFindingContent {
  return {
    id: randomUUID(),
    title: 'Reentrancy in Vault.withdraw',
    description:
      'The `withdraw` function sends ether **before** updating the balance.\n\n```solidity\n(bool ok,) = msg.sender.call{value: amount}("");\n```\n\n- an attacker re-enters\n- the vault is drained',
    severity: 'high',
    location: { file: 'contracts/Vault.sol', startLine: 42, endLine: 57 },
    identifiers: [{ type: 'cwe', name: 'CWE-841', value: '841' }],
    url: 'https://vigil.example.test/findings/1',
    ...overrides,
  };
}

function keyRef(key: string): TrackerBIssueRef {
  return { provider: 'tracker_b', form: 'key', key, siteUrl: null };
}

/** Records the waits instead of sleeping, so that retry tests do not depend on the clock. */
function recordSleeps(): { sleeps: number[]; sleep: (ms: number) => Promise<void> } {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms) => void sleeps.push(ms) };
}

let fake: FakeTrackerB;

function basicAdapter(options: TrackerBOptions = {}, apiToken = fake.apiToken) {
  return createTrackerBAdapter(
    { siteUrl: fake.url, auth: { type: 'basic', email: fake.email, apiToken } },
    { timeoutMs: 2_000, ...options },
  );
}

function destination(projectKey = 'ENG'): TrackerBDestination {
  return { provider: 'tracker_b', siteUrl: fake.url, projectKey };
}

beforeEach(async () => {
  fake = await startFakeTrackerB({ projects: ['ENG'] });
});

afterEach(async () => {
  await fake.close();
});

describe('tracker_b verifyIssue', () => {
  it('returns the issue with its id, key, browse URL, summary and status', async () => {
    const seeded = fake.seedIssue({ projectKey: 'ENG', summary: 'Existing bug', status: 'In Progress' });
    const outcome = await basicAdapter().verifyIssue(keyRef('ENG-1'));
    expect(outcome).toEqual({
      kind: 'ok',
      value: {
        externalId: seeded.id,
        key: 'ENG-1',
        url: `${fake.url}/browse/ENG-1`,
        title: 'Existing bug',
        status: 'In Progress',
      },
    });
  });

  it('reads the issue without asking to update the history', async () => {
    fake.seedIssue({ projectKey: 'ENG', summary: 'Existing bug' });
    await basicAdapter().verifyIssue(keyRef('ENG-1'));
    const read = fake.requests.find((r) => r.url.startsWith('/rest/api/3/issue/ENG-1'));
    expect(read?.url).toContain('fields=summary,status,issuetype,project,labels');
    expect(read?.url).not.toContain('updateHistory');
  });

  it('matches keys case-insensitively', async () => {
    fake.seedIssue({ projectKey: 'ENG', summary: 'Existing bug' });
    const parsed = parseIssueRef('tracker_b', 'eng-1', { sites: [fake.url] });
    expect(parsed).toMatchObject({ kind: 'ok', ref: { key: 'ENG-1' } });
    const lowerAtProvider = await basicAdapter().verifyIssue(keyRef('eng-1'));
    expect(lowerAtProvider).toMatchObject({ kind: 'ok', value: { key: 'ENG-1' } });
  });

  it('follows a moved issue and reports its current key', async () => {
    const seeded = fake.seedIssue({ projectKey: 'OLD', summary: 'Moved bug' });
    fake.moveIssue('OLD-1', 'NEW');
    const outcome = await basicAdapter().verifyIssue(keyRef('OLD-1'));
    expect(outcome).toMatchObject({
      kind: 'ok',
      value: { externalId: seeded.id, key: 'NEW-1', url: `${fake.url}/browse/NEW-1` },
    });
  });

  it('says not found only after /myself confirms the credentials', async () => {
    const outcome = await basicAdapter().verifyIssue(keyRef('ENG-404'));
    expect(outcome).toEqual({ kind: 'not_found' });
    expect(fake.requests.map((r) => r.url.split('?')[0])).toEqual([
      '/rest/api/3/issue/ENG-404',
      '/rest/api/3/myself',
    ]);
  });

  it('reports bad credentials as an auth error although the issue read answers 404', async () => {
    fake.seedIssue({ projectKey: 'ENG', summary: 'Existing bug' });
    const outcome = await basicAdapter({}, 'wrong-token-value').verifyIssue(keyRef('ENG-1'));
    expect(outcome).toMatchObject({ kind: 'error', reason: 'auth', status: 401, retryable: false });
    expect(fake.requests.map((r) => r.status)).toEqual([404, 401]);
  });

  it('turns an HTML 401 page into a readable message without markup', async () => {
    const outcome = await basicAdapter({}, 'wrong-token-value').checkCredentials();
    expect(outcome.kind).toBe('error');
    if (outcome.kind === 'error') {
      expect(outcome.message).toContain('Unauthorized (401)');
      expect(outcome.message).not.toMatch(/<[a-z]/i);
    }
  });

  it('never puts the credential in an error message, even when the provider echoes it', async () => {
    fake.setBehaviour({ echoCredentials: true });
    const token = 'ATATT-super-secret-token-value';
    const outcome = await basicAdapter({}, token).checkCredentials();
    const basic = Buffer.from(`${fake.email}:${token}`).toString('base64');
    expect(outcome.kind).toBe('error');
    const text = JSON.stringify(outcome);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(token);
    expect(text).not.toContain(basic);
  });

  it('uses Bearer against the gateway and still links to the site', async () => {
    fake.seedIssue({ projectKey: 'ENG', summary: 'Existing bug' });
    const adapter = createTrackerBAdapter({
      siteUrl: 'https://acme.atlassian.net',
      apiBaseUrl: fake.gatewayUrl,
      auth: { type: 'bearer', accessToken: fake.bearerToken },
    });
    const outcome = await adapter.verifyIssue(keyRef('ENG-1'));
    expect(outcome).toMatchObject({ kind: 'ok', value: { url: 'https://acme.atlassian.net/browse/ENG-1' } });
    expect(fake.requests[0]?.url).toMatch(new RegExp(`^/ex/jira/${fake.cloudId}/rest/api/3/issue/ENG-1`));
  });

  it('reports a refused Bearer token as an auth error', async () => {
    const adapter = createTrackerBAdapter({
      siteUrl: 'https://acme.atlassian.net',
      apiBaseUrl: fake.gatewayUrl,
      auth: { type: 'bearer', accessToken: 'expired-token' },
    });
    expect(await adapter.verifyIssue(keyRef('ENG-1'))).toMatchObject({ kind: 'error', reason: 'auth' });
  });

  it('gives a retryable error when the site does not answer in time', async () => {
    fake.setBehaviour({ holdNext: 1 });
    const outcome = await basicAdapter({ timeoutMs: 200 }).verifyIssue(keyRef('ENG-1'));
    expect(outcome).toEqual({
      kind: 'error',
      reason: 'unavailable',
      retryable: true,
      message: 'tracker_b did not answer the request to read the issue: no answer within 200 ms',
    });
  });

  it('does not follow a redirect with the credential', async () => {
    const redirecting = createServer((_req, res) => {
      res.writeHead(301, { location: `${fake.url}/rest/api/3/issue/ENG-1` });
      res.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const siteUrl = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
      const adapter = createTrackerBAdapter({
        siteUrl,
        auth: { type: 'basic', email: fake.email, apiToken: fake.apiToken },
      });
      const outcome = await adapter.verifyIssue(keyRef('ENG-1'));
      expect(outcome).toMatchObject({ kind: 'error', reason: 'misconfigured', status: 301 });
      expect(fake.requests).toHaveLength(0);
    } finally {
      redirecting.closeAllConnections();
      await new Promise((resolve) => redirecting.close(resolve));
    }
  });

  it('refuses a reference that names another site', async () => {
    const outcome = await basicAdapter().verifyIssue({
      provider: 'tracker_b',
      form: 'url',
      key: 'ENG-1',
      siteUrl: 'https://other.atlassian.net',
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'misconfigured' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('tracker_b createIssue', () => {
  it('creates a Bug with the severity title, a valid Atlassian Document and the finding label', async () => {
    const finding = buildFinding();
    const outcome = await basicAdapter().createIssue({
      clientId: randomUUID(),
      finding,
      destination: destination(),
    });
    expect(outcome).toMatchObject({
      kind: 'ok',
      value: { key: 'ENG-1', url: `${fake.url}/browse/ENG-1`, title: '[High] Reentrancy in Vault.withdraw' },
    });
    const [stored] = fake.issues.list();
    expect(stored?.summary).toBe('[High] Reentrancy in Vault.withdraw');
    expect(stored?.issueType).toBe('Bug');
    expect(stored?.labels).toEqual(['security', buildFindingLabel(finding.id)]);
    expect(validateAdf(stored?.description)).toBeNull();
    expect(JSON.stringify(stored?.description)).toContain('contracts/Vault.sol:42-57');
  });

  it('returns a definitive error when the project does not exist', async () => {
    const outcome = await basicAdapter().createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination('NOPE'),
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'rejected', status: 400, retryable: false });
    if (outcome.kind === 'error')
      expect(outcome.message).toContain('project: Specify a valid project ID or key');
    expect(fake.issues.count()).toBe(0);
  });

  it('waits for Retry-After on 429 and then creates exactly one issue', async () => {
    fake.setBehaviour({ rateLimitNext: 2, retryAfter: '1' });
    const { sleeps, sleep } = recordSleeps();
    const outcome = await basicAdapter({ sleep }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ok');
    expect(sleeps).toEqual([1000, 1000]);
    expect(fake.issues.count()).toBe(1);
  });

  it('backs off exponentially with jitter on 429 without Retry-After', async () => {
    fake.setBehaviour({ rateLimitNext: 2, retryAfter: null });
    const { sleeps, sleep } = recordSleeps();
    const outcome = await basicAdapter({ sleep, random: () => 0.5, backoffBaseMs: 100 }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ok');
    expect(sleeps).toEqual([75, 150]);
  });

  it('retries on the real clock when no sleep is injected', async () => {
    fake.setBehaviour({ rateLimitNext: 1, retryAfter: null });
    const outcome = await basicAdapter({ backoffBaseMs: 10 }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ok');
    expect(fake.requests.map((r) => r.status)).toEqual([429, 201]);
  });

  it('gives up after the bounded retries with a retryable rate-limit error and creates nothing', async () => {
    fake.setBehaviour({ rateLimitNext: 10, retryAfter: '2' });
    const { sleep } = recordSleeps();
    const outcome = await basicAdapter({ sleep, maxRateLimitRetries: 2 }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toMatchObject({
      kind: 'error',
      reason: 'rate_limited',
      retryable: true,
      retryAfterSeconds: 2,
    });
    expect(fake.requests).toHaveLength(3);
    expect(fake.issues.count()).toBe(0);
  });

  it('does not wait inline for a Retry-After longer than the configured maximum', async () => {
    fake.setBehaviour({ rateLimitNext: 1, retryAfter: '3600' });
    const { sleeps, sleep } = recordSleeps();
    const outcome = await basicAdapter({ sleep }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'rate_limited', retryAfterSeconds: 3600 });
    expect(sleeps).toEqual([]);
  });

  it('reports a create whose answer never arrives as ambiguous, and findCreated finds the issue', async () => {
    fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'hold' });
    const finding = buildFinding();
    const adapter = basicAdapter({ timeoutMs: 200, reconcilePollInitialMs: 20 });
    const outcome = await adapter.createIssue({
      clientId: randomUUID(),
      finding,
      destination: destination(),
    });
    expect(outcome.kind).toBe('ambiguous');
    expect(fake.issues.count()).toBe(1);
    const found = await adapter.findCreated({
      clientId: randomUUID(),
      findingId: finding.id,
      destination: destination(),
    });
    expect(found).toMatchObject({
      kind: 'ok',
      value: { key: 'ENG-1', externalId: fake.issues.list()[0]?.id },
    });
  });

  it('reports a reset connection during create as ambiguous', async () => {
    fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy' });
    const outcome = await basicAdapter().createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toEqual({
      kind: 'ambiguous',
      message: expect.stringMatching(/^tracker_b did not answer the create \(.+\); the issue may exist$/),
    });
    expect(fake.issues.count()).toBe(1);
  });

  it('reports a 5xx during create as ambiguous', async () => {
    fake.setBehaviour({ failCreatesAfterStore: 1 });
    const outcome = await basicAdapter().createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ambiguous');
    expect(fake.issues.count()).toBe(1);
  });
});

describe('tracker_b findCreated', () => {
  it('polls the search until the index catches up with the lost create', async () => {
    fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy', indexDelayMs: 300 });
    const finding = buildFinding();
    const adapter = basicAdapter({
      reconcilePollInitialMs: 50,
      reconcilePollMaxMs: 200,
      reconcileWindowMs: 5_000,
    });
    expect(
      (await adapter.createIssue({ clientId: randomUUID(), finding, destination: destination() })).kind,
    ).toBe('ambiguous');
    const found = await adapter.findCreated({
      clientId: randomUUID(),
      findingId: finding.id,
      destination: destination(),
    });
    expect(found).toMatchObject({ kind: 'ok', value: { key: 'ENG-1' } });
    const searches = fake.requests.filter((r) => r.url === '/rest/api/3/search/jql');
    expect(searches.length).toBeGreaterThan(1);
    expect(searches[0]?.body).toMatchObject({
      jql: `project = "ENG" AND labels = "${buildFindingLabel(finding.id)}" ORDER BY created ASC`,
      maxResults: 50,
    });
  });

  it('says not found once the bounded window has passed without a match', async () => {
    const { sleeps, sleep } = recordSleeps();
    const adapter = basicAdapter({
      sleep,
      random: () => 0,
      reconcilePollInitialMs: 100,
      reconcilePollMaxMs: 400,
      reconcileWindowMs: 1_000,
    });
    const found = await adapter.findCreated({
      clientId: randomUUID(),
      findingId: randomUUID(),
      destination: destination(),
    });
    expect(found).toEqual({ kind: 'not_found' });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1_000);
    expect(fake.requests.length).toBe(sleeps.length + 1);
  });

  it('does not say not found when the search itself keeps failing', async () => {
    fake.setBehaviour({ rateLimitNext: 100 });
    const { sleep } = recordSleeps();
    const adapter = basicAdapter({
      sleep,
      maxRateLimitRetries: 0,
      reconcilePollInitialMs: 100,
      reconcileWindowMs: 300,
    });
    const found = await adapter.findCreated({
      clientId: randomUUID(),
      findingId: randomUUID(),
      destination: destination(),
    });
    expect(found).toMatchObject({ kind: 'error', reason: 'rate_limited' });
  });

  it('stops at once on refused credentials', async () => {
    const found = await basicAdapter({}, 'wrong-token-value').findCreated({
      clientId: randomUUID(),
      findingId: randomUUID(),
      destination: destination(),
    });
    expect(found).toMatchObject({ kind: 'error', reason: 'auth' });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('fake tracker_b site', () => {
  const headers = () => ({
    authorization: `Basic ${Buffer.from(`${fake.email}:${fake.apiToken}`).toString('base64')}`,
    'content-type': 'application/json',
  });

  it('rejects a string description with the ADF error', async () => {
    const res = await fetch(`${fake.url}/rest/api/3/issue`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({
        fields: {
          project: { key: 'ENG' },
          issuetype: { name: 'Bug' },
          summary: 'x',
          description: 'plain text',
        },
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      errorMessages: [],
      errors: {
        description: 'Operation value must be an Atlassian Document (see the Atlassian Document Format)',
      },
    });
  });

  it('rejects an Atlassian Document with an empty text node', async () => {
    const res = await fetch(`${fake.url}/rest/api/3/issue`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({
        fields: {
          project: { key: 'ENG' },
          issuetype: { name: 'Bug' },
          summary: 'x',
          description: {
            type: 'doc',
            version: 1,
            content: [{ type: 'paragraph', content: [{ type: 'text', text: '' }] }],
          },
        },
      }),
    });
    expect(res.status).toBe(400);
    expect(fake.issues.count()).toBe(0);
  });

  it('answers 410 on the removed search endpoint', async () => {
    const res = await fetch(`${fake.url}/rest/api/3/search?jql=project%3DENG`, { headers: headers() });
    expect(res.status).toBe(410);
  });
});

describe('resolveTrackerBIssue across sites', () => {
  let other: FakeTrackerB;

  beforeEach(async () => {
    other = await startFakeTrackerB({ projects: ['ENG'] });
    // Both sites have ENG-1; only the first has ENG-2.
    fake.seedIssue({ projectKey: 'ENG', summary: 'First site, one' });
    fake.seedIssue({ projectKey: 'ENG', summary: 'First site, two' });
    other.seedIssue({ projectKey: 'ENG', summary: 'Second site, one' });
  });

  afterEach(async () => {
    await other.close();
  });

  const adapters = (otherOptions: TrackerBOptions = {}) => [
    basicAdapter(),
    createTrackerBAdapter(
      { siteUrl: other.url, auth: { type: 'basic', email: other.email, apiToken: other.apiToken } },
      { timeoutMs: 2_000, ...otherOptions },
    ),
  ];

  it('finds a bare key held by one site on that site', async () => {
    const result = await resolveTrackerBIssue(keyRef('ENG-2'), adapters());
    expect(result).toMatchObject({ kind: 'ok', siteUrl: fake.url, value: { title: 'First site, two' } });
  });

  it('calls a bare key held by two sites ambiguous', async () => {
    const result = await resolveTrackerBIssue(keyRef('ENG-1'), adapters());
    expect(result).toMatchObject({ kind: 'ambiguous_key', siteUrls: [fake.url, other.url] });
  });

  it('says not found when no site holds the key', async () => {
    expect(await resolveTrackerBIssue(keyRef('ENG-9'), adapters())).toEqual({ kind: 'not_found' });
  });

  it('asks only the site of a full URL', async () => {
    const parsed = parseIssueRef('tracker_b', `${other.url}/browse/eng-1`, { sites: [fake.url, other.url] });
    if (parsed.kind !== 'ok' || parsed.ref.provider !== 'tracker_b')
      throw new Error('expected a parsed reference');
    const result = await resolveTrackerBIssue(parsed.ref, adapters());
    expect(result).toMatchObject({ kind: 'ok', siteUrl: other.url, value: { title: 'Second site, one' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('reports a URL of a site that is not connected', async () => {
    const result = await resolveTrackerBIssue(
      { provider: 'tracker_b', form: 'url', key: 'ENG-1', siteUrl: 'https://elsewhere.atlassian.net' },
      adapters(),
    );
    expect(result.kind).toBe('not_connected');
  });

  it('does not guess when a site cannot be asked', async () => {
    other.setBehaviour({ holdNext: 1 });
    const result = await resolveTrackerBIssue(keyRef('ENG-2'), adapters({ timeoutMs: 200 }));
    expect(result).toMatchObject({ kind: 'error', reason: 'unavailable', retryable: true });
    if (result.kind === 'error') expect(result.message).toContain('use the full issue URL');
  });
});
