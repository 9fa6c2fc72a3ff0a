import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type Database, openDatabase } from '../../src/db/client.ts';
import { acquireEmbeddedServer } from '../../src/db/embedded-server.ts';
import { archives, workspaces } from '../../src/db/schema/index.ts';
import { createObjectStore } from '../../src/integrations/storage/object-store-url.ts';
import { createCreditsService } from '../../src/organization/credits/credits.service.ts';
import { buildTarGz } from '../fixtures/archives.ts';

/**
 * Chaos: a mixed workload against real `vigil serve` and `vigil worker` processes while they are
 * SIGKILLed and restarted at random, then the invariants. Deterministic choices from `seed`.
 *
 * Workload: company creations (acknowledged writes), scan creations with idempotency keys and
 * retries of the same key after a lost answer, cancels of random scans.
 * Invariants: every acknowledged write present; each idempotency key one scan; each scan final
 * (after a last restart, within a bound); the credit ledger equal to the balances, never negative,
 * nothing left reserved.
 */
export interface ChaosOptions {
  seed: number;
  /** SIGKILLs (each followed by a restart). */
  kills: number;
  /** A PostgreSQL server's maintenance URL; unset: the embedded server of a fresh data folder. */
  serverUrl?: string;
  log?: (line: string) => void;
}

export interface ChaosReport {
  seed: number;
  kills: number;
  database: 'embedded' | 'postgres';
  acknowledged: { companies: number; scans: number; cancels: number };
  violations: string[];
}

const root = path.resolve(import.meta.dirname, '../..');

/** mulberry32: a small seeded generator, so a failing run can be replayed with its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const CONTRACT = `pragma solidity ^0.4.24;
contract Bank {
    mapping(address => uint256) public balances;
    function withdraw() public {
        uint256 amount = balances[msg.sender];
        require(msg.sender.call.value(amount)());
        balances[msg.sender] = 0;
    }
}
`;

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const rng = random(options.seed);
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-chaos-'));
  await chmod(work, 0o755);
  const dataDir = path.join(work, 'data');
  const port = await freePort();
  const adminToken = `vgl_u_${randomBytes(20).toString('hex')}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  const violations: string[] = [];

  // The database: a fresh one on the given server, or the embedded server of the data folder
  // (this runner attaches too, so that it can check the invariants with the processes gone).
  let release = async () => {};
  let databaseUrl: string;
  const env: Record<string, string> = {
    VIGIL_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    VIGIL_ADMIN_TOKEN: adminToken,
    VIGIL_JOB_HEARTBEAT_TIMEOUT_SECONDS: '5',
    VIGIL_JOB_POLL_SECONDS: '1',
    VIGIL_COST_STANDARD: '1',
    VIGIL_SHUTDOWN_TIMEOUT_MS: '2000',
  };
  if (options.serverUrl) {
    const name = `vigil_chaos_${randomBytes(4).toString('hex')}`;
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: options.serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(options.serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    env.DATABASE_URL = databaseUrl;
    env.VIGIL_SECRET_KEY = randomBytes(32).toString('hex');
    release = async () => {
      const c = new pg.Client({ connectionString: options.serverUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    const server = await acquireEmbeddedServer({ dataDir });
    databaseUrl = server.url;
    env.DATABASE_URL = '';
    release = () => server.release();
  }

  const processes: Record<'serve' | 'worker', ChildProcess | null> = { serve: null, worker: null };
  const spawnVigil = (kind: 'serve' | 'worker') => {
    const child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), kind], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d) => log(`[${kind}] ${String(d).trim()}`));
    processes[kind] = child;
    return child;
  };
  const ready = async () => {
    for (let i = 0; i < 1200; i++) {
      const ok = await fetch(`${baseUrl}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      await sleep(50);
    }
    throw new Error('vigil serve did not become ready');
  };
  const kill = async (kind: 'serve' | 'worker') => {
    const child = processes[kind];
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };

  let database: Database | null = null;
  try {
    spawnVigil('serve');
    spawnVigil('worker');
    await ready();

    const call = async (method: string, url: string, token: string, body?: unknown, headers = {}) => {
      const res = await fetch(`${baseUrl}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const company = (
      await call('POST', '/api/v0/admin/companies', adminToken, { name: 'Chaos', handle: 'chaos' })
    ).body;
    const key = (
      await call('POST', `/api/v0/companies/${company.id}/service-keys`, adminToken, { name: 'chaos' })
    ).body.key;
    await call('POST', `/api/v0/admin/companies/${company.id}/credits`, adminToken, { amount: 10_000 });

    database = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 2 });
    const files = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`contracts/Bank${i}.sol`, CONTRACT.replace('Bank', `Bank${i}`)]),
    );
    const archiveBody = buildTarGz(Object.entries(files).map(([name, content]) => ({ name, content })));
    const sha256 = createHash('sha256').update(archiveBody).digest('hex');
    const [ws] = await database.db
      .insert(workspaces)
      .values({ companyId: company.id, name: 'chaos', prefix: '', repository: null })
      .returning();
    const uploadId = randomUUID();
    const objectKey = `chaos/${company.id}/${uploadId}.tar.gz`;
    const store = createObjectStore(`file:${path.join(dataDir, 'objects')}`);
    await store.putStream(objectKey, Readable.from([archiveBody]), { maxBytes: archiveBody.length + 1 });
    await store.close();
    const [archive] = await database.db
      .insert(archives)
      .values({
        companyId: company.id,
        workspaceId: ws!.id,
        uploadId,
        objectKey,
        sha256,
        sizeBytes: archiveBody.length,
        fileCount: 60,
        expandedBytes: Object.values(files).reduce((n, c) => n + c.length, 0),
      })
      .returning();

    const ackCompanies: string[] = [];
    const scanByKey = new Map<string, Set<string>>();
    const ackScans: string[] = [];
    let cancels = 0;
    let chaosDone = false;

    /** Retries the same request (same idempotency key) until it is answered (not 5xx, no network error). */
    const withRetries = async (fn: () => Promise<{ status: number; body: { id?: string } | null }>) => {
      for (let attempt = 0; attempt < 40; attempt++) {
        try {
          const res = await fn();
          if (res.status < 500) return res;
        } catch {
          // the process was killed under the request: the same request again
        }
        await sleep(100 + rng.int(0, 200));
      }
      return null;
    };

    const workload = (async () => {
      let n = 0;
      while (!chaosDone) {
        n++;
        const pick = rng.next();
        if (pick < 0.35) {
          const handle = `chaos-co-${n}`;
          const res = await withRetries(() =>
            call('POST', '/api/v0/admin/companies', adminToken, { name: handle, handle }),
          );
          if (res?.status === 201) ackCompanies.push(handle);
        } else if (pick < 0.85) {
          const idem = randomUUID();
          const res = await withRetries(() =>
            call(
              'POST',
              '/api/scanner/v1/scans',
              key,
              { type: 'standard', scanSources: [{ kind: 'local', archiveId: archive!.id, sha256 }] },
              { 'idempotency-key': idem },
            ),
          );
          if (res && (res.status === 202 || res.status === 200) && res.body?.id) {
            scanByKey.set(idem, new Set([...(scanByKey.get(idem) ?? []), res.body.id]));
            ackScans.push(res.body.id);
            // The same key again after the answer: must name the same scan.
            const again = await withRetries(() =>
              call(
                'POST',
                '/api/scanner/v1/scans',
                key,
                { type: 'standard', scanSources: [{ kind: 'local', archiveId: archive!.id, sha256 }] },
                { 'idempotency-key': idem },
              ),
            );
            if (again?.body?.id) scanByKey.get(idem)!.add(again.body.id);
          }
        } else if (ackScans.length > 0) {
          const scanId = ackScans[rng.int(0, ackScans.length - 1)]!;
          const res = await withRetries(() => call('POST', `/api/scanner/v1/scans/${scanId}/cancel`, key));
          if (res && res.status < 300) cancels++;
        }
      }
    })();

    for (let i = 0; i < options.kills; i++) {
      await sleep(rng.int(200, 1500));
      const kind = rng.next() < 0.5 ? 'serve' : 'worker';
      log(`kill ${i + 1}/${options.kills}: ${kind}`);
      await kill(kind);
      spawnVigil(kind);
      if (kind === 'serve') await ready();
    }
    chaosDone = true;
    await workload;

    // Everything settles: wait for every scan to be final (bounded).
    const final = ['completed', 'failed', 'cancelled'];
    const deadline = Date.now() + 180_000;
    let open: { id: string; status: string }[] = [];
    do {
      const { rows } = await database.executeSql('select id::text, status from scans where company_id = $1', [
        company.id,
      ]);
      open = rows
        .map((r) => ({ id: String(r.id), status: String(r.status) }))
        .filter((r) => !final.includes(r.status));
      if (open.length === 0) break;
      await sleep(500);
    } while (Date.now() < deadline);
    for (const scan of open) violations.push(`scan ${scan.id} is still ${scan.status}`);

    // Every acknowledged write is present.
    const { rows: companyRows } = await database.executeSql('select handle from companies', []);
    const handles = new Set(companyRows.map((r) => String(r.handle)));
    for (const handle of ackCompanies)
      if (!handles.has(handle)) violations.push(`company ${handle} acknowledged but missing`);
    const { rows: scanRows } = await database.executeSql('select id::text from scans where company_id = $1', [
      company.id,
    ]);
    const scanIds = new Set(scanRows.map((r) => String(r.id)));
    for (const id of ackScans) if (!scanIds.has(id)) violations.push(`scan ${id} acknowledged but missing`);

    // Each idempotency key is one scan.
    for (const [idem, ids] of scanByKey)
      if (ids.size !== 1) violations.push(`idempotency key ${idem} answered ${[...ids].join(', ')}`);
    if (scanIds.size > scanByKey.size + 40 * options.kills)
      violations.push(`more scans (${scanIds.size}) than keys could create`);

    // The ledger equals the balances, nothing negative, nothing left reserved once every scan is final.
    const credits = createCreditsService({ database, costs: { lite: 1, standard: 1, audit: 1 } });
    const balances = await credits.getBalances(company.id);
    const ledger = await credits.getLedgerBalances(company.id);
    const amounts = (b: typeof balances) => JSON.stringify([b.purchased, b.used, b.reserved, b.remaining]);
    if (amounts(balances) !== amounts(ledger))
      violations.push(
        `balances ${JSON.stringify(balances)} differ from the ledger ${JSON.stringify(ledger)}`,
      );
    if (balances.remaining < 0 || balances.used < 0 || balances.reserved < 0)
      violations.push(`negative balance ${JSON.stringify(balances)}`);
    if (open.length === 0 && balances.reserved !== 0)
      violations.push(`credits still reserved: ${balances.reserved}`);
    const { rows: perScan } = await database.executeSql(
      `select scan_id::text, count(*) filter (where kind = 'reserve')::int as reserves,
              count(*) filter (where kind = 'consume')::int as consumes,
              count(*) filter (where kind in ('refund', 'release'))::int as returns
         from credit_ledger where company_id = $1 and scan_id is not null group by scan_id`,
      [company.id],
    );
    for (const r of perScan) {
      if (r.reserves !== 1 || Number(r.consumes) > 1 || Number(r.returns) > 1)
        violations.push(
          `scan ${r.scan_id} ledger: ${r.reserves} reserve, ${r.consumes} consume, ${r.returns} return`,
        );
    }

    return {
      seed: options.seed,
      kills: options.kills,
      database: options.serverUrl ? 'postgres' : 'embedded',
      acknowledged: { companies: ackCompanies.length, scans: ackScans.length, cancels },
      violations,
    };
  } finally {
    for (const kind of ['serve', 'worker'] as const) {
      const child = processes[kind];
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
    await database?.close();
    await release();
    await rm(work, { recursive: true, force: true });
  }
}
