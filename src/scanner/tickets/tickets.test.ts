import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../../../test/fakes/tracker-a-server.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../../../test/fakes/tracker-b-server.ts';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesServiceAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildCompany,
  buildScannerFinding,
  buildServiceKey,
  connectTrackerA,
  connectTrackerB,
} from '../../../test/helpers/factories.ts';
import { findingExports } from '../../db/schema/index.ts';
import { buildFindingLabel } from '../../integrations/trackers/ticket-content.ts';

let fakeA: FakeTrackerA;
let fakeB: FakeTrackerB;
let fakeB2: FakeTrackerB;

const t = sharedTestApp({
  env: { VIGIL_PUBLIC_URL: 'https://vigil.example.test', VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' },
});
beforeAll(async () => {
  fakeA = await startFakeTrackerA();
  fakeB = await startFakeTrackerB({ projects: ['ENG'] });
  fakeB2 = await startFakeTrackerB({ projects: ['ENG'] });
});
afterAll(async () => {
  await fakeA.close();
  await fakeB.close();
  await fakeB2.close();
});

/** A company with a finding and a key that may read and write findings. */
async function setup(options: { a?: boolean; b?: boolean } = {}) {
  const company = await buildCompany(t);
  const finding = await buildScannerFinding(t, { companyId: company.id });
  const key = (
    await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
  ).key;
  if (options.a) await connectTrackerA(t, company.id, fakeA);
  if (options.b) await connectTrackerB(t, company.id, fakeB);
  return { company, finding, key };
}

function link(key: string, findingId: string, payload: unknown) {
  return t.app.inject({
    method: 'POST',
    url: `/api/scanner/v1/findings/${findingId}/tickets`,
    headers: { 'x-api-key': key },
    payload: payload as object,
  });
}

function send(key: string, findingId: string, provider: string) {
  return t.app.inject({
    method: 'POST',
    url: `/api/scanner/v1/findings/${findingId}/issue-trackers/${provider}`,
    headers: { authorization: `Bearer ${key}` },
  });
}

function list(key: string, findingId: string) {
  return t.app.inject({
    method: 'GET',
    url: `/api/scanner/v1/findings/${findingId}/tickets`,
    headers: { 'x-api-key': key },
  });
}

function createsAt(fake: FakeTrackerB): number {
  return fake.requests.filter((r) => r.method === 'POST' && r.url === '/rest/api/3/issue').length;
}

describe('GET /api/scanner/v1/findings/{findingId}/tickets', () => {
  it('lists no tickets for a finding never linked or sent', async () => {
    const { finding, key } = await setup();
    const res = await list(key, finding.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ tickets: [] });
  });

  it('lists linked and created tickets of a published finding too', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id, published: true });
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    await connectTrackerA(t, company.id, fakeA);
    await connectTrackerB(t, company.id, fakeB);
    const seeded = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Existing' });
    expect((await link(key, finding.id, { provider: 'tracker_b', issueRef: seeded.key })).statusCode).toBe(
      200,
    );
    expect((await send(key, finding.id, 'tracker_a')).statusCode).toBe(200);
    const res = await list(key, finding.id);
    expect(res.statusCode).toBe(200);
    const tickets = res.json().tickets as Array<Record<string, unknown>>;
    expect(tickets.map((x) => [x.provider, x.source]).sort()).toEqual([
      ['tracker_a', 'created'],
      ['tracker_b', 'linked'],
    ]);
  });

  it('answers 404 for an unknown finding', async () => {
    const { key } = await setup();
    const res = await list(key, randomUUID());
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
  });

  itEnforcesServiceAuth(() => t, {
    method: 'GET',
    scope: 'findings:read',
    request: async (app, companyId) => {
      const finding = await buildScannerFinding(app, { companyId });
      return { url: `/api/scanner/v1/findings/${finding.id}/tickets` };
    },
  });
});

describe('POST /api/scanner/v1/findings/{findingId}/tickets', () => {
  it('links a tracker_b issue by key without changing anything at the provider, and again with linked:false', async () => {
    const { finding, key } = await setup({ b: true });
    const seeded = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Known bug', status: 'In Progress' });
    const before = fakeB.requests.length;
    const res = await link(key, finding.id, { provider: 'tracker_b', issueRef: seeded.key.toLowerCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      linked: true,
      ticket: {
        findingId: finding.id,
        provider: 'tracker_b',
        key: seeded.key,
        externalId: seeded.id,
        url: `${fakeB.url}/browse/${seeded.key}`,
        title: 'Known bug',
        status: 'In Progress',
        source: 'linked',
      },
    });
    const again = await link(key, finding.id, {
      provider: 'tracker_b',
      issueRef: `${fakeB.url}/browse/${seeded.key}`,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ linked: false, ticket: { id: res.json().ticket.id } });
    expect(fakeB.requests.slice(before).every((r) => r.method === 'GET')).toBe(true);
  });

  it('links tracker_a issues by identifier, by UUID and by URL of the connected workspace', async () => {
    for (const form of ['key', 'uuid', 'url'] as const) {
      const { finding, key } = await setup({ a: true });
      const issue = fakeA.seedIssue({ teamKey: 'ENG', title: `Seeded ${form}` });
      const issueRef = form === 'key' ? issue.identifier : form === 'uuid' ? issue.id : issue.url;
      const res = await link(key, finding.id, { provider: 'tracker_a', issueRef });
      expect(res.statusCode, form).toBe(200);
      expect(res.json().ticket).toMatchObject({
        key: issue.identifier,
        externalId: issue.id,
        source: 'linked',
      });
    }
  });

  it('refuses a URL of another workspace or site as not connected', async () => {
    const { finding, key } = await setup({ a: true, b: true });
    const a = await link(key, finding.id, {
      provider: 'tracker_a',
      issueRef: `${fakeA.appUrl}/other-workspace/issue/ENG-1/x`,
    });
    expect(a.statusCode).toBe(409);
    expect(a.json().code).toBe('INTEGRATION_NOT_CONNECTED');
    const b = await link(key, finding.id, {
      provider: 'tracker_b',
      issueRef: 'https://other.example.net/browse/ENG-1',
    });
    expect(b.statusCode).toBe(409);
    expect(b.json().code).toBe('INTEGRATION_NOT_CONNECTED');
  });

  it('answers 409 TICKET_ALREADY_LINKED for a different ticket', async () => {
    const { finding, key } = await setup({ b: true });
    const first = fakeB.seedIssue({ projectKey: 'ENG', summary: 'First' });
    const second = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Second' });
    expect((await link(key, finding.id, { provider: 'tracker_b', issueRef: first.key })).statusCode).toBe(
      200,
    );
    const res = await link(key, finding.id, { provider: 'tracker_b', issueRef: second.key });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'TICKET_ALREADY_LINKED', ticket: { key: first.key } });
  });

  it('answers 409 INTEGRATION_NOT_CONNECTED without an integration', async () => {
    const { finding, key } = await setup();
    const res = await link(key, finding.id, { provider: 'tracker_a', issueRef: 'ENG-1' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('INTEGRATION_NOT_CONNECTED');
  });

  it('answers 404 TICKET_NOT_FOUND for an issue the provider does not have', async () => {
    const { finding, key } = await setup({ a: true, b: true });
    const b = await link(key, finding.id, { provider: 'tracker_b', issueRef: 'ENG-9999' });
    expect(b.statusCode).toBe(404);
    expect(b.json().code).toBe('TICKET_NOT_FOUND');
    const a = await link(key, finding.id, { provider: 'tracker_a', issueRef: randomUUID() });
    expect(a.statusCode).toBe(404);
    expect(a.json().code).toBe('TICKET_NOT_FOUND');
  });

  it('answers 409 AMBIGUOUS_TICKET for a bare key on two sites, and links the full URL', async () => {
    const { company, finding, key } = await setup({ b: true });
    await connectTrackerB(t, company.id, fakeB2, { destination: null });
    const onFirst = fakeB.seedIssue({ projectKey: 'ENG', summary: 'On the first site' });
    let onSecond = fakeB2.seedIssue({ projectKey: 'ENG', summary: 'On the second site' });
    while (onSecond.key !== onFirst.key)
      onSecond = fakeB2.seedIssue({ projectKey: 'ENG', summary: 'Filler' });
    const res = await link(key, finding.id, { provider: 'tracker_b', issueRef: onFirst.key });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'AMBIGUOUS_TICKET' });
    expect(res.json().error).toMatch(/full issue URL/);
    const full = await link(key, finding.id, {
      provider: 'tracker_b',
      issueRef: `${fakeB2.url}/browse/${onSecond.key}`,
    });
    expect(full.statusCode).toBe(200);
    expect(full.json().ticket).toMatchObject({
      externalId: onSecond.id,
      url: `${fakeB2.url}/browse/${onSecond.key}`,
    });
  });

  it('answers 409 EXPORT_IN_PROGRESS while an export runs', async () => {
    const { company, finding, key } = await setup({ b: true });
    await t.container.database.db.insert(findingExports).values({
      companyId: company.id,
      findingId: finding.id,
      provider: 'tracker_b',
      state: 'in_progress',
      clientRef: { clientId: randomUUID(), label: buildFindingLabel(finding.id) },
      attempts: 1,
      leaseUntil: new Date(Date.now() + 60_000),
    });
    const seeded = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Existing' });
    const res = await link(key, finding.id, { provider: 'tracker_b', issueRef: seeded.key });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('EXPORT_IN_PROGRESS');
  });

  it('rejects other body fields, an empty and an overlong issueRef, and an unknown provider', async () => {
    const { finding, key } = await setup({ b: true });
    for (const payload of [
      { provider: 'tracker_b', issueRef: 'ENG-1', extra: true },
      { provider: 'tracker_b', issueRef: '' },
      { provider: 'tracker_b', issueRef: `https://x.example/${'a'.repeat(2048)}` },
      { provider: 'tracker_c', issueRef: 'ENG-1' },
    ]) {
      const res = await link(key, finding.id, payload);
      expect(res.statusCode).toBe(400);
      expect(typeof res.json().code).toBe('string');
    }
    const bad = await link(key, finding.id, { provider: 'tracker_b', issueRef: 'not a key' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_ISSUE_REF');
  });

  it('answers 403 for a key with default scopes (findings:write is never implied)', async () => {
    const { company, finding } = await setup({ b: true });
    const defaults = await buildServiceKey(t, { companyId: company.id });
    const res = await link(defaults.key, finding.id, { provider: 'tracker_b', issueRef: 'ENG-1' });
    expect(res.statusCode).toBe(403);
    const reader = await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read'] });
    expect((await send(reader.key, finding.id, 'tracker_b')).statusCode).toBe(403);
    expect((await send(defaults.key, finding.id, 'tracker_b')).statusCode).toBe(403);
  });

  itEnforcesServiceAuth(() => t, {
    method: 'POST',
    scope: 'findings:write',
    request: async (app, companyId) => {
      const finding = await buildScannerFinding(app, { companyId });
      await connectTrackerB(app, companyId, fakeB);
      const issue = fakeB.seedIssue({ projectKey: 'ENG', summary: 'For auth' });
      return {
        url: `/api/scanner/v1/findings/${finding.id}/tickets`,
        payload: { provider: 'tracker_b', issueRef: issue.key },
      };
    },
  });
});

describe('POST /api/scanner/v1/findings/{findingId}/issue-trackers/{provider}', () => {
  it('creates a tracker_a issue with the finding content and a link back, once', async () => {
    const { finding, key } = await setup({ a: true });
    const before = fakeA.issues.count();
    const res = await send(key, finding.id, 'tracker_a');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      created: true,
      export: {
        findingId: finding.id,
        provider: 'tracker_a',
        state: 'created',
        ticket: { source: 'created' },
      },
    });
    expect(fakeA.issues.count()).toBe(before + 1);
    const issue = fakeA.issues.list().at(-1)!;
    expect(issue.title).toBe(`[High] ${finding.title}`);
    expect(issue.description).toContain('sends ether **before** updating the balance');
    expect(issue.description).toContain('contracts/Vault.sol:42-57');
    expect(issue.description).toContain('CWE-841');
    expect(issue.description).toContain(`https://vigil.example.test/findings/${finding.id}`);
    expect(body.export.ticket).toMatchObject({ key: issue.identifier, externalId: issue.id, url: issue.url });

    const again = await send(key, finding.id, 'tracker_a');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ created: false, export: body.export });
    expect(fakeA.issues.count()).toBe(before + 1);
  });

  it('creates a tracker_b issue with an Atlassian Document and the finding label, over Bearer too', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id, severity: 'critical' });
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    await connectTrackerB(t, company.id, fakeB, { auth: 'bearer' });
    const before = fakeB.issues.count();
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(200);
    expect(fakeB.issues.count()).toBe(before + 1);
    const issue = fakeB.issues.list().at(-1)!;
    expect(issue.summary).toBe(`[Critical] ${finding.title}`);
    expect(issue.labels).toEqual(['security', buildFindingLabel(finding.id)]);
    expect(JSON.stringify(issue.description)).toContain(`https://vigil.example.test/findings/${finding.id}`);
    expect(res.json().export.ticket).toMatchObject({
      key: issue.key,
      url: `${fakeB.url}/browse/${issue.key}`,
    });
  });

  it('counts a linked ticket as sent: created:false, nothing created', async () => {
    const { finding, key } = await setup({ b: true });
    const seeded = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Linked' });
    expect((await link(key, finding.id, { provider: 'tracker_b', issueRef: seeded.key })).statusCode).toBe(
      200,
    );
    const creates = createsAt(fakeB);
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      created: false,
      export: { state: 'created', ticket: { externalId: seeded.id, source: 'linked' } },
    });
    expect(createsAt(fakeB)).toBe(creates);
  });

  it('answers 409 INTEGRATION_NOT_CONNECTED and DESTINATION_NOT_CONFIGURED', async () => {
    const { company, finding, key } = await setup();
    const none = await send(key, finding.id, 'tracker_b');
    expect(none.statusCode).toBe(409);
    expect(none.json().code).toBe('INTEGRATION_NOT_CONNECTED');
    await connectTrackerA(t, company.id, fakeA, { destination: null });
    const noDestination = await send(key, finding.id, 'tracker_a');
    expect(noDestination.statusCode).toBe(409);
    expect(noDestination.json().code).toBe('DESTINATION_NOT_CONFIGURED');
  });

  it('asks which tracker_b site when several have a destination, and uses the default one', async () => {
    const { company, finding, key } = await setup({ b: true });
    await connectTrackerB(t, company.id, fakeB2);
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'DESTINATION_NOT_CONFIGURED' });
    expect(res.json().sites).toHaveLength(2);
    await connectTrackerB(t, company.id, fakeB2, { isDefault: true });
    const before = fakeB2.issues.count();
    const ok = await send(key, finding.id, 'tracker_b');
    expect(ok.statusCode).toBe(200);
    expect(fakeB2.issues.count()).toBe(before + 1);
    expect(ok.json().export.ticket.url).toContain(fakeB2.url);
  });

  it('marks a definitive refusal failed (502) and creates on a later send after the fix', async () => {
    const { company, finding, key } = await setup();
    await connectTrackerB(t, company.id, fakeB, { destination: { projectKey: 'NOPE' } });
    const creates = fakeB.issues.count();
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'PROVIDER_ERROR', export: { state: 'failed' } });
    expect(res.json().export.error.message).toMatch(/project/);
    await connectTrackerB(t, company.id, fakeB);
    const retry = await send(key, finding.id, 'tracker_b');
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toMatchObject({
      created: true,
      export: { id: res.json().export.id, state: 'created' },
    });
    expect(retry.json().export.error).toBeUndefined();
    expect(fakeB.issues.count()).toBe(creates + 1);
  });

  it('lets a failed export be settled by a link: the next send answers created:false', async () => {
    const { company, finding, key } = await setup();
    await connectTrackerB(t, company.id, fakeB, { destination: { projectKey: 'NOPE' } });
    expect((await send(key, finding.id, 'tracker_b')).statusCode).toBe(502);
    const seeded = fakeB.seedIssue({ projectKey: 'ENG', summary: 'Filed by hand' });
    expect((await link(key, finding.id, { provider: 'tracker_b', issueRef: seeded.key })).json().linked).toBe(
      true,
    );
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      created: false,
      export: { state: 'created', ticket: { externalId: seeded.id, source: 'linked' } },
    });
    expect(res.json().export.error).toBeUndefined();
  });

  it('marks a reset during create unknown (502) and links the issue on the next send', async () => {
    for (const [provider, fake] of [
      ['tracker_a', fakeA],
      ['tracker_b', fakeB],
    ] as const) {
      const { finding, key } = await setup({ a: true, b: true });
      const before = fake.issues.count();
      fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy' });
      const res = await send(key, finding.id, provider);
      expect(res.statusCode, provider).toBe(502);
      expect(res.json()).toMatchObject({
        code: 'PROVIDER_ERROR',
        ambiguous: true,
        export: { state: 'unknown' },
      });
      expect(fake.issues.count()).toBe(before + 1);
      const linked = await link(key, finding.id, { provider, issueRef: 'ENG-1' });
      expect(linked.statusCode).toBe(409);
      expect(linked.json().code).toBe('EXPORT_IN_PROGRESS');
      const retry = await send(key, finding.id, provider);
      expect(retry.statusCode, provider).toBe(200);
      expect(retry.json()).toMatchObject({
        created: true,
        export: { state: 'created', ticket: { source: 'created' } },
      });
      expect(fake.issues.count()).toBe(before + 1);
      expect((await send(key, finding.id, provider)).json().created).toBe(false);
    }
  });

  it('answers 409 EXPORT_IN_PROGRESS while another send holds a live lease', async () => {
    const { company, finding, key } = await setup({ a: true });
    await t.container.database.db.insert(findingExports).values({
      companyId: company.id,
      findingId: finding.id,
      provider: 'tracker_a',
      state: 'in_progress',
      clientRef: { clientId: randomUUID(), label: buildFindingLabel(finding.id) },
      attempts: 1,
      leaseUntil: new Date(Date.now() + 60_000),
    });
    const res = await send(key, finding.id, 'tracker_a');
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('EXPORT_IN_PROGRESS');
  });

  it('never returns the provider credential, even when the provider echoes it', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    const fake = await startFakeTrackerB({ apiToken: 'ATATT-secret-token-never-shown' });
    try {
      fake.setBehaviour({ echoCredentials: true });
      await t.app.inject({
        method: 'PUT',
        url: `/api/v0/companies/${company.id}/integrations/tracker_b`,
        headers: { authorization: `Bearer ${t.adminToken}` },
        payload: {
          site: fake.url,
          credentials: { email: fake.email, apiToken: 'ATATT-wrong-secret-echoed' },
          settings: { destination: { projectKey: 'ENG' } },
        },
      });
      const res = await send(key, finding.id, 'tracker_b');
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 'PROVIDER_ERROR', reason: 'auth' });
      const basic = Buffer.from(`${fake.email}:ATATT-wrong-secret-echoed`).toString('base64');
      expect(res.body).not.toContain('ATATT-wrong-secret-echoed');
      expect(res.body).not.toContain(basic);
      const rows = await t.container.database.db
        .select()
        .from(findingExports)
        .where(and(eq(findingExports.findingId, finding.id), eq(findingExports.provider, 'tracker_b')));
      expect(JSON.stringify(rows)).not.toContain(basic);
    } finally {
      await fake.close();
    }
  });

  itEnforcesServiceAuth(() => t, {
    method: 'POST',
    scope: 'findings:write',
    request: async (app, companyId) => {
      const finding = await buildScannerFinding(app, { companyId });
      await connectTrackerA(app, companyId, fakeA);
      return { url: `/api/scanner/v1/findings/${finding.id}/issue-trackers/tracker_a` };
    },
  });
});
