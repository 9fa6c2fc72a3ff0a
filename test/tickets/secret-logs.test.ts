import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../fakes/tracker-b-server.ts';
import { sharedTestApp } from '../helpers/app.ts';
import {
  buildCompany,
  buildScannerFinding,
  buildServiceKey,
  connectTrackerA,
  connectTrackerB,
} from '../helpers/factories.ts';

const logLines: string[] = [];
let fakeA: FakeTrackerA;
let fakeB: FakeTrackerB;

// The app's own logger, written to memory so that every line can be searched for secrets.
const t = sharedTestApp({
  env: { LOG_LEVEL: 'trace', VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' },
  logTo: (line) => void logLines.push(line),
});
beforeAll(async () => {
  fakeA = await startFakeTrackerA({ apiKey: 'lin_api_SECRETkeyNeverLogged0001' });
  fakeB = await startFakeTrackerB({ apiToken: 'ATATT-SECRET-token-never-logged' });
});
afterAll(async () => {
  await fakeA.close();
  await fakeB.close();
});

describe('provider secrets in logs and responses', () => {
  it('never appear, through successful, refused and lost provider calls', async () => {
    const company = await buildCompany(t);
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    await connectTrackerA(t, company.id, fakeA);
    await connectTrackerB(t, company.id, fakeB);
    const bodies: string[] = [];
    const post = async (url: string, payload?: object) => {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': key },
        ...(payload ? { payload } : {}),
      });
      bodies.push(res.body);
      return res;
    };

    const sent = await buildScannerFinding(t, { companyId: company.id });
    expect((await post(`/api/scanner/v1/findings/${sent.id}/issue-trackers/tracker_a`)).statusCode).toBe(200);
    expect((await post(`/api/scanner/v1/findings/${sent.id}/issue-trackers/tracker_b`)).statusCode).toBe(200);

    const lost = await buildScannerFinding(t, { companyId: company.id });
    fakeB.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'destroy' });
    expect((await post(`/api/scanner/v1/findings/${lost.id}/issue-trackers/tracker_b`)).statusCode).toBe(502);
    expect((await post(`/api/scanner/v1/findings/${lost.id}/issue-trackers/tracker_b`)).statusCode).toBe(200);

    // Wrong credentials that the providers echo back in their error bodies.
    await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/tracker_a`,
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: {
        credentials: { apiKey: 'lin_api_WRONGsecretEchoedBack0002' },
        settings: { baseUrl: fakeA.url, destination: { teamId: fakeA.teams[0]!.id } },
      },
    });
    await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/tracker_b`,
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: {
        site: fakeB.url,
        credentials: { email: fakeB.email, apiToken: 'ATATT-WRONG-secret-echoed-back' },
        settings: { destination: { projectKey: 'ENG' } },
      },
    });
    fakeA.setBehaviour({ echoCredentials: true });
    fakeB.setBehaviour({ echoCredentials: true });
    const refused = await buildScannerFinding(t, { companyId: company.id });
    expect((await post(`/api/scanner/v1/findings/${refused.id}/issue-trackers/tracker_a`)).statusCode).toBe(
      502,
    );
    expect((await post(`/api/scanner/v1/findings/${refused.id}/issue-trackers/tracker_b`)).statusCode).toBe(
      502,
    );
    const linkRes = await post(`/api/scanner/v1/findings/${refused.id}/tickets`, {
      provider: 'tracker_b',
      issueRef: 'ENG-1',
    });
    expect(linkRes.statusCode).toBe(502);

    const secrets = [
      fakeA.apiKey,
      fakeB.apiToken,
      Buffer.from(`${fakeB.email}:${fakeB.apiToken}`).toString('base64'),
      'lin_api_WRONGsecretEchoedBack0002',
      'ATATT-WRONG-secret-echoed-back',
      Buffer.from(`${fakeB.email}:ATATT-WRONG-secret-echoed-back`).toString('base64'),
      key,
    ];
    const logs = logLines.join('');
    expect(logs).toContain('finding export failed');
    expect(logs).toContain('finding export unknown');
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      for (const body of bodies) expect(body).not.toContain(secret);
    }
  });
});
