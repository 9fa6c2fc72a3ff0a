import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingExports } from '../../src/db/schema/index.ts';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../fakes/tracker-b-server.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany, buildScannerFinding, connectTrackerA, connectTrackerB } from '../helpers/factories.ts';
import { buildTicketsService, serviceActor, settle } from './ticket-service.ts';

let fakeA: FakeTrackerA;
let fakeB: FakeTrackerB;

const t = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
beforeAll(async () => {
  fakeA = await startFakeTrackerA();
  fakeB = await startFakeTrackerB({ projects: ['ENG'] });
});
afterAll(async () => {
  await fakeA.close();
  await fakeB.close();
});

async function readExport(findingId: string, provider: 'tracker_a' | 'tracker_b') {
  const [row] = await t.container.database.db
    .select()
    .from(findingExports)
    .where(and(eq(findingExports.findingId, findingId), eq(findingExports.provider, provider)));
  return row!;
}

describe('a send whose create answer never arrives', () => {
  it('tracker_b with a lagging search index: the first send times out, 5 retries leave exactly one ticket', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    await connectTrackerB(t, company.id, fakeB);
    const service = buildTicketsService(t);
    const actor = serviceActor(company.id);
    const before = fakeB.issues.count();
    // The issue is stored, the answer is held until the client's 300 ms timeout, and the search
    // index shows the issue only 1.5 s later.
    fakeB.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'hold', indexDelayMs: 1_500 });

    const lost = await settle(service.sendFinding(actor, finding.id, 'tracker_b'));
    expect(lost).toMatchObject({ status: 502, code: 'PROVIDER_ERROR' });
    expect(fakeB.issues.count()).toBe(before + 1);
    expect((await readExport(finding.id, 'tracker_b')).state).toBe('unknown');

    const retries = [];
    for (let i = 0; i < 5; i++)
      retries.push(await settle(service.sendFinding(actor, finding.id, 'tracker_b')));
    fakeB.setBehaviour({ indexDelayMs: 0 });

    expect(retries.map((r) => [r.status, r.value?.created])).toEqual([
      [200, true],
      [200, false],
      [200, false],
      [200, false],
      [200, false],
    ]);
    expect(fakeB.issues.count()).toBe(before + 1);
    const issue = fakeB.issues.list().at(-1)!;
    expect(retries[0]?.value?.export.ticket).toMatchObject({
      externalId: issue.id,
      key: issue.key,
      source: 'created',
    });
    // The retry searched (several times, the index lagging) and never posted a second create.
    const creates = fakeB.requests.filter((r) => r.method === 'POST' && r.url === '/rest/api/3/issue');
    expect(creates.filter((r) => JSON.stringify(r.body).includes(finding.id))).toHaveLength(1);
  });

  it('tracker_a: the first send times out, 5 retries find the issue by the id we chose', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    await connectTrackerA(t, company.id, fakeA);
    const service = buildTicketsService(t);
    const actor = serviceActor(company.id);
    const before = fakeA.issues.count();
    fakeA.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'hold' });

    expect(await settle(service.sendFinding(actor, finding.id, 'tracker_a'))).toMatchObject({ status: 502 });
    const exported = await readExport(finding.id, 'tracker_a');
    expect(exported.state).toBe('unknown');
    expect(fakeA.issues.list().at(-1)!.id).toBe(exported.clientRef.clientId);

    const retries = [];
    for (let i = 0; i < 5; i++)
      retries.push(await settle(service.sendFinding(actor, finding.id, 'tracker_a')));
    expect(retries.map((r) => r.value?.created)).toEqual([true, false, false, false, false]);
    expect(fakeA.issues.count()).toBe(before + 1);
    expect(retries[0]?.value?.export.ticket?.externalId).toBe(exported.clientRef.clientId);
  });

  it('creates again, with the same client id, only once reconciliation says the issue is not there', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    await connectTrackerA(t, company.id, fakeA);
    const service = buildTicketsService(t);
    const clientId = randomUUID();
    await t.container.database.db.insert(findingExports).values({
      companyId: company.id,
      findingId: finding.id,
      provider: 'tracker_a',
      state: 'unknown',
      clientRef: { clientId, label: 'unused' },
      attempts: 1,
    });
    const before = fakeA.issues.count();
    const result = await service.sendFinding(serviceActor(company.id), finding.id, 'tracker_a');
    expect(result).toMatchObject({
      created: true,
      export: { state: 'created', ticket: { externalId: clientId } },
    });
    expect(fakeA.issues.count()).toBe(before + 1);
  });

  it('keeps the export unknown and creates nothing while the reconciling search fails', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    await connectTrackerB(t, company.id, fakeB);
    const service = buildTicketsService(t, {
      trackerOptions: { reconcileWindowMs: 300, maxRateLimitRetries: 0 },
    });
    const actor = serviceActor(company.id);
    fakeB.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy' });
    expect(await settle(service.sendFinding(actor, finding.id, 'tracker_b'))).toMatchObject({ status: 502 });
    const before = fakeB.issues.count();
    fakeB.setBehaviour({ holdNext: 10 });
    const retry = await settle(service.sendFinding(actor, finding.id, 'tracker_b'));
    fakeB.setBehaviour({ holdNext: 0 });
    expect(retry).toMatchObject({ status: 502, code: 'PROVIDER_ERROR' });
    expect((await readExport(finding.id, 'tracker_b')).state).toBe('unknown');
    expect(fakeB.issues.count()).toBe(before);
    const settled = await service.sendFinding(actor, finding.id, 'tracker_b');
    expect(settled.created).toBe(true);
    expect(fakeB.issues.count()).toBe(before);
  });
});
