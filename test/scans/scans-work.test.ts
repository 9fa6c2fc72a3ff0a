import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceActor } from '../../src/auth/actor.ts';
import { scans } from '../../src/db/schema/index.ts';
import { createCursorCodec } from '../../src/platform/pagination/cursor.ts';
import { createIdempotencyService } from '../../src/scanner/idempotency/idempotency.service.ts';
import { createEngineAdapter } from '../../src/scanner/scans/scans.engine-adapter.ts';
import { createScansService, type JobRunContext } from '../../src/scanner/scans/scans.service.ts';
import { openScanSources } from '../../src/scanner/sources/scan-sources.ts';
import { createScanWork } from '../../src/scanner/sources/scan-work.ts';
import { type FakeGitServer, startFakeGitServer } from '../fakes/git-server.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany, buildServiceKey, connectSourcehost, grantCredits } from '../helpers/factories.ts';
import { newIdempotencyKey, REENTRANT_BANK } from '../helpers/scan-helpers.ts';

// Each job run on its own scans service, as on two workers: nothing is shared in memory, so
// whatever the second job reads of the sources comes from the object store.
const t = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });

const log = pino({ level: 'silent' });
const context = (): JobRunContext => ({ signal: new AbortController().signal, finalAttempt: false, log });

/** Solidity files handed to the parser, by path, over every worker of this file. */
const parses = new Map<string, number>();
const onParse = (path: string) => parses.set(path, (parses.get(path) ?? 0) + 1);

/** A scans service of its own ("a worker"), over the shared database and object store. */
function worker() {
  const { database } = t.container;
  return createScansService({
    database,
    queue: () => t.container.queue,
    credits: t.container.services.credits,
    idempotency: createIdempotencyService({ database, ttlHours: 24 }),
    engine: createEngineAdapter({ onParse }),
    rulesUrl: 'http://localhost:3000/docs/rules',
    openSources: (input) =>
      openScanSources(
        {
          database,
          objectStore: t.container.objectStore,
          integrations: t.container.services.integrations,
          outbound: t.container.outbound,
          log,
        },
        input,
      ),
    scanWork: createScanWork(t.container.objectStore),
    log,
    cursors: createCursorCodec(t.config.secretKey!),
  });
}

let git: FakeGitServer;
beforeAll(async () => {
  git = await startFakeGitServer({ token: 'git-token' });
});
afterAll(async () => {
  await git.close();
});

const fetchesOf = (repository: string) =>
  git.requests.filter((r) => r.method === 'POST' && r.url === `/${repository}.git/git-upload-pack`).length;

async function sourcehostScan(
  repository: string,
  files: Record<string, string>,
  type: 'lite' | 'standard' | 'audit' = 'standard',
) {
  const { commit } = await git.createRepository(repository, files);
  const company = await buildCompany(t);
  await grantCredits(t, company.id, 10);
  await connectSourcehost(t, company.id, { baseUrl: git.baseUrl, token: 'git-token' });
  const key = await buildServiceKey(t, { companyId: company.id });
  const actor: ServiceActor = {
    kind: 'service',
    credentialId: key.id,
    organizationId: company.id,
    scopes: new Set(['scans:create', 'scans:read']),
  };
  const accepted = await worker().createScan(actor, newIdempotencyKey(), {
    type,
    scanSources: [{ kind: 'sourcehost', repository, commit }],
  });
  return { actor, scanId: accepted.body.id };
}

async function keptKeys(scanId: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of t.container.objectStore.list(`scan-work/${scanId}`)) keys.push(object.key);
  return keys.sort();
}

describe('a sourcehost scan’s sources', () => {
  it('are fetched once per scan when its two jobs run on different workers, and removed when it ends', async () => {
    const tooLarge = `// ${'x'.repeat(2 * 1024 * 1024)}\n`;
    const { actor, scanId } = await sourcehostScan('acme/two-workers', {
      'contracts/Bank.sol': REENTRANT_BANK,
      'contracts/Generated.sol': tooLarge,
      'README.md': '# bank',
    });

    await worker().prepareScan(scanId, context());
    expect(fetchesOf('acme/two-workers')).toBe(1);
    expect(await keptKeys(scanId)).toEqual([
      `scan-work/${scanId}/analysis.json.gz`,
      `scan-work/${scanId}/sources-skipped.json`,
      `scan-work/${scanId}/sources.tar.gz`,
    ]);

    await worker().runScan(scanId, context());
    const status = await worker().getScan(actor, scanId);
    expect(status.status).toBe('completed');
    expect(status.findingsCount).toBeGreaterThan(0);
    // The second worker read the kept sources: still one fetch for the scan.
    expect(fetchesOf('acme/two-workers')).toBe(1);
    // The file the fetch left out is reported as by a scan of the fetched tree itself.
    const report = await worker().getScanFindings(actor, scanId);
    expect(JSON.stringify(report)).toContain('contracts/Generated.sol: not scanned (too-large');
    expect(await keptKeys(scanId)).toEqual([]);
  });

  it('give the same findings read back from the object store as fetched', async () => {
    const files = { 'contracts/Bank.sol': REENTRANT_BANK, 'README.md': '# bank' };
    const viaKept = await sourcehostScan('acme/same-a', files);
    await worker().prepareScan(viaKept.scanId, context());
    await worker().runScan(viaKept.scanId, context());

    // Sources that are gone (removed, or never stored): the scan job fetches again.
    const fetched = await sourcehostScan('acme/same-b', files);
    await worker().prepareScan(fetched.scanId, context());
    await createScanWork(t.container.objectStore).remove(fetched.scanId);
    await worker().runScan(fetched.scanId, context());
    expect(fetchesOf('acme/same-b')).toBe(2);

    const shape = async (scan: { actor: ServiceActor; scanId: string }) => {
      const report = await worker().getScanFindings(scan.actor, scan.scanId);
      if (!('vulnerabilities' in report)) throw new Error('not a SAST report');
      return report.vulnerabilities.map(({ id: _id, ...v }) => v);
    };
    const a = await shape(viaKept);
    expect(a.length).toBeGreaterThan(0);
    expect(a).toEqual(await shape(fetched));
  });

  it('are removed by the scan sweep once their scan is no longer active, and kept while it is', async () => {
    const active = await sourcehostScan('acme/sweep-active', { 'contracts/Bank.sol': REENTRANT_BANK });
    const ended = await sourcehostScan('acme/sweep-ended', { 'contracts/Bank.sol': REENTRANT_BANK });
    await worker().prepareScan(active.scanId, context());
    await worker().prepareScan(ended.scanId, context());
    // What a worker killed at the end of a scan leaves: a finished scan with its kept work.
    await t.container.database.db.update(scans).set({ status: 'failed' }).where(eq(scans.id, ended.scanId));

    expect(await worker().sweepScanWork()).toBeGreaterThanOrEqual(1);
    expect(await keptKeys(ended.scanId)).toEqual([]);
    expect(await keptKeys(active.scanId)).toHaveLength(3);
  });

  it('are parsed once per scan: the scan job takes over the threat-model job’s pass', async () => {
    const files = {
      'contracts/Bank.sol': REENTRANT_BANK,
      'contracts/Vault.sol': REENTRANT_BANK.replaceAll('Bank', 'Vault'),
      'README.md': '# bank',
    };
    for (const type of ['lite', 'standard', 'audit'] as const) {
      const scan = await sourcehostScan(`acme/parsed-once-${type}`, files, type);
      parses.clear();
      await worker().prepareScan(scan.scanId, context());
      expect(Object.fromEntries(parses)).toEqual({ 'contracts/Bank.sol': 1, 'contracts/Vault.sol': 1 });
      await worker().runScan(scan.scanId, context());
      expect((await worker().getScan(scan.actor, scan.scanId)).status).toBe('completed');
      expect(Object.fromEntries(parses)).toEqual({ 'contracts/Bank.sol': 1, 'contracts/Vault.sol': 1 });

      // Without the kept pass (removed here), the scan job parses every file again, with the same findings.
      const again = await sourcehostScan(`acme/parsed-twice-${type}`, files, type);
      parses.clear();
      await worker().prepareScan(again.scanId, context());
      await t.container.objectStore.delete(`scan-work/${again.scanId}/analysis.json.gz`);
      await worker().runScan(again.scanId, context());
      expect(Object.fromEntries(parses)).toEqual({ 'contracts/Bank.sol': 2, 'contracts/Vault.sol': 2 });
      const findings = async (s: { actor: ServiceActor; scanId: string }) => {
        const report = await worker().getScanFindings(s.actor, s.scanId);
        if (!('vulnerabilities' in report)) throw new Error('not a SAST report');
        return report.vulnerabilities.map(({ id: _id, ...v }) => v);
      };
      const once = await findings(scan);
      expect(once.length).toBeGreaterThan(0);
      expect(once).toEqual(await findings(again));
    }
  });
});
