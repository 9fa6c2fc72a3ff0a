import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger, findings, scanFindings } from '../../src/db/schema/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import {
  getScanStatus,
  isFinal,
  localScanBody,
  manySolidityFiles,
  postScan,
  waitForScan,
} from '../helpers/scan-helpers.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let t: TestApp;
const workers: ChildProcess[] = [];

/** A real `vigil worker` process on the test app's database and object store. */
function spawnWorker(): ChildProcess {
  if (t.config.database.kind !== 'postgres') throw new Error('needs PostgreSQL');
  const child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), 'worker'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: t.config.database.url,
      VIGIL_SECRET_KEY: t.config.secretKey!.toString('hex'),
      VIGIL_OBJECT_STORE: t.config.objectStore,
      VIGIL_DATA_DIR: t.config.dataDir,
      // The default heartbeat timeout (60 s), heartbeat and sweep periods, and polling interval.
      VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS: '',
      VIGIL_JOB_POLL_SECONDS: '',
      VIGIL_WORKER_CONCURRENCY: '1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  // No in-process worker: only the spawned processes take jobs.
  t = await createTestApp();
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await t?.close();
});

describe('a worker killed in the middle of a scan', () => {
  it('is taken over by another worker within 90 s: the scan completes once, credits are consumed once, findings are not duplicated', async () => {
    const company = await buildCompany(t);
    const key = (await buildServiceKey(t, { companyId: company.id })).key;
    await grantCredits(t, company.id, 5);
    const archive = await buildArchive(t, { companyId: company.id, files: manySolidityFiles(400) });

    const first = spawnWorker();
    let killedOnPurpose = false;
    const died = new Promise<never>((_, reject) => {
      first.once('exit', (code) => {
        if (!killedOnPurpose) reject(new Error(`the first worker exited early (code ${code})`));
      });
    });
    died.catch(() => {});
    const created = await postScan(t, key, localScanBody(archive));
    expect(created.statusCode).toBe(202);
    const scanId = created.json().id as string;
    // Killed once it is at work on the scan: analysing the sources (the threat-model pass, while
    // `preparing`, with the sources unpacked in its spill folder) or part-way through the run.
    const spillOfFirst = (name: string) => name.startsWith(`vigil-tree-${first.pid}-`);
    const midway = await Promise.race([
      waitForScan(
        t,
        key,
        scanId,
        async (s) =>
          (s.status === 'running' &&
            s.progress.filesDone > 0 &&
            s.progress.filesDone < s.progress.filesTotal) ||
          (s.status === 'preparing' && (await readdir(os.tmpdir())).some(spillOfFirst)),
        45_000,
      ),
      died,
    ]);
    expect(['preparing', 'running']).toContain(midway.status);
    if (process.platform === 'linux') {
      // Scan work yields the CPU: the worker runs at VIGIL_WORKER_NICE (default 10).
      const stat = await readFile(`/proc/${first.pid}/stat`, 'utf8');
      expect(Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[16])).toBe(10);
    }

    killedOnPurpose = true;
    first.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((resolve) => first.once('exit', resolve));
    expect(['preparing', 'running']).toContain((await getScanStatus(t, key, scanId)).status);
    // The killed worker could not remove its spill folder; the next worker's start does.
    expect((await readdir(os.tmpdir())).filter(spillOfFirst)).toHaveLength(1);

    spawnWorker();
    // Within 90 s of the kill, with the default timings.
    const done = await waitForScan(t, key, scanId, isFinal, 90_000 - (Date.now() - killedAt));
    console.log(`scan ${done.status} ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ filesTotal: 400, filesDone: 400 });
    expect((await readdir(os.tmpdir())).filter(spillOfFirst)).toEqual([]);

    const db = t.container.database.db;
    const ledger = await db.select().from(creditLedger).where(eq(creditLedger.scanId, scanId));
    expect(ledger.map((r) => r.kind).sort()).toEqual(['consume', 'reserve']);
    const balances = await t.container.services.credits.getBalances(company.id);
    expect(balances).toMatchObject({ used: 2, reserved: 0, remaining: 3 });

    const links = await db.select().from(scanFindings).where(eq(scanFindings.scanId, scanId));
    expect(links.length).toBe(done.findingsCount);
    expect(links.length).toBeGreaterThanOrEqual(400);
    const drafts = await db.select().from(findings).where(eq(findings.workspaceId, done.workspaceId));
    expect(drafts.length).toBe(links.length);
    expect(new Set(drafts.map((f) => f.fingerprint)).size).toBe(drafts.length);
  }, 180_000);
});
