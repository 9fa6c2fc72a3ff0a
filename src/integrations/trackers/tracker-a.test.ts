import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../../../test/fakes/tracker-a-server.ts';
import { parseIssueRef } from './issue-ref.ts';
import type { TicketFindingContent, TrackerADestination, TrackerAIssueRef } from './tracker.types.ts';
import { createTrackerAAdapter } from './tracker-a.ts';
import type { TrackerHttpOptions } from './tracker-http.ts';

function buildFinding(overrides: Partial<TicketFindingContent> = {}): TicketFindingContent {
  return {
    id: randomUUID(),
    title: 'Reentrancy in Vault.withdraw',
    description: 'The `withdraw` function sends ether before updating the balance.',
    severity: 'HIGH',
    location: { file: 'contracts/Vault.sol', startLine: 42, endLine: 57 },
    identifiers: [{ type: 'swc', name: 'SWC-107', value: '107' }],
    url: 'https://vigil.example.test/findings/1',
    ...overrides,
  };
}

function recordSleeps(): { sleeps: number[]; sleep: (ms: number) => Promise<void> } {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms) => void sleeps.push(ms) };
}

function keyRef(lookup: string): TrackerAIssueRef {
  return { provider: 'tracker_a', form: 'key', lookup };
}

let fake: FakeTrackerA;

function keyAdapter(options: TrackerHttpOptions = {}, apiKey = fake.apiKey) {
  return createTrackerAAdapter(
    { apiUrl: fake.url, auth: { type: 'api_key', apiKey } },
    { timeoutMs: 2_000, ...options },
  );
}

function destination(): TrackerADestination {
  return { provider: 'tracker_a', teamId: fake.teams[0]!.id };
}

beforeEach(async () => {
  fake = await startFakeTrackerA({ urlKey: 'acme' });
});

afterEach(async () => {
  await fake.close();
});

describe('tracker_a verifyIssue', () => {
  it('finds an issue by identifier with a raw API key', async () => {
    const seeded = fake.seedIssue({ teamKey: 'ENG', title: 'Existing bug', state: 'In Progress' });
    const outcome = await keyAdapter().verifyIssue(keyRef('ENG-1'));
    expect(outcome).toEqual({
      kind: 'ok',
      value: {
        externalId: seeded.id,
        key: 'ENG-1',
        url: seeded.url,
        title: 'Existing bug',
        status: 'In Progress',
      },
    });
    expect(fake.requests[0]?.authorization).toBe(fake.apiKey);
  });

  it('finds an issue by UUID', async () => {
    const seeded = fake.seedIssue({ teamKey: 'ENG', title: 'Existing bug' });
    const parsed = parseIssueRef('tracker_a', seeded.id.toUpperCase());
    if (parsed.kind !== 'ok') throw new Error('expected a parsed reference');
    expect(await keyAdapter().verifyIssue(parsed.ref)).toMatchObject({
      kind: 'ok',
      value: { externalId: seeded.id },
    });
  });

  it('finds an issue from its URL in the connected workspace, case-insensitively', async () => {
    fake.seedIssue({ teamKey: 'ENG', title: 'Existing bug' });
    const urlKey = await keyAdapter().fetchWorkspaceUrlKey();
    expect(urlKey).toEqual({ kind: 'ok', value: 'acme' });
    const parsed = parseIssueRef('tracker_a', 'https://linear.app/acme/issue/eng-1/existing-bug', {
      workspaceUrlKey: urlKey.kind === 'ok' ? urlKey.value : null,
    });
    if (parsed.kind !== 'ok') throw new Error('expected a parsed reference');
    expect(await keyAdapter().verifyIssue(parsed.ref)).toMatchObject({ kind: 'ok', value: { key: 'ENG-1' } });
  });

  it('follows an issue that moved team and reports its new identifier', async () => {
    const seeded = fake.seedIssue({ teamKey: 'ENG', title: 'Moved bug' });
    fake.moveIssue('ENG-1', 'SEC');
    expect(await keyAdapter().verifyIssue(keyRef('ENG-1'))).toMatchObject({
      kind: 'ok',
      value: { externalId: seeded.id, key: 'SEC-1' },
    });
  });

  it('reads "Entity not found" as not found', async () => {
    expect(await keyAdapter().verifyIssue(keyRef('ENG-404'))).toEqual({ kind: 'not_found' });
    expect(fake.requests[0]?.status).toBe(400);
  });

  it('uses Bearer for an OAuth token', async () => {
    fake.seedIssue({ teamKey: 'ENG', title: 'Existing bug' });
    const adapter = createTrackerAAdapter({
      apiUrl: fake.url,
      auth: { type: 'oauth', accessToken: fake.oauthToken },
    });
    expect((await adapter.verifyIssue(keyRef('ENG-1'))).kind).toBe('ok');
    expect(fake.requests[0]?.authorization).toBe(`Bearer ${fake.oauthToken}`);
  });

  it('reports a refused key as an auth error, whatever the HTTP status', async () => {
    const refused = await keyAdapter({}, 'lin_api_revoked').verifyIssue(keyRef('ENG-1'));
    expect(refused).toMatchObject({ kind: 'error', reason: 'auth', status: 401, retryable: false });
    fake.setBehaviour({ authErrorStatus: 400 });
    const refusedAs400 = await keyAdapter({}, 'lin_api_revoked').verifyIssue(keyRef('ENG-1'));
    expect(refusedAs400).toMatchObject({ kind: 'error', reason: 'auth', status: 400 });
  });

  it('reports a personal key sent as Bearer as an auth error', async () => {
    const adapter = createTrackerAAdapter({
      apiUrl: fake.url,
      auth: { type: 'oauth', accessToken: fake.apiKey },
    });
    expect(await adapter.verifyIssue(keyRef('ENG-1'))).toMatchObject({ kind: 'error', reason: 'auth' });
  });

  it('never puts the key in an error message, even when the provider echoes it', async () => {
    fake.setBehaviour({ echoCredentials: true });
    const secret = 'lin_api_very_secret_value_123';
    const outcome = await keyAdapter({}, secret).verifyIssue(keyRef('ENG-1'));
    const text = JSON.stringify(outcome);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(secret);
  });

  it('gives a retryable error when the provider does not answer in time', async () => {
    fake.setBehaviour({ holdNext: 1 });
    const outcome = await keyAdapter({ timeoutMs: 200 }).verifyIssue(keyRef('ENG-1'));
    expect(outcome).toEqual({
      kind: 'error',
      reason: 'unavailable',
      retryable: true,
      message: 'tracker_a did not answer the request to read the issue: no answer within 200 ms',
    });
  });
});

describe('tracker_a createIssue', () => {
  it('creates the issue with our id, the severity title, Markdown and a priority from the severity', async () => {
    const clientId = randomUUID();
    const finding = buildFinding();
    const outcome = await keyAdapter().createIssue({ clientId, finding, destination: destination() });
    expect(outcome).toMatchObject({
      kind: 'ok',
      value: { externalId: clientId, key: 'ENG-1', title: '[High] Reentrancy in Vault.withdraw' },
    });
    const [stored] = fake.issues.list();
    expect(stored?.id).toBe(clientId);
    expect(stored?.priority).toBe(2);
    expect(stored?.description).toContain('`contracts/Vault.sol:42-57`');
    expect(stored?.description).toContain('SWC-107');
    expect(stored?.description).toContain(`(${finding.url})`);
  });

  it('honours retry-after on RATELIMITED (HTTP 400) and then creates one issue', async () => {
    fake.setBehaviour({ rateLimitNext: 1, retryAfter: '1' });
    const { sleeps, sleep } = recordSleeps();
    const outcome = await keyAdapter({ sleep }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ok');
    expect(sleeps).toEqual([1000]);
    expect(fake.requests.map((r) => r.status)).toEqual([400, 200]);
    expect(fake.issues.count()).toBe(1);
  });

  it('backs off on RATELIMITED without retry-after', async () => {
    fake.setBehaviour({ rateLimitNext: 2, retryAfter: null });
    const { sleeps, sleep } = recordSleeps();
    const outcome = await keyAdapter({ sleep, random: () => 0, backoffBaseMs: 200 }).createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ok');
    expect(sleeps).toEqual([100, 200]);
  });

  it('reports a create whose answer never arrives as ambiguous; findCreated and a repeated create find it', async () => {
    fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'hold' });
    const clientId = randomUUID();
    const finding = buildFinding();
    const adapter = keyAdapter({ timeoutMs: 200 });
    expect((await adapter.createIssue({ clientId, finding, destination: destination() })).kind).toBe(
      'ambiguous',
    );
    expect(fake.issues.count()).toBe(1);

    const found = await adapter.findCreated({ clientId, findingId: finding.id, destination: destination() });
    expect(found).toMatchObject({ kind: 'ok', value: { externalId: clientId, key: 'ENG-1' } });

    // Creating again with the same id meets the conflict and returns the existing issue.
    const again = await adapter.createIssue({ clientId, finding, destination: destination() });
    expect(again).toMatchObject({ kind: 'ok', value: { externalId: clientId, key: 'ENG-1' } });
    expect(fake.issues.count()).toBe(1);
  });

  it('reports a reset connection during create as ambiguous', async () => {
    fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy' });
    const outcome = await keyAdapter().createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toEqual({
      kind: 'ambiguous',
      message: expect.stringMatching(/^tracker_a did not answer the create \(.+\); the issue may exist$/),
    });
  });

  it('reports an internal server error during create as ambiguous', async () => {
    fake.setBehaviour({ failCreatesAfterStore: 1 });
    const clientId = randomUUID();
    const outcome = await keyAdapter().createIssue({
      clientId,
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome.kind).toBe('ambiguous');
    const found = await keyAdapter().findCreated({
      clientId,
      findingId: randomUUID(),
      destination: destination(),
    });
    expect(found).toMatchObject({ kind: 'ok', value: { externalId: clientId } });
  });

  it('treats success:false as a definitive error and findCreated then finds nothing', async () => {
    fake.setBehaviour({ createSuccessFalseNext: 1 });
    const clientId = randomUUID();
    const outcome = await keyAdapter().createIssue({
      clientId,
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'rejected', retryable: false });
    expect(fake.issues.count()).toBe(0);
    expect(
      await keyAdapter().findCreated({ clientId, findingId: randomUUID(), destination: destination() }),
    ).toEqual({ kind: 'not_found' });
  });

  it('returns a definitive error for an unknown team', async () => {
    const outcome = await keyAdapter().createIssue({
      clientId: randomUUID(),
      finding: buildFinding(),
      destination: { provider: 'tracker_a', teamId: randomUUID() },
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'rejected', retryable: false });
    expect(fake.issues.count()).toBe(0);
  });

  it('returns a definitive error for an invalid field', async () => {
    const outcome = await keyAdapter().createIssue({
      clientId: 'not-a-uuid',
      finding: buildFinding(),
      destination: destination(),
    });
    expect(outcome).toMatchObject({ kind: 'error', reason: 'rejected' });
    if (outcome.kind === 'error') expect(outcome.message).toContain('Argument Validation Error');
  });
});
