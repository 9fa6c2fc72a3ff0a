import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findingExports } from '../../src/db/schema/index.ts';
import { buildFindingLabel } from '../../src/integrations/trackers/ticket-content.ts';
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

function send(key: string, findingId: string, provider: 'tracker_a' | 'tracker_b') {
  return t.app.inject({
    method: 'POST',
    url: `/api/scanner/v1/findings/${findingId}/issue-trackers/${provider}`,
    headers: { 'x-api-key': key },
  });
}

async function readExport(findingId: string, provider: 'tracker_a' | 'tracker_b') {
  const [row] = await t.container.database.db
    .select({ row: findingExports, leaseExpired: sql<boolean>`${findingExports.leaseUntil} <= now()` })
    .from(findingExports)
    .where(and(eq(findingExports.findingId, findingId), eq(findingExports.provider, provider)));
  return row;
}

describe('a process that died between the provider call and the write (simulated)', () => {
  it('tracker_a: an in_progress export with an expired lease is reconciled by the id we chose', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    await connectTrackerA(t, company.id, fakeA);
    const clientId = randomUUID();
    const issue = fakeA.seedIssue({ teamKey: 'ENG', title: `[High] ${finding.title}`, id: clientId });
    await t.container.database.db.insert(findingExports).values({
      companyId: company.id,
      findingId: finding.id,
      provider: 'tracker_a',
      state: 'in_progress',
      clientRef: { clientId, label: buildFindingLabel(finding.id) },
      attempts: 1,
      leaseUntil: sql`now() - interval '1 second'`,
    });
    const before = fakeA.issues.count();
    const res = await send(key, finding.id, 'tracker_a');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      created: true,
      export: { state: 'created', ticket: { externalId: issue.id } },
    });
    expect(fakeA.issues.count()).toBe(before);
  });

  it('tracker_b: an in_progress export with an expired lease is reconciled by the label; a live one answers 409', async () => {
    const company = await buildCompany(t);
    const finding = await buildScannerFinding(t, { companyId: company.id });
    const key = (
      await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
    ).key;
    await connectTrackerB(t, company.id, fakeB);
    const issue = fakeB.seedIssue({
      projectKey: 'ENG',
      summary: 'Made before the crash',
      labels: ['security', buildFindingLabel(finding.id)],
    });
    const [row] = await t.container.database.db
      .insert(findingExports)
      .values({
        companyId: company.id,
        findingId: finding.id,
        provider: 'tracker_b',
        state: 'in_progress',
        clientRef: { clientId: randomUUID(), label: buildFindingLabel(finding.id) },
        attempts: 1,
        leaseUntil: sql`now() + interval '1 hour'`,
      })
      .returning();
    const live = await send(key, finding.id, 'tracker_b');
    expect(live.statusCode).toBe(409);
    expect(live.json().code).toBe('EXPORT_IN_PROGRESS');
    await t.container.database.db
      .update(findingExports)
      .set({ leaseUntil: sql`now() - interval '1 second'` })
      .where(eq(findingExports.id, row!.id));
    const before = fakeB.issues.count();
    const res = await send(key, finding.id, 'tracker_b');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      created: true,
      export: { id: row!.id, ticket: { externalId: issue.id } },
    });
    expect(fakeB.issues.count()).toBe(before);
  });
});

describe('a send process killed after the provider stored the issue (PostgreSQL)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  });

  for (const provider of ['tracker_a', 'tracker_b'] as const) {
    it(`${provider}: the next send finds and links the issue, still one`, async () => {
      const company = await buildCompany(t);
      const finding = await buildScannerFinding(t, { companyId: company.id });
      const key = (
        await buildServiceKey(t, { companyId: company.id, scopes: ['findings:read', 'findings:write'] })
      ).key;
      const fake = provider === 'tracker_a' ? fakeA : fakeB;
      if (provider === 'tracker_a') await connectTrackerA(t, company.id, fakeA);
      else await connectTrackerB(t, company.id, fakeB);
      const before = fake.issues.count();
      // The fake stores the issue and never answers: the child is inside the provider call.
      fake.setBehaviour({ loseCreateResponses: 1, lostResponseMode: 'hold' });
      const database = t.config.database;
      if (database.kind !== 'postgres') throw new Error('expected PostgreSQL');
      const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'send-in-child.ts');
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        env: {
          ...process.env,
          TICKETS_DATABASE_URL: database.url,
          TICKETS_SECRET_KEY: t.config.secretKey!.toString('hex'),
          TICKETS_COMPANY_ID: company.id,
          TICKETS_FINDING_ID: finding.id,
          TICKETS_PROVIDER: provider,
          TICKETS_LEASE_SECONDS: '2',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );

      await vi.waitFor(() => expect(fake.issues.count()).toBe(before + 1), { timeout: 20_000, interval: 20 });
      expect((await readExport(finding.id, provider))?.row.state).toBe('in_progress');
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const whileLeased = await send(key, finding.id, provider);
      expect(whileLeased.statusCode).toBe(409);
      expect(whileLeased.json().code).toBe('EXPORT_IN_PROGRESS');
      await vi.waitFor(
        async () => expect((await readExport(finding.id, provider))?.leaseExpired).toBe(true),
        {
          timeout: 10_000,
          interval: 100,
        },
      );

      const res = await send(key, finding.id, provider);
      expect(res.statusCode).toBe(200);
      const issue = fake.issues.list().at(-1)!;
      expect(res.json()).toMatchObject({
        created: true,
        export: { state: 'created', ticket: { externalId: issue.id } },
      });
      expect(fake.issues.count()).toBe(before + 1);
      expect((await send(key, finding.id, provider)).json().created).toBe(false);
      expect(fake.issues.count()).toBe(before + 1);
    });
  }
});
