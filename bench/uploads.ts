/**
 * Upload benchmark: a real tar.gz of source files (the project's node_modules, packed as many
 * times as needed) is PUT to the embedded store of the real app listening on 127.0.0.1, then
 * completed (verified and stored). Measures MB/s of each step and the process's peak RSS
 * (sampled every 50 ms), and, on the same file, the practical limit: `sha256sum` plus
 * `tar -tzf`, whose combined speed is size / (t_sha + t_tar). Two sizes are run so that memory
 * can be compared against archive size.
 *
 * Run: `npm run bench:uploads [-- --sizes 50,200 --repeats 3]` (medians of the rounds). Writes bench/results/uploads.json.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';
import pino from 'pino';
import tarStream from 'tar-stream';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';

const MB = 1_000_000;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_EXTENSIONS = /\.(js|mjs|cjs|ts|mts|cts|json|md|sol|tsx|jsx|css|html|yml|yaml|txt)$/;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

async function listSourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await listSourceFiles(path, out);
    else if (entry.isFile() && SOURCE_EXTENSIONS.test(entry.name)) out.push(path);
  }
  return out;
}

/** Packs node_modules' source files, pass after pass, until the gzip output reaches `targetBytes`. */
async function buildArchive(
  file: string,
  targetBytes: number,
): Promise<{ sizeBytes: number; files: number; expandedBytes: number }> {
  const sources = await listSourceFiles(join(root, 'node_modules'));
  const pack = tarStream.pack();
  let compressed = 0;
  let files = 0;
  let expanded = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      compressed += chunk.length;
      cb(null, chunk);
    },
  });
  const writing = pipeline(pack, createGzip({ level: 6 }), counter, createWriteStream(file));
  let lastReport = 0;
  // node_modules files are small (a few KB): consecutive files are joined into entries of about
  // 64 KB, so that 200 MB stay well inside the verifier's entry limit, as a real source tree would.
  const addEntry = async (name: string, content: Buffer) => {
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name, size: content.length, mode: 0o644 }, content, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    files += 1;
    expanded += content.length;
  };
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  outer: for (let pass = 0; ; pass += 1) {
    for (const source of sources) {
      if (compressed >= targetBytes) break outer;
      const content = await readFile(source);
      pending.push(content);
      pendingBytes += content.length;
      if (pendingBytes < 64 * 1024) continue;
      await addEntry(`pass${pass}/${relative(root, source)}`, Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      if (compressed - lastReport > 20 * MB) {
        lastReport = compressed;
        process.stdout.write(
          `\r  packing: ${(compressed / MB).toFixed(0)} / ${(targetBytes / MB).toFixed(0)} MB`,
        );
      }
    }
  }
  if (pending.length > 0) await addEntry('last', Buffer.concat(pending));
  pack.finalize();
  await writing;
  process.stdout.write('\n');
  return { sizeBytes: (await stat(file)).size, files, expandedBytes: expanded };
}

interface Measured<T = unknown> {
  result: T;
  seconds: number;
  peakRssMB: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Peak RSS while `run` runs, sampled every 50 ms. */
async function withPeakRss<T>(run: () => Promise<T>): Promise<Measured<T>> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const started = process.hrtime.bigint();
  try {
    const result = await run();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, seconds, peakRssMB: peak / MB };
  } finally {
    clearInterval(timer);
  }
}

async function timeCommand(command: string, args: string[]): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

interface SizeResult {
  targetMB: number;
  sizeBytes: number;
  files: number;
  rounds: number;
  put: { seconds: number; mbPerSecond: number; peakRssMB: number };
  complete: {
    seconds: number;
    mbPerSecond: number;
    peakRssMB: number;
    fileCount: number;
    expandedBytes: number;
  };
  reference: { sha256sumSeconds: number; tarListSeconds: number; combinedMbPerSecond: number };
  completeVsReference: number;
  baselineRssMB: number;
}

/**
 * The archive of `targetMB`, built in a child process (so that packing leaves nothing in this
 * process's memory) and kept in the OS temporary directory for later runs.
 */
async function archiveOf(targetMB: number): Promise<{ file: string; sizeBytes: number; files: number }> {
  const cacheDir = join(tmpdir(), 'vigil-bench-uploads-cache');
  await mkdir(cacheDir, { recursive: true });
  const file = join(cacheDir, `source-${targetMB}.tar.gz`);
  const meta = `${file}.json`;
  const cached = await readFile(meta, 'utf8').catch(() => null);
  if (cached) return { file, ...(JSON.parse(cached) as { sizeBytes: number; files: number }) };
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), '--build', file, String(targetMB)],
      {
        stdio: 'inherit',
      },
    );
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`archive build exited with ${code}`)),
    );
  });
  return { file, ...(JSON.parse(await readFile(meta, 'utf8')) as { sizeBytes: number; files: number }) };
}

async function main(): Promise<void> {
  const loadAverageBefore = loadavg().map((l) => Math.round(l * 100) / 100);
  const buildIndex = process.argv.indexOf('--build');
  if (buildIndex >= 0) {
    const file = process.argv[buildIndex + 1]!;
    const built = await buildArchive(`${file}.part`, Number(process.argv[buildIndex + 2]) * MB);
    await rename(`${file}.part`, file);
    await writeFile(`${file}.json`, JSON.stringify(built));
    return;
  }
  const sizes = arg('sizes', '50,200').split(',').map(Number);
  const repeats = Number(arg('repeats', '3'));
  const work = await mkdtemp(join(tmpdir(), 'vigil-bench-uploads-'));
  const dataDir = join(work, 'data');
  await mkdir(dataDir, { recursive: true });
  // As root the embedded PostgreSQL runs as "postgres", which must be able to enter the folder.
  await chmod(work, 0o755);
  console.log(`work dir ${work}`);
  const config = loadConfig(
    {
      VIGIL_DATA_DIR: dataDir,
      VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
      VIGIL_UPLOAD_MAX_BYTES: String(1024 * 1024 * 1024),
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
    },
    work,
  );
  const container = await createContainer(config, { log: pino({ level: 'silent' }) });
  const adminToken = `vgl_u_${randomBytes(30).toString('hex').slice(0, 40)}`;
  await container.services.admin.bootstrapAdmin({ token: adminToken });
  const app = await buildApp(container);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const company = (await (
    await fetch(`${base}/api/v0/admin/companies`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'Bench', handle: `bench-${Date.now()}` }),
    })
  ).json()) as { id: string };
  const { key } = (await (
    await fetch(`${base}/api/v0/companies/${company.id}/service-keys`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'bench', scopes: ['scans:create'] }),
    })
  ).json()) as { key: string };
  const service = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const results: SizeResult[] = [];
  try {
    for (const targetMB of sizes) {
      console.log(`[${targetMB} MB] archive of node_modules sources (built once, then cached)`);
      const built = await archiveOf(targetMB);
      const file = built.file;
      console.log(`[${targetMB} MB] ${(built.sizeBytes / MB).toFixed(1)} MB, ${built.files} files`);

      const mb = built.sizeBytes / MB;
      const runs: Array<{
        put: Measured;
        complete: Measured<{ fileCount: number; expandedBytes: number }>;
        sha: number;
        tar: number;
        baseline: number;
      }> = [];
      for (let round = 1; round <= repeats; round += 1) {
        const createdRes = await fetch(`${base}/api/scanner/v1/source-uploads`, {
          method: 'POST',
          headers: service,
          body: JSON.stringify({
            workspace: { name: 'bench' },
            archives: [{ filename: 'source.tar.gz', sizeBytes: built.sizeBytes }],
          }),
        });
        if (createdRes.status !== 200)
          throw new Error(`createSourceUploads → ${createdRes.status}: ${await createdRes.text()}`);
        const created = (await createdRes.json()) as {
          uploads: Array<{ uploadId: string; uploadUrl: string; headers: Record<string, string> }>;
        };
        const session = created.uploads[0]!;
        const baseline = process.memoryUsage().rss / MB;
        console.log(`[${targetMB} MB] round ${round}/${repeats}: PUT`);
        const put = await withPeakRss(async () => {
          const res = await fetch(session.uploadUrl, {
            method: 'PUT',
            headers: { ...session.headers, 'content-length': String(built.sizeBytes) },
            body: Readable.toWeb(createReadStream(file)) as ReadableStream,
            duplex: 'half',
          } as RequestInit);
          if (res.status !== 200) throw new Error(`PUT → ${res.status}: ${await res.text()}`);
          return res.json();
        });
        console.log(`[${targetMB} MB] round ${round}/${repeats}: complete`);
        const complete = await withPeakRss(async () => {
          const res = await fetch(`${base}/api/scanner/v1/source-uploads/${session.uploadId}/complete`, {
            method: 'POST',
            headers: service,
            body: '{}',
          });
          if (res.status !== 200) throw new Error(`complete → ${res.status}: ${await res.text()}`);
          return (await res.json()) as { fileCount: number; expandedBytes: number };
        });
        console.log(`[${targetMB} MB] round ${round}/${repeats}: sha256sum and tar -tzf`);
        const sha = await timeCommand('sha256sum', [file]);
        const tar = await timeCommand('tar', ['-tzf', file]);
        runs.push({ put, complete, sha, tar, baseline });
      }
      // Medians: the machine may be shared, and one disturbed round should not decide.
      const putSeconds = median(runs.map((r) => r.put.seconds));
      const completeSeconds = median(runs.map((r) => r.complete.seconds));
      const sha = median(runs.map((r) => r.sha));
      const tarList = median(runs.map((r) => r.tar));
      const combined = mb / (sha + tarList);
      const completeSpeed = mb / completeSeconds;
      const baselineRssMB = Math.min(...runs.map((r) => r.baseline));
      const last = runs[runs.length - 1]!;
      results.push({
        targetMB,
        sizeBytes: built.sizeBytes,
        files: built.files,
        rounds: repeats,
        put: {
          seconds: putSeconds,
          mbPerSecond: mb / putSeconds,
          peakRssMB: Math.max(...runs.map((r) => r.put.peakRssMB)),
        },
        complete: {
          seconds: completeSeconds,
          mbPerSecond: completeSpeed,
          peakRssMB: Math.max(...runs.map((r) => r.complete.peakRssMB)),
          fileCount: last.complete.result.fileCount,
          expandedBytes: last.complete.result.expandedBytes,
        },
        reference: { sha256sumSeconds: sha, tarListSeconds: tarList, combinedMbPerSecond: combined },
        completeVsReference: completeSpeed / combined,
        baselineRssMB,
      });
    }
  } finally {
    await app.close();
    await container.close();
    await rm(work, { recursive: true, force: true });
  }

  const fmt = (n: number, d = 1) => n.toFixed(d);
  console.log('');
  console.log(
    '| archive | PUT MB/s | complete MB/s | sha256sum+tar -tzf MB/s | complete / reference | baseline RSS | peak RSS PUT (growth) | peak RSS complete (growth) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${fmt(r.sizeBytes / MB)} MB (${r.files} files) | ${fmt(r.put.mbPerSecond)} | ${fmt(r.complete.mbPerSecond)} | ${fmt(r.reference.combinedMbPerSecond)} | ${fmt(r.completeVsReference, 2)}× | ${fmt(r.baselineRssMB, 0)} MB | ${fmt(r.put.peakRssMB, 0)} MB (+${fmt(r.put.peakRssMB - r.baselineRssMB, 0)}) | ${fmt(r.complete.peakRssMB, 0)} MB (+${fmt(r.complete.peakRssMB - r.baselineRssMB, 0)}) |`,
    );
  }
  const out = join(root, 'bench', 'results', 'uploads.json');
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, store: 'fs', database: config.database.kind, target: 'complete ≥ 0.8 × (size / (t_sha256sum + t_tar_tzf)); a 50 MB PUT raises peak RSS by ≤ 64 MB; peak RSS independent of archive size', loadAverageBefore, loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100), results }, null, 2)}\n`,
  );
  console.log(`wrote ${relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
