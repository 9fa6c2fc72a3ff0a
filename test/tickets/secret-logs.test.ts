import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { createContainer, createLogger } from '../../src/container.ts';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../fakes/tracker-b-server.ts';
import { settleCredentials, type TestApp } from '../helpers/app.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';
import { buildCompany } from '../helpers/factories.ts';
import {
  buildTicketFinding,
  buildTicketKey,
  connectTrackerA,
  connectTrackerB,
} from '../helpers/ticket-factories.ts';

const logLines: string[] = [];
let t: TestApp;
let fakeA: FakeTrackerA;
let fakeB: FakeTrackerB;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-tickets-logs-'));
  const { config: database, drop } = await createTestDatabaseConfig();
  const config: Config = {
    ...loadConfig(
      {
        VIGIL_DATA_DIR: dataDir,
        VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'trace',
        VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32',
      },
      dataDir,
    ),
    database,
  };
  // The app's own logger, written to memory so that every line can be searched for secrets.
  const log = createLogger(config, { write: (line: string) => void logLines.push(line) });
  const container = await createContainer(config, { log });
  await container.queue.start({ supervise: false });
  const adminToken = `vgl_u_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40)}`;
  await container.services.admin.bootstrapAdmin({ token: adminToken });
  const app = await buildApp(container);
  await app.ready();
  cleanup = async () => {
    await app.close();
    await container.close();
    await drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  t = {
    app,
    container,
    config,
    adminToken,
    settleCredentials: () => settleCredentials(container),
    startWorker: async () => {},
    close: cleanup,
  };
  fakeA = await startFakeTrackerA({ apiKey: 'lin_api_SECRETkeyNeverLogged0001' });
  fakeB = await startFakeTrackerB({ apiToken: 'ATATT-SECRET-token-never-logged' });
});
afterAll(async () => {
  await cleanup();
  await fakeA.close();
  await fakeB.close();
});

describe('provider secrets in logs and responses', () => {
  it('never appear, through successful, refused and lost provider calls', async () => {
    const company = await buildCompany(t);
    const key = await buildTicketKey(t, company.id);
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

    const sent = await buildTicketFinding(t, company.id);
    expect((await post(`/api/scanner/v1/findings/${sent.id}/issue-trackers/tracker_a`)).statusCode).toBe(200);
    expect((await post(`/api/scanner/v1/findings/${sent.id}/issue-trackers/tracker_b`)).statusCode).toBe(200);

    const lost = await buildTicketFinding(t, company.id);
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
    const refused = await buildTicketFinding(t, company.id);
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
