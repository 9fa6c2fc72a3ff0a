import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startFakeGitServer } from '../../../test/fakes/git-server.ts';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesServiceAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildArchive,
  buildCompany,
  buildScannerFinding,
  buildServiceKey,
  connectSourcehost,
  grantCredits,
} from '../../../test/helpers/factories.ts';
import {
  getScanStatus,
  isFinal,
  localScanBody,
  newIdempotencyKey,
  postScan,
  REENTRANT_BANK,
  waitForScan,
} from '../../../test/helpers/scan-helpers.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import {
  creditLedger,
  findings,
  findingTickets,
  idempotencyRecords,
  scanFindings,
  scans,
  workspaces,
} from '../../db/schema/index.ts';
import { emptyThreatModel } from '../../engine/threat-model/threat-model.ts';
import { scansRepo } from './scans.repo.ts';

const COMMIT = 'a'.repeat(40);

const t = sharedTestApp({ worker: true, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });

async function tenant(credits = 10) {
  const company = await buildCompany(t);
  const key = await buildServiceKey(t, { companyId: company.id });
  if (credits > 0) await grantCredits(t, company.id, credits);
  return { company, key: key.key };
}

/** A completed standard scan of the reentrant contract. */
async function completedScan() {
  const { company, key } = await tenant();
  const archive = await buildArchive(t, {
    companyId: company.id,
    files: { 'contracts/Bank.sol': REENTRANT_BANK },
  });
  const res = await postScan(t, key, localScanBody(archive));
  expect(res.statusCode, res.body).toBe(202);
  const scan = await waitForScan(t, key, res.json().id, isFinal);
  expect(scan.status).toBe('completed');
  return { company, key, archive, scan };
}

describe('POST /api/scanner/v1/scans', () => {
  it('accepts a local standard scan with 202 preparing and runs it to completion', async () => {
    const { company, key } = await tenant(10);
    const archive = await buildArchive(t, {
      companyId: company.id,
      files: {
        'contracts/Bank.sol': REENTRANT_BANK,
        'README.md': '# x',
      },
    });
    const res = await postScan(t, key, localScanBody(archive));
    expect(res.statusCode, res.body).toBe(202);
    const accepted = res.json();
    expect(accepted).toEqual({
      id: expect.any(String),
      status: 'preparing',
      type: 'standard',
      workspaceId: archive.workspaceId,
      createdAt: expect.any(String),
    });
    const done = await waitForScan(t, key, accepted.id, isFinal);
    expect(done.status).toBe('completed');
    expect(done.startedAt).not.toBeNull();
    expect(done.completedAt).not.toBeNull();
    expect(done.progress).toEqual({ filesTotal: 2, filesDone: 2 });
    expect(done.findingsCount).toBeGreaterThan(0);
    const balances = await t.container.services.credits.getBalances(company.id);
    expect(balances).toMatchObject({ purchased: 10, used: 2, reserved: 0, remaining: 8 });
    const ledger = await t.container.services.credits.getLedgerBalances(company.id);
    expect(ledger).toMatchObject({ purchased: 10, used: 2, reserved: 0 });
  });

  it('replays the first response for a repeated Idempotency-Key', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    const first = await postScan(t, key, localScanBody(archive), idem);
    expect(first.statusCode).toBe(202);
    // Same body with the keys in another order: the same fingerprint.
    const reordered = {
      scanSources: [{ sha256: archive.sha256, archiveId: archive.archiveId, kind: 'local' }],
      type: 'standard',
    };
    const second = await postScan(t, key, reordered, idem);
    expect(second.statusCode).toBe(202);
    expect(second.json()).toEqual(first.json());
    expect(second.headers['idempotent-replayed']).toBe('true');
    const rows = await t.container.database.db.select().from(scans).where(eq(scans.companyId, company.id));
    expect(rows).toHaveLength(1);
  });

  it('replays across service-key rotation (the key is scoped to the organization)', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    const first = await postScan(t, key, localScanBody(archive), idem);
    const rotated = await buildServiceKey(t, { companyId: company.id });
    const second = await postScan(t, rotated.key, localScanBody(archive), idem);
    expect(second.statusCode).toBe(202);
    expect(second.json().id).toBe(first.json().id);
  });

  it('answers 409 IDEMPOTENCY_KEY_REUSED for the same key with another body', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    expect((await postScan(t, key, localScanBody(archive), idem)).statusCode).toBe(202);
    const res = await postScan(t, key, localScanBody(archive, { prefix: 'contracts' }), idem);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('scopes keys per organization: another organization may use the same key', async () => {
    const a = await tenant();
    const b = await tenant();
    const idem = newIdempotencyKey();
    const archiveA = await buildArchive(t, { companyId: a.company.id, files: { 'a.sol': REENTRANT_BANK } });
    const archiveB = await buildArchive(t, { companyId: b.company.id, files: { 'a.sol': REENTRANT_BANK } });
    const ra = await postScan(t, a.key, localScanBody(archiveA), idem);
    const rb = await postScan(t, b.key, localScanBody(archiveB), idem);
    expect(ra.statusCode).toBe(202);
    expect(rb.statusCode).toBe(202);
    expect(ra.json().id).not.toBe(rb.json().id);
  });

  it('answers 400 IDEMPOTENCY_KEY_REQUIRED without the header and VALIDATION_FAILED for a bad key', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/scans',
      headers: { authorization: `Bearer ${key}` },
      payload: localScanBody(archive),
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    for (const bad of ['has space', 'x'.repeat(256), 'ünï']) {
      const res = await postScan(t, key, localScanBody(archive), bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
      expect(res.json().error).toMatch(/idempotency-key/i);
    }
    expect((await postScan(t, key, localScanBody(archive), 'x'.repeat(255))).statusCode).toBe(202);
  });

  it('validates the body (unknown fields, empty or too many sources, bad type, a branch instead of a commit)', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const source = localScanBody(archive).scanSources[0];
    for (const body of [
      { ...localScanBody(archive), extra: 1 },
      { type: 'standard', scanSources: [] },
      { type: 'standard', scanSources: Array.from({ length: 21 }, () => source) },
      { type: 'deep', scanSources: [source] },
      { type: 'standard', scanSources: [{ kind: 'ftp', url: 'x' }] },
      { type: 'standard', scanSources: [source], startMode: 'manual' },
      { type: 'lite', scanSources: [{ kind: 'sourcehost', repository: 'acme/vault', commit: 'main' }] },
    ]) {
      const res = await postScan(t, key, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_FAILED');
    }
  });

  it('answers 422 UNSUPPORTED_REPOSITORY_TYPE for lite or audit with local sources, mixed kinds, a bad repository and no sourcehost integration', async () => {
    const { company, key } = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const local = localScanBody(archive).scanSources[0];
    const hosted = { kind: 'sourcehost', repository: 'acme/vault', commit: COMMIT };
    const cases = [
      { type: 'lite', scanSources: [local] },
      { type: 'audit', scanSources: [local] },
      { type: 'standard', scanSources: [local, hosted] },
      { type: 'lite', scanSources: [hosted] }, // no integration connected yet
    ];
    for (const body of cases) {
      const res = await postScan(t, key, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().code).toBe('UNSUPPORTED_REPOSITORY_TYPE');
    }
    await connectSourcehost(t, company.id);
    for (const repository of ['https://host/acme/vault', 'acme/vault/sub', 'acme']) {
      const res = await postScan(t, key, { type: 'lite', scanSources: [{ ...hosted, repository }] });
      expect(res.statusCode, repository).toBe(422);
      expect(res.json().code).toBe('UNSUPPORTED_REPOSITORY_TYPE');
    }
  });

  it('answers 404 ARCHIVE_NOT_FOUND for an unknown archive, a wrong sha256 or another organization’s archive', async () => {
    const { company, key } = await tenant();
    const other = await tenant();
    const mine = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const theirs = await buildArchive(t, { companyId: other.company.id, files: { 'a.sol': REENTRANT_BANK } });
    for (const source of [
      { kind: 'local', archiveId: '00000000-0000-4000-8000-000000000000', sha256: mine.sha256 },
      { kind: 'local', archiveId: mine.archiveId, sha256: 'a'.repeat(64) },
      { kind: 'local', archiveId: theirs.archiveId, sha256: theirs.sha256 },
    ]) {
      const res = await postScan(t, key, { type: 'standard', scanSources: [source] });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('ARCHIVE_NOT_FOUND');
    }
  });

  it('answers 402 INSUFFICIENT_CREDITS and replays it for the same key; a new key works after a grant', async () => {
    const { company, key } = await tenant(1);
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    const res = await postScan(t, key, localScanBody(archive), idem);
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ code: 'INSUFFICIENT_CREDITS', cost: 2, remaining: 1 });
    await grantCredits(t, company.id, 5);
    const replay = await postScan(t, key, localScanBody(archive), idem);
    expect(replay.statusCode).toBe(402);
    expect(replay.json()).toEqual(res.json());
    expect((await postScan(t, key, localScanBody(archive))).statusCode).toBe(202);
    const rows = await t.container.database.db.select().from(scans).where(eq(scans.companyId, company.id));
    expect(rows).toHaveLength(1);
  });

  it('creates and links a workspace for a sourcehost repository, reuses it, and answers 409 AMBIGUOUS_WORKSPACE for several', async () => {
    const { company, key } = await tenant(20);
    await connectSourcehost(t, company.id);
    const body = {
      type: 'lite',
      scanSources: [{ kind: 'sourcehost', repository: 'acme/vault', commit: COMMIT }],
    };
    const first = await postScan(t, key, body);
    expect(first.statusCode, first.body).toBe(202);
    const second = await postScan(t, key, body);
    expect(second.json().workspaceId).toBe(first.json().workspaceId);
    const [ws] = await t.container.database.db
      .select()
      .from(workspaces)
      .where(eq(workspaces.id, first.json().workspaceId));
    expect(ws).toMatchObject({ repository: 'acme/vault', prefix: '', active: true });

    // A second linked workspace with another prefix: without a prefix the choice is ambiguous.
    const withPrefix = await postScan(t, key, { ...body, prefix: '/contracts/' });
    expect(withPrefix.statusCode).toBe(202);
    expect(withPrefix.json().workspaceId).not.toBe(first.json().workspaceId);
    const ambiguous = await postScan(t, key, body);
    expect(ambiguous.statusCode).toBe(409);
    const err = ambiguous.json();
    expect(err.code).toBe('AMBIGUOUS_WORKSPACE');
    expect(err.workspaces).toHaveLength(2);
    expect(err.workspaces[0]).toEqual({
      id: expect.any(String),
      prefix: expect.any(String),
      name: expect.any(String),
    });
    // The prefix or the workspace id resolves it.
    const byPrefix = await postScan(t, key, { ...body, prefix: 'contracts' });
    expect(byPrefix.json().workspaceId).toBe(withPrefix.json().workspaceId);
    const byId = await postScan(t, key, { ...body, workspaceId: first.json().workspaceId });
    expect(byId.json().workspaceId).toBe(first.json().workspaceId);
  });

  it('answers 404 for another organization’s workspaceId', async () => {
    const { company, key } = await tenant();
    const other = await tenant();
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const theirs = await buildArchive(t, { companyId: other.company.id, files: { 'a.sol': REENTRANT_BANK } });
    const res = await postScan(t, key, localScanBody(archive, { workspaceId: theirs.workspaceId }));
    expect(res.statusCode).toBe(404);
  });

  it('scans a sourcehost commit end to end through the connected integration', async () => {
    const git = await startFakeGitServer({ token: 'git-token' });
    try {
      const { commit } = await git.createRepository('acme/bank', {
        'contracts/Bank.sol': REENTRANT_BANK,
        'README.md': '# bank',
      });
      const { company, key } = await tenant(10);
      await connectSourcehost(t, company.id, { baseUrl: git.baseUrl, token: 'git-token' });
      const res = await postScan(t, key, {
        type: 'standard',
        prefix: 'contracts',
        scanSources: [{ kind: 'sourcehost', repository: 'acme/bank', commit }],
      });
      expect(res.statusCode, res.body).toBe(202);
      const scan = await waitForScan(t, key, res.json().id, isFinal);
      expect(scan.status, JSON.stringify(scan)).toBe('completed');
      expect(scan.progress).toEqual({ filesTotal: 1, filesDone: 1 });
      expect(scan.findingsCount).toBeGreaterThan(0);
      const [ws] = await t.container.database.db
        .select()
        .from(workspaces)
        .where(eq(workspaces.id, scan.workspaceId));
      expect(ws).toMatchObject({ repository: 'acme/bank', prefix: 'contracts' });
      expect(git.requests.every((r) => !r.url.includes('git-token'))).toBe(true);
      // The commit is fetched once per scan: the scan job reads what the threat-model job kept
      // in the object store (test/scans/scans-work.test.ts runs the two jobs on two workers).
      const fetches = git.requests.filter((r) => r.method === 'POST' && r.url.endsWith('/git-upload-pack'));
      expect(fetches).toHaveLength(1);
      // What was kept for the scan is removed once it completed (right after the completing
      // transaction commits, so a poll can see the scan completed a moment before).
      let kept: string[] = [];
      await waitFor(
        async () => {
          kept = [];
          for await (const object of t.container.objectStore.list(`scan-work/${scan.id}`))
            kept.push(object.key);
          return kept.length === 0;
        },
        { what: () => `the scan's work removed (left: ${kept.join(', ')})`, timeoutMs: 10_000 },
      );
    } finally {
      await git.close();
    }
  });

  it('fails a sourcehost scan whose commit cannot be fetched and returns its credits', async () => {
    const { company, key } = await tenant(3);
    await connectSourcehost(t, company.id);
    const res = await postScan(t, key, {
      type: 'lite',
      scanSources: [{ kind: 'sourcehost', repository: 'acme/unreachable', commit: COMMIT }],
    });
    expect(res.statusCode).toBe(202);
    const scan = await waitForScan(t, key, res.json().id, isFinal);
    expect(scan.status).toBe('failed');
    expect(scan.error?.code).toBe('SOURCEHOST_ERROR');
    const balances = await t.container.services.credits.getBalances(company.id);
    expect(balances).toMatchObject({ used: 0, reserved: 0, remaining: 3 });
    const ledger = await t.container.database.db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.scanId, scan.id));
    expect(ledger.map((r) => r.kind).sort()).toEqual(['release', 'reserve']);
  });

  itEnforcesServiceAuth(() => t, {
    method: 'POST',
    scope: 'scans:create',
    request: async (app, companyId) => {
      await grantCredits(app, companyId, 5);
      const archive = await buildArchive(app, { companyId, files: { 'a.sol': REENTRANT_BANK } });
      return {
        url: '/api/scanner/v1/scans',
        payload: localScanBody(archive, { workspaceId: archive.workspaceId }),
        headers: { 'idempotency-key': newIdempotencyKey() },
      };
    },
  });

  it('does not touch the idempotency record for 401 and 403 answers', async () => {
    const { company } = await tenant();
    const readOnly = await buildServiceKey(t, { companyId: company.id, scopes: ['scans:read'] });
    const archive = await buildArchive(t, { companyId: company.id, files: { 'a.sol': REENTRANT_BANK } });
    const idem = newIdempotencyKey();
    expect((await postScan(t, readOnly.key, localScanBody(archive), idem)).statusCode).toBe(403);
    const records = await t.container.database.db
      .select()
      .from(idempotencyRecords)
      .where(eq(idempotencyRecords.key, idem));
    expect(records).toHaveLength(0);
  });
});

describe('GET /api/scanner/v1/scans/{scanId}', () => {
  it('answers 404 for an unknown scan', async () => {
    const { key } = await tenant(0);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/scans/00000000-0000-4000-8000-000000000000',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(404);
  });

  itEnforcesServiceAuth(() => t, {
    method: 'GET',
    scope: 'scans:read',
    request: async (app, companyId) => {
      const [ws] = await app.container.database.db
        .insert(workspaces)
        .values({ companyId, name: 'w', prefix: '' })
        .returning();
      const [scan] = await app.container.database.db
        .insert(scans)
        .values({ companyId, workspaceId: ws!.id, type: 'standard', sources: [], cost: 2 })
        .returning();
      return { url: `/api/scanner/v1/scans/${scan!.id}` };
    },
  });
});

describe('POST /api/scanner/v1/scans/{scanId}/cancel', () => {
  async function scanIn(companyId: string, status: (typeof scans.$inferSelect)['status']) {
    const db = t.container.database.db;
    const [ws] = await db.insert(workspaces).values({ companyId, name: 'w', prefix: '' }).returning();
    const [scan] = await db
      .insert(scans)
      .values({ companyId, workspaceId: ws!.id, type: 'standard', sources: [], cost: 2, status })
      .returning();
    return scan!;
  }
  const cancel = (key: string, id: string) =>
    t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/scans/${id}/cancel`,
      headers: { authorization: `Bearer ${key}` },
    });

  it('a run stopped by a cancel removes its drafts but keeps the ones already sent to a tracker', async () => {
    const { company } = await tenant();
    const scan = await scanIn(company.id, 'running');
    const db = t.container.database.db;
    const base = { companyId: company.id, workspaceId: scan.workspaceId };
    const ticketed = await buildScannerFinding(t, base);
    const plain = await buildScannerFinding(t, base);
    const location = { file: 'contracts/Vault.sol', startLine: 42, endLine: 57 };
    await db.insert(scanFindings).values([
      { scanId: scan.id, findingId: ticketed.id, location },
      { scanId: scan.id, findingId: plain.id, location },
    ]);
    await db.insert(findingTickets).values({
      companyId: company.id,
      findingId: ticketed.id,
      provider: 'tracker_a',
      key: 'SEC-1',
      externalId: 'issue-1',
      url: 'https://tracker.example/SEC-1',
      title: 'Reentrancy',
      source: 'created',
    });

    await db.transaction((tx) => scansRepo(tx).removeRunFindings(scan.id));

    const left = await db
      .select({ id: findings.id })
      .from(findings)
      .where(inArray(findings.id, [ticketed.id, plain.id]));
    expect(left.map((r) => r.id)).toEqual([ticketed.id]);
    const tickets = await db.select().from(findingTickets).where(eq(findingTickets.findingId, ticketed.id));
    expect(tickets).toHaveLength(1);
    expect(await db.select().from(scanFindings).where(eq(scanFindings.scanId, scan.id))).toHaveLength(0);
  });

  it('cancels a queued or running scan and is safe to repeat', async () => {
    const { company, key } = await tenant();
    for (const status of ['queued', 'running'] as const) {
      const scan = await scanIn(company.id, status);
      const res = await cancel(key, scan.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: scan.id, status: 'cancelled', cancelledAt: expect.any(String) });
      const again = await cancel(key, scan.id);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(res.json());
    }
  });

  it('answers 409 SCAN_NOT_CANCELLABLE for completed and failed scans and SCAN_NOT_STARTED while preparing', async () => {
    const { company, key } = await tenant();
    for (const [status, code] of [
      ['completed', 'SCAN_NOT_CANCELLABLE'],
      ['failed', 'SCAN_NOT_CANCELLABLE'],
      ['preparing', 'SCAN_NOT_STARTED'],
    ] as const) {
      const scan = await scanIn(company.id, status);
      const res = await cancel(key, scan.id);
      expect(res.statusCode, status).toBe(409);
      expect(res.json().code).toBe(code);
      expect((await getScanStatus(t, key, scan.id)).status).toBe(status);
    }
  });

  itEnforcesServiceAuth(() => t, {
    method: 'POST',
    scope: 'scans:create',
    request: async (_app, companyId) => ({
      url: `/api/scanner/v1/scans/${(await scanIn(companyId, 'queued')).id}/cancel`,
    }),
  });
});

describe('GET /api/scanner/v1/scans/{scanId}/findings', () => {
  it('returns the GitLab SAST report with the scan’s draft findings', async () => {
    const { key, scan } = await completedScan();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/findings`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(200);
    const report = res.json();
    expect(report.version).toMatch(/^15\./);
    expect(report.scan).toMatchObject({ type: 'sast', status: 'success' });
    expect(report.scan.start_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(report.scan.analyzer).toMatchObject({
      id: expect.any(String),
      name: expect.any(String),
      vendor: { name: 'Vigil' },
    });
    expect(report.vulnerabilities.length).toBe(scan.findingsCount);
    for (const v of report.vulnerabilities) {
      expect(v.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(['Critical', 'High', 'Medium', 'Low', 'Info']).toContain(v.severity);
      expect(v.location).toMatchObject({
        file: 'contracts/Bank.sol',
        start_line: expect.any(Number),
        end_line: expect.any(Number),
      });
      expect(v.identifiers.length).toBeGreaterThan(0);
      expect(v.published).toBe(false);
    }
  });

  it('returns SARIF 2.1.0 with format=sarif and 400 for another format', async () => {
    const { key, scan } = await completedScan();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/findings?format=sarif`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(200);
    const sarif = res.json();
    expect(sarif.version).toBe('2.1.0');
    const run = sarif.runs[0];
    expect(run.results.length).toBe(scan.findingsCount);
    for (const r of run.results) {
      expect(run.tool.driver.rules[r.ruleIndex].id).toBe(r.ruleId);
      expect(r.locations[0].physicalLocation.region.startLine).toBeGreaterThan(0);
      expect(r.partialFingerprints).toBeDefined();
    }
    const bad = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/findings?format=pdf`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('answers 409 SCAN_NOT_COMPLETED before completion', async () => {
    const { company, key } = await tenant();
    const [ws] = await t.container.database.db
      .insert(workspaces)
      .values({ companyId: company.id, name: 'w' })
      .returning();
    const [scan] = await t.container.database.db
      .insert(scans)
      .values({
        companyId: company.id,
        workspaceId: ws!.id,
        type: 'standard',
        sources: [],
        cost: 2,
        status: 'running',
      })
      .returning();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan!.id}/findings`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('SCAN_NOT_COMPLETED');
  });

  itEnforcesServiceAuth(() => t, {
    method: 'GET',
    scope: 'scans:read',
    request: async (_app, companyId) => {
      const db = t.container.database.db;
      const [ws] = await db.insert(workspaces).values({ companyId, name: 'w' }).returning();
      const [scan] = await db
        .insert(scans)
        .values({
          companyId,
          workspaceId: ws!.id,
          type: 'standard',
          sources: [],
          cost: 2,
          status: 'completed',
        })
        .returning();
      return { url: `/api/scanner/v1/scans/${scan!.id}/findings` };
    },
  });
});

describe('GET /api/scanner/v1/scans/{scanId}/threat-model', () => {
  it('returns the threat model as JSON and as Markdown', async () => {
    const { key, scan } = await completedScan();
    const json = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/threat-model`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/application\/json/);
    expect(typeof json.json()).toBe('object');
    const md = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/threat-model`,
      headers: { authorization: `Bearer ${key}`, accept: 'text/markdown' },
    });
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toMatch(/text\/markdown/);
    expect(md.body).toMatch(/^#/);
  });

  it('answers 409 THREAT_MODEL_NOT_READY before it exists', async () => {
    const { company, key } = await tenant();
    const [ws] = await t.container.database.db
      .insert(workspaces)
      .values({ companyId: company.id, name: 'w' })
      .returning();
    const [scan] = await t.container.database.db
      .insert(scans)
      .values({ companyId: company.id, workspaceId: ws!.id, type: 'standard', sources: [], cost: 2 })
      .returning();
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan!.id}/threat-model`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('THREAT_MODEL_NOT_READY');
  });

  itEnforcesServiceAuth(() => t, {
    method: 'GET',
    scope: 'scans:read',
    request: async (_app, companyId) => {
      const db = t.container.database.db;
      const [ws] = await db.insert(workspaces).values({ companyId, name: 'w' }).returning();
      const [scan] = await db
        .insert(scans)
        .values({
          companyId,
          workspaceId: ws!.id,
          type: 'standard',
          sources: [],
          cost: 2,
          threatModel: emptyThreatModel(),
        })
        .returning();
      return { url: `/api/scanner/v1/scans/${scan!.id}/threat-model` };
    },
  });
});
