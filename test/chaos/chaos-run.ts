import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createCredentialThrottle } from '../../src/auth/credential-throttle.ts';
import { type Database, openDatabase } from '../../src/db/client.ts';
import { acquireEmbeddedServer } from '../../src/db/embedded-server.ts';
import { createObjectStore } from '../../src/integrations/storage/object-store-url.ts';
import { buildFindingLabel } from '../../src/integrations/trackers/ticket-content.ts';
import { createCreditsService } from '../../src/organization/credits/credits.service.ts';
import { createMemoryRateLimiter } from '../../src/rate-limit.ts';
import { createUploadsService } from '../../src/scanner/uploads/uploads.service.ts';
import { type FakeTrackerB, startFakeTrackerB } from '../fakes/tracker-b-server.ts';
import { buildTarGz } from '../fixtures/archives.ts';
import { freePort } from '../helpers/net.ts';

/**
 * Chaos: a mixed workload against real `vigil serve` and `vigil worker` processes while they are
 * SIGKILLed and restarted at random, then the invariants. Deterministic choices from `seed`.
 *
 * Workload: company creations (acknowledged writes); source uploads (session, signed PUT,
 * completion); scan creations on the uploaded archives with idempotency keys and retries of the
 * same key after a lost answer; cancels of the latest scans; ticket sends of random findings to a
 * fake tracker_b site that fails one call in five (a 429, a 502, or for a create the issue
 * stored and then a 502 or a reset connection).
 * Invariants: every acknowledged write present; each idempotency key one scan; each scan final
 * (within a bound); the credit ledger equal to the balances, never negative, nothing left
 * reserved; one provider ticket per export (the tracker's issues counted by finding label, after
 * every sent finding was sent again until it answered); no stored archive or upload object
 * without its row and session (the object store listed against the tables, after housekeeping
 * removed what killed completions left).
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
  acknowledged: {
    companies: number;
    scans: number;
    cancels: number;
    uploads: number;
    ticketSends: number;
  };
  /** Tracker calls and how many the fake failed. */
  tracker: { requests: number; failed: number; issues: number };
  /** Objects without a row found before housekeeping (left by killed completions or uploads). */
  orphansRemovedByHousekeeping: number;
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
    // The fake tracker listens on loopback; a killed send's export is taken over after 3 s.
    VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32',
    VIGIL_TICKET_EXPORT_LEASE_SECONDS: '3',
    // The fake's search index has no lag: a lost create is found at once or not at all.
    VIGIL_TRACKER_RECONCILE_WINDOW_MS: '2000',
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
  // The tracker's failures draw from their own generator so that they do not shift the workload's.
  const trackerRng = random(options.seed ^ 0x5bd1e995);
  const tracker: FakeTrackerB = await startFakeTrackerB({ projects: ['ENG'] });
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
      await call('POST', `/api/v0/companies/${company.id}/service-keys`, adminToken, {
        name: 'chaos',
        scopes: ['scans:create', 'scans:read', 'findings:read', 'findings:write'],
      })
    ).body.key;
    await call('POST', `/api/v0/admin/companies/${company.id}/credits`, adminToken, { amount: 10_000 });
    const connected = await call(
      'PUT',
      `/api/v0/companies/${company.id}/integrations/tracker_b`,
      adminToken,
      {
        site: tracker.url,
        credentials: { email: tracker.email, apiToken: tracker.apiToken },
        settings: { destination: { projectKey: 'ENG', issueType: 'Bug' } },
      },
    );
    if (connected.status >= 300) throw new Error(`tracker_b integration: ${connected.status}`);
    tracker.setBehaviour({ failEvery: { every: 5, random: trackerRng.next } });

    database = await openDatabase({ kind: 'postgres', url: databaseUrl, poolSize: 2 });
    const files = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`contracts/Bank${i}.sol`, CONTRACT.replace('Bank', `Bank${i}`)]),
    );

    const ackCompanies: string[] = [];
    const scanByKey = new Map<string, Set<string>>();
    const ackScans: string[] = [];
    /** Archives a scan may name: every upload whose completion was answered. */
    const scanArchivesPool: Array<{ id: string; sha256: string }> = [];
    const ackUploads: Array<{ uploadId: string; archiveId: string }> = [];
    /** Findings a send was made for, and the ticket each answered send named. */
    const sentFindings = new Set<string>();
    const ticketAnswers = new Map<string, Set<string>>();
    let ticketSends = 0;
    let cancels = 0;
    let chaosDone = false;

    /** Retries the same request (same idempotency key) until it is answered (not 5xx, no network error). */
    const withRetries = async <T extends { status: number }>(fn: () => Promise<T>) => {
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

    const createScan = (idem: string, source: { id: string; sha256: string }) =>
      call(
        'POST',
        '/api/scanner/v1/scans',
        key,
        { type: 'standard', scanSources: [{ kind: 'local', archiveId: source.id, sha256: source.sha256 }] },
        { 'idempotency-key': idem },
      );

    /** Session, signed PUT, completion; each step retried until answered. */
    const upload = async (n: number) => {
      const body = buildTarGz([
        ...Object.entries(files).map(([name, content]) => ({ name, content })),
        { name: `contracts/Upload${n}.sol`, content: CONTRACT.replace('Bank', `Upload${n}`) },
      ]);
      const digest = createHash('sha256').update(body).digest('hex');
      const session = await withRetries(() =>
        call('POST', '/api/scanner/v1/source-uploads', key, {
          workspace: { name: 'chaos-uploads' },
          archives: [{ filename: `u${n}.tar.gz`, sizeBytes: body.length }],
        }),
      );
      const target = session?.status === 200 ? session.body.uploads[0] : null;
      if (!target) return;
      const put = await withRetries(async () => {
        const res = await fetch(target.uploadUrl, {
          method: 'PUT',
          headers: target.headers,
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        return { status: res.status, body: null };
      });
      if (put?.status !== 200) return;
      const done = await withRetries(() =>
        call('POST', `/api/scanner/v1/source-uploads/${target.uploadId}/complete`, key, { sha256: digest }),
      );
      if (done?.status === 200 && done.body?.archiveId) {
        ackUploads.push({ uploadId: target.uploadId, archiveId: done.body.archiveId });
        scanArchivesPool.push({ id: done.body.archiveId, sha256: digest });
      }
    };

    /** A ticket send of a random finding of the company's scans. */
    const sendTicket = async () => {
      const { rows } = await database!.executeSql(
        'select id::text from findings where company_id = $1 order by id limit 200',
        [company.id],
      );
      if (rows.length === 0) return;
      const findingId = String(rows[rng.int(0, rows.length - 1)]!.id);
      sentFindings.add(findingId);
      const res = await withRetries(() =>
        call('POST', `/api/scanner/v1/findings/${findingId}/issue-trackers/tracker_b`, key),
      );
      if (res?.status === 200) {
        ticketSends++;
        const externalId = res.body?.export?.ticket?.externalId;
        if (externalId)
          ticketAnswers.set(findingId, new Set([...(ticketAnswers.get(findingId) ?? []), externalId]));
      }
    };

    // The first archive, before any kill: scans need one from the start.
    await upload(0);
    if (scanArchivesPool.length === 0) throw new Error('the first upload did not complete');

    const workload = (async () => {
      let n = 0;
      while (!chaosDone) {
        n++;
        const pick = rng.next();
        if (pick < 0.2) {
          const handle = `chaos-co-${n}`;
          const res = await withRetries(() =>
            call('POST', '/api/v0/admin/companies', adminToken, { name: handle, handle }),
          );
          if (res?.status === 201) ackCompanies.push(handle);
        } else if (pick < 0.35) {
          await upload(n);
        } else if (pick < 0.7) {
          const idem = randomUUID();
          const source = scanArchivesPool[rng.int(0, scanArchivesPool.length - 1)]!;
          const res = await withRetries(() => createScan(idem, source));
          if (res && (res.status === 202 || res.status === 200) && res.body?.id) {
            scanByKey.set(idem, new Set([...(scanByKey.get(idem) ?? []), res.body.id]));
            ackScans.push(res.body.id);
            // The same key again after the answer: must name the same scan.
            const again = await withRetries(() => createScan(idem, source));
            if (again?.body?.id) scanByKey.get(idem)!.add(again.body.id);
          }
        } else if (pick < 0.8) {
          if (ackScans.length > 0) {
            // One of the latest scans, which may still be running (older ones are long final).
            const scanId = ackScans[rng.int(Math.max(0, ackScans.length - 3), ackScans.length - 1)]!;
            // A scan still preparing cannot be cancelled yet (SCAN_NOT_STARTED): ask again shortly.
            for (let attempt = 0; attempt < 15; attempt++) {
              const res = await withRetries(() =>
                call('POST', `/api/scanner/v1/scans/${scanId}/cancel`, key),
              );
              if (res && res.status < 300) cancels++;
              if (res?.body?.code !== 'SCAN_NOT_STARTED') break;
              await sleep(200);
            }
          }
        } else {
          await sendTicket();
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

    // One provider ticket per export. Every finding a send was made for is sent again until it
    // answers (a killed send's lease runs out after 3 s; the fake still fails one call in five),
    // then the tracker's issues are counted by the finding label the adapter puts on each.
    const settled = new Map<string, string>();
    // A draft a cancelled scan alone had found is removed with its export: such a finding is
    // checked for at most one issue, not exactly one.
    const gone = new Set<string>();
    for (const findingId of sentFindings) {
      const settleDeadline = Date.now() + 60_000;
      while (Date.now() < settleDeadline) {
        const res = await call(
          'POST',
          `/api/scanner/v1/findings/${findingId}/issue-trackers/tracker_b`,
          key,
        ).catch(() => null);
        const externalId = res?.status === 200 ? res.body?.export?.ticket?.externalId : undefined;
        if (externalId) {
          settled.set(findingId, externalId);
          break;
        }
        if (res?.status === 404) {
          gone.add(findingId);
          break;
        }
        await sleep(300);
      }
      if (!settled.has(findingId) && !gone.has(findingId))
        violations.push(`finding ${findingId}: no send answered with a ticket`);
    }
    const issuesByFinding = new Map<string, string[]>();
    for (const issue of tracker.issues.list()) {
      const label = issue.labels.find((l) => l !== 'security');
      if (label) issuesByFinding.set(label, [...(issuesByFinding.get(label) ?? []), issue.id]);
    }
    for (const findingId of sentFindings) {
      const issues = issuesByFinding.get(buildFindingLabel(findingId)) ?? [];
      issuesByFinding.delete(buildFindingLabel(findingId));
      if (gone.has(findingId) ? issues.length > 1 : issues.length !== 1)
        violations.push(`finding ${findingId}: ${issues.length} tracker issues (${issues.join(', ')})`);
      const answered = new Set([
        ...(ticketAnswers.get(findingId) ?? []),
        ...(settled.has(findingId) ? [settled.get(findingId)!] : []),
      ]);
      if (answered.size > 1 || (issues.length === 1 && answered.size === 1 && !answered.has(issues[0]!)))
        violations.push(
          `finding ${findingId}: sends answered ${[...answered].join(', ')}, tracker has ${issues.join(', ')}`,
        );
    }
    for (const [label, issues] of issuesByFinding)
      violations.push(`tracker issues ${issues.join(', ')} carry ${label}, a finding never sent`);
    const { rows: exportRows } = await database.executeSql(
      `select e.finding_id::text, e.state, t.external_id
         from finding_exports e left join finding_tickets t on t.id = e.ticket_id
        where e.company_id = $1 and e.provider = 'tracker_b'`,
      [company.id],
    );
    for (const r of exportRows) {
      const findingId = String(r.finding_id);
      if (r.state !== 'created' || String(r.external_id) !== settled.get(findingId))
        violations.push(`export of finding ${findingId}: ${r.state}, ticket ${r.external_id}`);
    }
    if (exportRows.length !== sentFindings.size - gone.size)
      violations.push(
        `${exportRows.length} exports for ${sentFindings.size - gone.size} findings sent and kept`,
      );

    // No stored archive without its session: the object store listed against the tables. A
    // completion killed between its archive copy and its commit leaves an object no row names;
    // housekeeping removes those (here without its grace period, the workload being over).
    const objectsRoot = path.join(dataDir, 'objects');
    const listObjects = async (prefix: string): Promise<string[]> => {
      const found: string[] = [];
      const walk = async (dir: string, key: string): Promise<void> => {
        const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
        for (const entry of entries) {
          if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${key}/${entry.name}`);
          else found.push(`${key}/${entry.name}`);
        }
      };
      await walk(path.join(objectsRoot, prefix), prefix);
      return found;
    };
    const objectIssues = async (): Promise<string[]> => {
      const problems: string[] = [];
      const { rows: archiveRows } = await database!.executeSql(
        `select a.id::text, a.object_key, u.status as session_status, u.archive_id::text as session_archive
           from archives a left join source_uploads u on u.id = a.upload_id`,
        [],
      );
      const archiveKeys = new Set(archiveRows.map((r) => String(r.object_key)));
      for (const key of await listObjects('archives'))
        if (!archiveKeys.has(key)) problems.push(`stored archive ${key} has no archive row`);
      const { rows: sessionRows } = await database!.executeSql('select object_key from source_uploads', []);
      const sessionKeys = new Set(sessionRows.map((r) => String(r.object_key)));
      for (const key of await listObjects('uploads'))
        if (!sessionKeys.has(key)) problems.push(`stored upload ${key} has no session`);
      const stored = new Set(await listObjects('archives'));
      for (const r of archiveRows) {
        if (!stored.has(String(r.object_key))) problems.push(`archive ${r.id}: its object is missing`);
        if (r.session_status !== 'completed' || r.session_archive !== r.id)
          problems.push(`archive ${r.id}: its session is ${r.session_status ?? 'missing'}`);
      }
      return problems;
    };
    const before = await objectIssues();
    const orphans = before.filter((p) => p.includes('has no'));
    const uploadsService = createUploadsService({
      database,
      objectStore: createObjectStore(`file:${objectsRoot}`),
      secretBox: { sign: () => randomBytes(32).toString('base64url') },
      log: pino({ level: 'silent' }),
      maxBytes: 1024 * 1024,
      ttlMinutes: 60,
      publicUrl: null,
      // The sweep checks no signature: a throttle that never counts anything is enough.
      throttle: createCredentialThrottle({
        limiter: createMemoryRateLimiter({ requestsPerMinute: 1, burst: 1 }),
        policy: { requestsPerMinute: 1, burst: 1 },
      }),
    });
    await uploadsService.sweep({ orphanGraceMs: 0 });
    violations.push(...(await objectIssues()));
    const { rows: archiveIds } = await database.executeSql('select id::text from archives', []);
    const archiveIdSet = new Set(archiveIds.map((r) => String(r.id)));
    for (const u of ackUploads)
      if (!archiveIdSet.has(u.archiveId))
        violations.push(`upload ${u.uploadId}: archive ${u.archiveId} acknowledged but missing`);

    const trackerFailed = tracker.requests.filter(
      (r) => r.status === null || r.status === 429 || r.status >= 500,
    ).length;
    return {
      seed: options.seed,
      kills: options.kills,
      database: options.serverUrl ? 'postgres' : 'embedded',
      acknowledged: {
        companies: ackCompanies.length,
        scans: ackScans.length,
        cancels,
        uploads: ackUploads.length,
        ticketSends,
      },
      tracker: { requests: tracker.requests.length, failed: trackerFailed, issues: tracker.issues.count() },
      orphansRemovedByHousekeeping: orphans.length,
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
    await tracker.close();
    await release();
    await rm(work, { recursive: true, force: true });
  }
}
