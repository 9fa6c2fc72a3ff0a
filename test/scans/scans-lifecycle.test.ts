import { eq } from 'drizzle-orm';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ServiceActor } from '../../src/auth/actor.ts';
import { creditLedger, findings, scanFindings, scans } from '../../src/db/schema/index.ts';
import type { ScanResult } from '../../src/engine/types.ts';
import { AppError } from '../../src/errors.ts';
import { createCursorCodec } from '../../src/platform/pagination/cursor.ts';
import { createIdempotencyService } from '../../src/scanner/idempotency/idempotency.service.ts';
import { createEngineAdapter } from '../../src/scanner/scans/scans.engine-adapter.ts';
import type { ScanEngine } from '../../src/scanner/scans/scans.ports.ts';
import { createScansService, type JobRunContext } from '../../src/scanner/scans/scans.service.ts';
import { openScanSources } from '../../src/scanner/sources/scan-sources.ts';
import { createScanWork } from '../../src/scanner/sources/scan-work.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import { localScanBody, newIdempotencyKey, REENTRANT_BANK } from '../helpers/scan-helpers.ts';
import { waitFor } from '../helpers/wait.ts';

// The lifecycle jobs called directly (no worker), with the real engine or an engine that fails,
// to check each step's idempotency and the credits of every outcome.
const t = sharedTestApp();

const log = pino({ level: 'silent' });
const context = (finalAttempt = false): JobRunContext => ({
  signal: new AbortController().signal,
  finalAttempt,
  log,
});

function servicesWith(engine: ScanEngine) {
  const { database } = t.container;
  return createScansService({
    database,
    queue: () => t.container.queue,
    credits: t.container.services.credits,
    idempotency: createIdempotencyService({ database, ttlHours: 24 }),
    engine,
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

async function createdScan(service: ReturnType<typeof servicesWith>) {
  const company = await buildCompany(t);
  await grantCredits(t, company.id, 10);
  const archive = await buildArchive(t, {
    companyId: company.id,
    files: { 'contracts/Bank.sol': REENTRANT_BANK },
  });
  const key = await buildServiceKey(t, { companyId: company.id });
  const actor: ServiceActor = {
    kind: 'service',
    credentialId: key.id,
    organizationId: company.id,
    scopes: new Set(['scans:create', 'scans:read']),
  };
  const accepted = await service.createScan(actor, newIdempotencyKey(), localScanBody(archive) as never);
  return { company, actor, scanId: accepted.body.id };
}

async function scanRow(id: string) {
  const [row] = await t.container.database.db.select().from(scans).where(eq(scans.id, id));
  return row!;
}

async function ledgerKinds(scanId: string) {
  const rows = await t.container.database.db
    .select()
    .from(creditLedger)
    .where(eq(creditLedger.scanId, scanId));
  return rows.map((r) => r.kind).sort();
}

describe('scan lifecycle jobs', () => {
  it('are idempotent: a repeated threat-model job and a repeated scan job charge once and store findings once', async () => {
    const service = servicesWith(createEngineAdapter());
    const { company, scanId } = await createdScan(service);
    await service.prepareScan(scanId, context());
    await service.prepareScan(scanId, context());
    expect((await scanRow(scanId)).status).toBe('queued');
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'reserve']);

    await service.runScan(scanId, context());
    const done = await scanRow(scanId);
    expect(done.status).toBe('completed');
    expect(done.findingsCount).toBeGreaterThan(0);
    // A retried scan job after completion does nothing; a second scan of the same workspace
    // finds the same findings again and links them without duplicating them.
    await service.runScan(scanId, context());
    const links = await t.container.database.db
      .select()
      .from(scanFindings)
      .where(eq(scanFindings.scanId, scanId));
    expect(links).toHaveLength(done.findingsCount);
    const drafts = await t.container.database.db
      .select()
      .from(findings)
      .where(eq(findings.workspaceId, done.workspaceId));
    expect(drafts).toHaveLength(done.findingsCount);
    expect(drafts.every((f) => f.published === false && f.companyId === company.id)).toBe(true);
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'reserve']);
  });

  it('a scan job retried while running (its worker died) starts over and completes once', async () => {
    const service = servicesWith(createEngineAdapter());
    const { scanId } = await createdScan(service);
    await service.prepareScan(scanId, context());
    // The state a dead worker leaves behind: running, half the progress.
    await t.container.database.db
      .update(scans)
      .set({ status: 'running', filesDone: 1, filesTotal: 3 })
      .where(eq(scans.id, scanId));
    await service.runScan(scanId, context());
    const done = await scanRow(scanId);
    expect(done.status).toBe('completed');
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'reserve']);
  });

  it('an engine failure fails the scan with its error and refunds the consumed credits', async () => {
    const failing: ScanEngine = {
      ...createEngineAdapter(),
      scanTree: async (): Promise<ScanResult> => {
        throw new Error('parser crashed');
      },
    };
    const service = servicesWith(failing);
    const { company, actor, scanId } = await createdScan(service);
    await service.prepareScan(scanId, context());
    // Not the last attempt: a plain error is retried by the queue, the scan stays running.
    await expect(service.runScan(scanId, context(false))).rejects.toThrow('parser crashed');
    expect((await scanRow(scanId)).status).toBe('running');
    await service.runScan(scanId, context(true));
    const status = await service.getScan(actor, scanId);
    expect(status.status).toBe('failed');
    expect(status.error).toEqual({ code: 'SCAN_ENGINE_ERROR', message: expect.any(String) });
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'refund', 'reserve']);
    const balances = await t.container.services.credits.getBalances(company.id);
    expect(balances).toMatchObject({ used: 0, reserved: 0, remaining: 10 });
  });

  it('a source failure in the threat-model job fails the scan at once and releases the reservation', async () => {
    const failing: ScanEngine = {
      ...createEngineAdapter(),
      analyzeTree: async () => {
        throw new AppError('INVALID_ARCHIVE', { message: 'The archive is not a well-formed tar.gz.' });
      },
    };
    const service = servicesWith(failing);
    const { actor, scanId } = await createdScan(service);
    await service.prepareScan(scanId, context(false));
    const status = await service.getScan(actor, scanId);
    expect(status).toMatchObject({ status: 'failed', error: { code: 'INVALID_ARCHIVE' } });
    expect(await ledgerKinds(scanId)).toEqual(['release', 'reserve']);
    await expect(service.cancelScan(actor, scanId)).rejects.toMatchObject({ code: 'SCAN_NOT_CANCELLABLE' });
  });

  it('stops a running scan that is cancelled and stores nothing of it; credits stay consumed', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = createEngineAdapter();
    let engineSignal: AbortSignal | undefined;
    const slow: ScanEngine = {
      ...real,
      scanTree: async (tree, options) => {
        engineSignal = options.signal;
        options.onProgress?.({ filesDone: 0, filesTotal: 1 });
        await gate;
        // The engine checks the signal between files.
        options.signal?.throwIfAborted();
        return real.scanTree(tree, options);
      },
    };
    const service = servicesWith(slow);
    const { actor, scanId } = await createdScan(service);
    await service.prepareScan(scanId, context());
    const running = service.runScan(scanId, context());
    await waitFor(async () => engineSignal && (await scanRow(scanId)).status === 'running', {
      what: 'the scan to run',
    });
    const cancelled = await service.cancelScan(actor, scanId);
    expect(cancelled.status).toBe('cancelled');
    // The poll notices the cancel before the engine goes on.
    await waitFor(() => engineSignal?.aborted, { what: 'the cancel to reach the engine' });
    release();
    await running;
    const row = await scanRow(scanId);
    expect(row.status).toBe('cancelled');
    expect(row.findingsCount).toBe(0);
    const links = await t.container.database.db
      .select()
      .from(scanFindings)
      .where(eq(scanFindings.scanId, scanId));
    expect(links).toHaveLength(0);
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'reserve']);
  });

  it('refunds a scan cancelled while queued', async () => {
    const service = servicesWith(createEngineAdapter());
    const { company, actor, scanId } = await createdScan(service);
    await expect(service.cancelScan(actor, scanId)).rejects.toMatchObject({ code: 'SCAN_NOT_STARTED' });
    await service.prepareScan(scanId, context());
    expect((await service.cancelScan(actor, scanId)).status).toBe('cancelled');
    await service.runScan(scanId, context());
    expect((await scanRow(scanId)).status).toBe('cancelled');
    expect(await ledgerKinds(scanId)).toEqual(['consume', 'refund', 'reserve']);
    expect((await t.container.services.credits.getBalances(company.id)).remaining).toBe(10);
  });
});
