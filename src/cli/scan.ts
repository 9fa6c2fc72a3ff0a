import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Command } from 'commander';
import tar from 'tar-stream';
import { CliError } from './http-client.ts';

type Env = Record<string, string | undefined>;

const SKIPPED_DIRS = new Set([
  'node_modules',
  '.git',
  '.hg',
  '.svn',
  'artifacts',
  'cache',
  'out',
  'coverage',
  '.next',
]);
const SEVERITY_RANK: Record<string, number> = {
  Info: 0,
  Unknown: 0,
  Low: 1,
  Medium: 2,
  High: 3,
  Critical: 4,
};

export interface ScanCommandOptions {
  url?: string;
  key?: string;
  type: string;
  format: 'sast' | 'sarif';
  output?: string;
  failOn: string;
  prefix?: string;
  timeout: string;
  idempotencyKey?: string;
}

interface Vulnerability {
  severity: string;
  name: string;
  location?: { file?: string; start_line?: number };
}

/** Packs a directory into a tar.gz (regular files only; dependency and VCS folders skipped). */
export async function packDirectory(root: string, target: string): Promise<{ files: number }> {
  const pack = tar.pack();
  const output = pipeline(pack, createGzip(), createWriteStream(target));
  let files = 0;
  async function walk(relative: string): Promise<void> {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(rel);
      } else if (entry.isFile()) {
        const full = path.join(root, rel);
        const { size, mode } = await stat(full);
        await new Promise<void>((resolve, reject) => {
          const sink = pack.entry({ name: rel, size, mode }, (err) => (err ? reject(err) : resolve()));
          createReadStream(full).on('error', reject).pipe(sink);
        });
        files += 1;
      }
    }
  }
  await walk('');
  pack.finalize();
  await output;
  return { files };
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function progress(message: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${message}`);
}

/**
 * The CI client: uploads a directory, runs a scan, waits, writes the report and exits non-zero
 * when a finding reaches the `--fail-on` severity.
 */
export async function runScanCommand(dir: string, options: ScanCommandOptions, env: Env): Promise<number> {
  const base = (options.url ?? env.VIGIL_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
  const key = options.key ?? env.VIGIL_API_KEY;
  if (!key)
    throw new CliError(
      'No service key: pass --key or set VIGIL_API_KEY (a vgl_sk_ key with scans:create and scans:read).',
    );
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const call = async (method: string, route: string, body?: unknown, extra: Record<string, string> = {}) => {
    let res: Response;
    try {
      res = await fetch(base + route, {
        method,
        headers: { ...headers, ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new CliError(`Cannot reach ${base}: ${(err as Error).message}. Check --url or VIGIL_URL.`);
    }
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (!res.ok)
      throw new CliError(
        `${method} ${route} failed with ${res.status} ${String(parsed.code ?? '')}: ${String(parsed.error ?? text)}`,
      );
    return parsed;
  };

  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-scan-'));
  try {
    const archive = path.join(work, 'source.tar.gz');
    progress('packing sources…');
    const { files } = await packDirectory(path.resolve(dir), archive);
    const { size } = await stat(archive);
    const sha256 = await sha256File(archive);
    process.stderr.write(`packed ${files} files (${size} bytes)\n`);

    const sessions = await call('POST', '/api/scanner/v1/source-uploads', {
      workspace: {
        name: path.basename(path.resolve(dir)),
        ...(options.prefix ? { prefix: options.prefix } : {}),
      },
      archives: [{ filename: 'source.tar.gz', sizeBytes: size }],
    });
    const upload = (
      sessions.uploads as Array<{
        uploadId: string;
        uploadUrl: string;
        method: string;
        headers: Record<string, string>;
      }>
    )[0]!;
    progress('uploading…');
    const put = await fetch(upload.uploadUrl, {
      method: upload.method,
      headers: { ...upload.headers, 'content-length': String(size) },
      body: Readable.toWeb(createReadStream(archive)) as unknown as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    if (!put.ok) throw new CliError(`Upload failed with ${put.status}: ${await put.text()}`);
    const completed = await call('POST', `/api/scanner/v1/source-uploads/${upload.uploadId}/complete`, {
      sha256,
    });

    const scan = await call(
      'POST',
      '/api/scanner/v1/scans',
      {
        type: options.type,
        workspaceId: sessions.workspaceId,
        scanSources: [{ kind: 'local', archiveId: completed.archiveId, sha256 }],
      },
      { 'idempotency-key': options.idempotencyKey ?? `vigil-cli-${randomUUID()}` },
    );
    process.stderr.write(`scan ${String(scan.id)} accepted\n`);

    const deadline = Date.now() + Number(options.timeout) * 1000;
    let status: Record<string, unknown> = scan;
    while (!['completed', 'failed', 'cancelled'].includes(String(status.status))) {
      if (Date.now() > deadline)
        throw new CliError(
          `The scan did not finish within ${options.timeout} s (status ${String(status.status)}).`,
        );
      await new Promise((r) => setTimeout(r, 1000));
      status = await call('GET', `/api/scanner/v1/scans/${String(scan.id)}`);
      const p = status.progress as { filesDone?: number; filesTotal?: number } | undefined;
      progress(`${String(status.status)} ${p?.filesDone ?? 0}/${p?.filesTotal ?? 0} files`);
    }
    progress('');
    if (status.status !== 'completed') {
      const error = status.error as { code?: string; message?: string } | undefined;
      throw new CliError(
        `The scan ${String(status.status)}: ${error?.code ?? ''} ${error?.message ?? ''}`.trim(),
      );
    }
    const report = await call(
      'GET',
      `/api/scanner/v1/scans/${String(scan.id)}/findings${options.format === 'sarif' ? '?format=sarif' : ''}`,
    );
    const text = `${JSON.stringify(report, null, 2)}\n`;
    if (options.output) await writeFile(options.output, text);
    else process.stdout.write(text);

    const sast =
      options.format === 'sarif'
        ? await call('GET', `/api/scanner/v1/scans/${String(scan.id)}/findings`)
        : report;
    const vulnerabilities = (sast.vulnerabilities as Vulnerability[]) ?? [];
    const threshold = SEVERITY_RANK[options.failOn] ?? Number.POSITIVE_INFINITY;
    const failing = vulnerabilities.filter((v) => (SEVERITY_RANK[v.severity] ?? 0) >= threshold);
    process.stderr.write(
      `${vulnerabilities.length} findings; ${failing.length} at or above ${options.failOn}\n`,
    );
    for (const v of failing.slice(0, 20)) {
      process.stderr.write(
        `  ${v.severity}: ${v.name} (${v.location?.file ?? '?'}:${v.location?.start_line ?? '?'})\n`,
      );
    }
    return failing.length > 0 ? 1 : 0;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `vigil scan <dir>`: the CI client. */
export function registerScanCommand(program: Command, env: Env): void {
  program
    .command('scan <dir>')
    .description('upload a directory to a Vigil server, scan it and write the report (for CI)')
    .option('--url <url>', 'server URL (default VIGIL_URL or http://localhost:3000)')
    .option('--key <key>', 'service key (default VIGIL_API_KEY)')
    .option('--type <type>', 'scan type', 'standard')
    .option('--format <format>', 'sast or sarif', 'sast')
    .option('--output <file>', 'write the report to a file instead of stdout')
    .option(
      '--fail-on <severity>',
      'exit 1 when a finding is at least this severe (Critical, High, Medium, Low, Info, never)',
      'High',
    )
    .option('--prefix <path>', 'workspace prefix (path within the repository)')
    .option('--timeout <seconds>', 'give up after this many seconds', '1800')
    .option('--idempotency-key <key>', 'reuse a key to retry the same scan safely')
    .action(async (dir: string, options: ScanCommandOptions) => {
      process.exitCode = await runScanCommand(dir, options, env);
    });
}
