import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../fakes/tracker-b-server.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import {
  buildCompany,
  buildScannerFinding,
  buildServiceKey,
  connectTrackerA,
  connectTrackerB,
} from '../helpers/factories.ts';

let second: TestApp;
let fakeA: FakeTrackerA;
let fakeB: FakeTrackerB;

const first = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
beforeAll(async () => {
  // A second app instance on the same database: on PostgreSQL its own pool, like another replica.
  second = await createTestApp({ shareDatabaseWith: first, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  fakeA = await startFakeTrackerA();
  fakeB = await startFakeTrackerB({ projects: ['ENG'] });
});
afterAll(async () => {
  await second.close();
  await fakeA.close();
  await fakeB.close();
});

describe('20 concurrent sends of one finding over two app instances', () => {
  for (const provider of ['tracker_a', 'tracker_b'] as const) {
    it(`create exactly one ${provider} ticket`, async () => {
      const company = await buildCompany(first);
      const finding = await buildScannerFinding(first, { companyId: company.id });
      const key = (
        await buildServiceKey(first, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
      ).key;
      if (provider === 'tracker_a') await connectTrackerA(first, company.id, fakeA);
      else await connectTrackerB(first, company.id, fakeB);
      const fake = provider === 'tracker_a' ? fakeA : fakeB;
      const before = fake.issues.count();

      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? first : second).app.inject({
            method: 'POST',
            url: `/api/scanner/v1/findings/${finding.id}/issue-trackers/${provider}`,
            headers: { 'x-api-key': key },
          }),
        ),
      );

      expect(fake.issues.count()).toBe(before + 1);
      const outcomes = responses.map((r) => `${r.statusCode} ${r.json().code ?? r.json().created}`);
      expect(outcomes.filter((o) => o === '200 true')).toHaveLength(1);
      expect(outcomes.every((o) => ['200 true', '200 false', '409 EXPORT_IN_PROGRESS'].includes(o))).toBe(
        true,
      );
      const created = responses.find((r) => r.statusCode === 200 && r.json().created === true)!.json();
      for (const r of responses.filter((x) => x.statusCode === 200)) {
        expect(r.json().export.ticket.externalId).toBe(created.export.ticket.externalId);
      }

      const after = await second.app.inject({
        method: 'POST',
        url: `/api/scanner/v1/findings/${finding.id}/issue-trackers/${provider}`,
        headers: { 'x-api-key': key },
      });
      expect(after.json()).toMatchObject({
        created: false,
        export: { id: created.export.id, state: 'created' },
      });
      const tickets = await first.app.inject({
        method: 'GET',
        url: `/api/scanner/v1/findings/${finding.id}/tickets`,
        headers: { 'x-api-key': key },
      });
      expect(tickets.json().tickets).toHaveLength(1);
      expect(fake.issues.count()).toBe(before + 1);
    });
  }
});
