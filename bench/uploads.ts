/**
 * Upload benchmark: a real tar.gz of source files (the project's node_modules, packed as many
 * times as needed) is PUT by curl (a process of its own, so that only the server's memory is
 * counted) to the embedded store of the real app listening on 127.0.0.1, then completed
 * (verified and stored). Measures MB/s and CPU seconds of each step and the process's peak RSS,
 * V8 heap and ArrayBuffer memory (sampled every 20 ms), and, on the same file, the practical
 * limit: `sha256sum` plus `tar -tzf`, whose combined speed is size / (t_sha + t_tar), with their
 * CPU seconds (gzip included). Two sizes are run so that memory can be compared against archive
 * size. The wall-clock ratio moves with the machine's load; the CPU ratio much less.
 *
 * Run: `npm run bench:uploads [-- --sizes 50,200 --repeats 3 --client curl|fetch --live-heap-mb 0]`
 * (medians of the rounds). `--live-heap-mb` holds that much of small live objects in the process
 * meanwhile, as an API process holds its kept pages and caches. Writes bench/results/uploads.json
 * (BENCH_RESULTS: an absolute path outside bench/results).
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
import { benchResultsPath } from './results-path.ts';

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
  /** CPU seconds (user + system) of this process, its thread pool included, during the step. */
  cpuSeconds: number;
  peakRssMB: number;
  /** Peaks of process.memoryUsage(): V8 heap in use, and Buffers/ArrayBuffers outside the heap. */
  peakHeapUsedMB: number;
  peakArrayBuffersMB: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Peak memory while `run` runs, sampled every 20 ms, and the CPU time it took. */
async function withPeakRss<T>(run: () => Promise<T>): Promise<Measured<T>> {
  const peak = { rss: 0, heapUsed: 0, arrayBuffers: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed);
    peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
  };
  sample();
  const timer = setInterval(sample, 20);
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  try {
    const result = await run();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    sample();
    return {
      result,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMB: peak.rss / MB,
      peakHeapUsedMB: peak.heapUsed / MB,
      peakArrayBuffersMB: peak.arrayBuffers / MB,
    };
  } finally {
    clearInterval(timer);
  }
}

/** Runs a command; wall seconds, and CPU seconds of it and its children (`tar -z` runs gzip). */
async function timeCommand(
  command: string,
  args: string[],
): Promise<{ seconds: number; cpuSeconds: number }> {
  const started = process.hrtime.bigint();
  let report = '';
  await new Promise<void>((resolve, reject) => {
    // GNU time writes "user system" of the command and everything it waited for to stderr.
    const child = spawn('/usr/bin/time', ['-f', '%U %S', command, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (chunk: Buffer) => {
      report += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${report}`)),
    );
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const [user, system] = report.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { seconds, cpuSeconds: (user ?? Number.NaN) + (system ?? Number.NaN) };
}

/**
 * PUTs `file` with curl, in its own process, so that the client's buffers are not counted in
 * the server's memory.
 */
async function curlPut(url: string, headers: Record<string, string>, file: string): Promise<unknown> {
  let out = '';
  let err = '';
  const args = ['-sS', '--fail-with-body', '-T', file, '-H', 'expect:'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  await new Promise<void>((resolve, reject) => {
    const child = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`curl PUT exited with ${code}: ${err} ${out}`)),
    );
  });
  return JSON.parse(out);
}

/**
 * PUTs `file` with this process's fetch (`--client fetch`): what the benchmark did before curl,
 * kept to show how much of the measured memory such a client adds.
 */
async function fetchPut(
  url: string,
  headers: Record<string, string>,
  file: string,
  sizeBytes: number,
): Promise<unknown> {
  const res = await fetch(url, {
    method: 'PUT',
    headers: { ...headers, 'content-length': String(sizeBytes) },
    body: Readable.toWeb(createReadStream(file)) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  if (res.status !== 200) throw new Error(`PUT → ${res.status}: ${await res.text()}`);
  return res.json();
}

interface StepResult {
  seconds: number;
  mbPerSecond: number;
  cpuSeconds: number;
  peakRssMB: number;
  peakHeapUsedMB: number;
  peakArrayBuffersMB: number;
}

interface SizeResult {
  targetMB: number;
  sizeBytes: number;
  files: number;
  rounds: number;
  put: StepResult;
  complete: StepResult & { fileCount: number; expandedBytes: number };
  reference: {
    sha256sumSeconds: number;
    tarListSeconds: number;
    combinedMbPerSecond: number;
    sha256sumCpuSeconds: number;
    tarListCpuSeconds: number;
  };
  /** Wall-clock speed of completion over the reference's, medians of the rounds. */
  completeVsReference: number;
  /** The same ratio per round (each round's completion against that round's reference). */
  completeVsReferenceRounds: number[];
  /** Reference CPU seconds over completion CPU seconds: the ratio without the machine's load. */
  completeVsReferenceCpu: number;
  /** RSS before the first round's PUT (the lowest of the rounds). */
  baselineRssMB: number;
  /**
   * The largest rise of RSS above the RSS just before the PUT of the same round, during the PUT
   * and during the completion. Each round against its own start: a process's RSS also falls
   * between rounds (start-up garbage collected, memory returned), and a peak of one round
   * measured against a lower start of another would count that fall as growth.
   */
  rssGrowthMB: { put: number; complete: number };
  loadAverageAtStart: number[];
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
  const client = arg('client', 'curl');
  if (client !== 'curl' && client !== 'fetch') throw new Error('--client is curl or fetch');
  // What an API process holds between requests (kept pages, credentials, caches): live objects
  // every full collection of its heap must mark. `vigil serve` under `bench:api` held 56–60 MB.
  const liveHeapMB = Number(arg('live-heap-mb', '0'));
  const liveHeap: Array<{ n: number; text: string }> = [];
  for (let i = 0; i < liveHeapMB * 5_000; i += 1)
    liveHeap.push({ n: i, text: `kept ${i} `.padEnd(150, '.') });
  if (liveHeapMB > 0)
    console.log(`holding ${liveHeap.length.toLocaleString('en-US')} live objects (about ${liveHeapMB} MB)`);
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
      const loadAverageAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
      const runs: Array<{
        put: Measured;
        complete: Measured<{ fileCount: number; expandedBytes: number }>;
        sha: { seconds: number; cpuSeconds: number };
        tar: { seconds: number; cpuSeconds: number };
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
        // No forced collection here: a gc() call leaves V8 running a full mark-compact every few
        // hundred milliseconds for the rest of the round (see docs/performance.md, "Uploads").
        const baseline = process.memoryUsage().rss / MB;
        console.log(`[${targetMB} MB] round ${round}/${repeats}: PUT`);
        const put = await withPeakRss(() =>
          client === 'curl'
            ? curlPut(session.uploadUrl, session.headers, file)
            : fetchPut(session.uploadUrl, session.headers, file, built.sizeBytes),
        );
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
        console.log(
          `[${targetMB} MB] round ${round}/${repeats}: complete ${complete.seconds.toFixed(2)} s (cpu ${complete.cpuSeconds.toFixed(2)} s), sha256sum ${sha.seconds.toFixed(2)} s + tar -tzf ${tar.seconds.toFixed(2)} s (cpu ${(sha.cpuSeconds + tar.cpuSeconds).toFixed(2)} s), load ${loadavg()[0]!.toFixed(2)}`,
        );
      }
      // Medians: the machine may be shared, and one disturbed round should not decide.
      const step = (m: Measured[]): StepResult => {
        const seconds = median(m.map((r) => r.seconds));
        return {
          seconds,
          mbPerSecond: mb / seconds,
          cpuSeconds: median(m.map((r) => r.cpuSeconds)),
          peakRssMB: Math.max(...m.map((r) => r.peakRssMB)),
          peakHeapUsedMB: Math.max(...m.map((r) => r.peakHeapUsedMB)),
          peakArrayBuffersMB: Math.max(...m.map((r) => r.peakArrayBuffersMB)),
        };
      };
      const put = step(runs.map((r) => r.put));
      const complete = step(runs.map((r) => r.complete));
      const sha = median(runs.map((r) => r.sha.seconds));
      const tarList = median(runs.map((r) => r.tar.seconds));
      const shaCpu = median(runs.map((r) => r.sha.cpuSeconds));
      const tarCpu = median(runs.map((r) => r.tar.cpuSeconds));
      const combined = mb / (sha + tarList);
      const baselineRssMB = Math.min(...runs.map((r) => r.baseline));
      const last = runs[runs.length - 1]!;
      results.push({
        targetMB,
        sizeBytes: built.sizeBytes,
        files: built.files,
        rounds: repeats,
        put,
        complete: {
          ...complete,
          fileCount: last.complete.result.fileCount,
          expandedBytes: last.complete.result.expandedBytes,
        },
        reference: {
          sha256sumSeconds: sha,
          tarListSeconds: tarList,
          combinedMbPerSecond: combined,
          sha256sumCpuSeconds: shaCpu,
          tarListCpuSeconds: tarCpu,
        },
        completeVsReference: complete.mbPerSecond / combined,
        completeVsReferenceRounds: runs.map((r) => (r.sha.seconds + r.tar.seconds) / r.complete.seconds),
        completeVsReferenceCpu: (shaCpu + tarCpu) / complete.cpuSeconds,
        baselineRssMB,
        rssGrowthMB: {
          put: Math.max(...runs.map((r) => r.put.peakRssMB - r.baseline)),
          complete: Math.max(...runs.map((r) => r.complete.peakRssMB - r.baseline)),
        },
        loadAverageAtStart,
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
    '| archive | PUT MB/s | complete MB/s | sha256sum+tar -tzf MB/s | complete / reference (rounds) | CPU s: complete / reference | baseline RSS | peak RSS PUT (growth in its round) | peak RSS complete (growth in its round) | peak arrayBuffers PUT / complete | load at start |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${fmt(r.sizeBytes / MB)} MB (${r.files} files) | ${fmt(r.put.mbPerSecond)} | ${fmt(r.complete.mbPerSecond)} | ${fmt(r.reference.combinedMbPerSecond)} | ${fmt(r.completeVsReference, 2)}× (${r.completeVsReferenceRounds.map((x) => fmt(x, 2)).join(', ')}) | ${fmt(r.complete.cpuSeconds, 2)} / ${fmt(r.reference.sha256sumCpuSeconds + r.reference.tarListCpuSeconds, 2)} | ${fmt(r.baselineRssMB, 0)} MB | ${fmt(r.put.peakRssMB, 0)} MB (+${fmt(r.rssGrowthMB.put, 0)}) | ${fmt(r.complete.peakRssMB, 0)} MB (+${fmt(r.rssGrowthMB.complete, 0)}) | ${fmt(r.put.peakArrayBuffersMB, 0)} / ${fmt(r.complete.peakArrayBuffersMB, 0)} MB | ${r.loadAverageAtStart.join(' ')} |`,
    );
  }
  const out = benchResultsPath('uploads');
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, client, liveHeapMB, liveObjects: liveHeap.length, store: 'fs', database: config.database.kind, target: 'complete ≥ 0.8 × (size / (t_sha256sum + t_tar_tzf)); a 50 MB PUT raises peak RSS by ≤ 64 MB (above the RSS at the start of its round); peak RSS independent of archive size', loadAverageBefore, loadAverageAfter: loadavg().map((l) => Math.round(l * 100) / 100), results }, null, 2)}\n`,
  );
  console.log(`wrote ${relative(process.cwd(), out)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
