import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { Command } from 'commander';
import type { Schemas, VigilClient } from '../sdk/index.ts';
import { CliError, UsageError } from './cli-error.ts';
import {
  failingFindings,
  isNew,
  renderTable,
  type Vulnerability,
  vulnerabilitiesOfSarif,
} from './scan-findings.ts';
import {
  collectFiles,
  DEFAULT_EXCLUDES,
  packFiles,
  SOLIDITY,
  selectionOf,
  sha256File,
} from './scan-sources.ts';
import {
  cliClient,
  configDir,
  expectOk,
  type RetryPolicy,
  realSleep,
  resolveConnection,
  type Sleep,
} from './settings.ts';

type Env = Record<string, string | undefined>;

export const SCAN_TYPES = ['lite', 'standard', 'audit'] as const;
export const REPORT_FORMATS = ['table', 'json', 'sarif', 'sast'] as const;
export const FAIL_ON = ['Critical', 'High', 'Medium', 'Low', 'Info', 'never'] as const;
/** The least confidence of a finding that `--fail-on` counts. */
export const FAIL_ON_CONFIDENCE = ['low', 'medium', 'high'] as const;
/** Local archives support the standard scan only (Scanner API v1: UNSUPPORTED_REPOSITORY_TYPE). */
const LOCAL_SCAN_TYPES = ['standard'];

export interface ScanCommandOptions {
  url?: string;
  key?: string;
  type?: string;
  format?: string;
  output?: string;
  failOn?: string;
  failOnConfidence?: string;
  includeTests?: boolean;
  prefix?: string;
  timeout?: string;
  idempotencyKey?: string;
  dryRun?: boolean;
  resume?: boolean;
  repo?: string;
  commit?: string;
  /** A scan id or a branch to compare with: `--fail-on` then counts what this scan brings. */
  baseline?: string;
  /** The branch the sources are on (the next scan of the branch compares with this one). */
  branch?: string;
  /** `--fail-on` counts every finding nobody dismissed, not only the new ones. */
  failOnAll?: boolean;
}

/** What the command needs from the world; tests pass their own. */
export interface ScanDeps {
  fetch?: (request: Request) => Promise<Response>;
  sleep?: Sleep;
  /** How long to wait between status polls. */
  pollIntervalMs?: number;
  stdout?: { write(text: string): unknown };
  stderr?: { write(text: string): unknown; isTTY?: boolean };
  retry?: Partial<RetryPolicy>;
}

interface ValidOptions {
  type: (typeof SCAN_TYPES)[number];
  format: (typeof REPORT_FORMATS)[number];
  failOn: (typeof FAIL_ON)[number];
  failOnConfidence: (typeof FAIL_ON_CONFIDENCE)[number];
  timeoutSeconds: number;
  /** Extension fields of createScan: branch and baseline. */
  comparison: { branch?: string; baselineScanId?: string; baselineBranch?: string; pullRequest?: boolean };
  source: { kind: 'local'; dir: string } | { kind: 'sourcehost'; repository: string; commit: string };
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (!found) throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${value}").`);
  return found;
}

/** Every check that needs no network and no packing. Throws UsageError (exit 2). */
export async function validateScanOptions(
  dir: string | undefined,
  options: ScanCommandOptions,
): Promise<ValidOptions> {
  const type = oneOf('--type', options.type ?? 'standard', SCAN_TYPES);
  const format = oneOf('--format', options.format ?? 'sast', REPORT_FORMATS);
  const failOn = oneOf('--fail-on', options.failOn ?? 'High', FAIL_ON);
  const failOnConfidence = oneOf(
    '--fail-on-confidence',
    options.failOnConfidence ?? 'medium',
    FAIL_ON_CONFIDENCE,
  );
  if (options.includeTests)
    throw new UsageError(
      `--include-tests is read by the server from the uploaded sources: put "include_tests = true" in a vigil.toml at the root of ${dir ?? 'the repository'} (see docs/ci.md).`,
    );
  const timeoutSeconds = Number(options.timeout ?? '1800');
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds <= 0)
    throw new UsageError(`--timeout must be a whole number of seconds above 0 (got "${options.timeout}").`);
  if (options.idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(options.idempotencyKey))
    throw new UsageError('--idempotency-key must be 1 to 255 printable characters without spaces.');
  const comparison = comparisonOf(options);

  if (options.repo !== undefined || options.commit !== undefined) {
    if (dir !== undefined)
      throw new UsageError(`Pass either a directory or --repo/--commit, not both (got "${dir}" and --repo).`);
    if (!options.repo || !options.commit)
      throw new UsageError('--repo owner/name and --commit SHA go together: pass both.');
    if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(options.repo))
      throw new UsageError(`--repo must look like owner/name (got "${options.repo}").`);
    if (!/^[0-9a-f]{40}$/i.test(options.commit))
      throw new UsageError(
        `--commit must be the full 40-character commit SHA (got "${options.commit}"); a branch or short SHA is not enough.`,
      );
    if (options.dryRun) throw new UsageError('--dry-run lists the files of a local directory; drop --repo.');
    return {
      type,
      format,
      failOn,
      failOnConfidence,
      timeoutSeconds,
      comparison,
      source: { kind: 'sourcehost', repository: options.repo, commit: options.commit.toLowerCase() },
    };
  }

  if (dir === undefined)
    throw new UsageError(
      'Say what to scan: a directory (vigil scan ./contracts) or --repo owner/name --commit SHA.',
    );
  if (!LOCAL_SCAN_TYPES.includes(type))
    throw new UsageError(
      `--type ${type} is not available for a local directory: local sources support ${LOCAL_SCAN_TYPES.join(', ')} only. Use --type standard, or scan a sourcehost commit with --repo and --commit.`,
    );
  const resolved = path.resolve(dir);
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(resolved);
  } catch {
    throw new UsageError(`${dir}: no such directory. Pass the folder holding your contracts.`);
  }
  if (!info.isDirectory())
    throw new UsageError(
      `${dir} is a file, not a directory. Pass the folder that contains it (vigil scan ${path.dirname(dir) || '.'}).`,
    );
  return {
    type,
    format,
    failOn,
    failOnConfidence,
    timeoutSeconds,
    comparison,
    source: { kind: 'local', dir: resolved },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `--branch` and `--baseline` as createScan fields. A scan with a baseline is a change under
 * review (a pull request): it is compared, and never moves the workspace's drafts.
 */
function comparisonOf(options: ScanCommandOptions): ValidOptions['comparison'] {
  const branchName = /^[^\s~^:?*[\\]{1,255}$/;
  if (options.branch !== undefined && !branchName.test(options.branch))
    throw new UsageError(`--branch must be a branch name (got "${options.branch}").`);
  const out: ValidOptions['comparison'] = options.branch ? { branch: options.branch } : {};
  if (options.baseline === undefined) return out;
  if (UUID.test(options.baseline)) return { ...out, baselineScanId: options.baseline, pullRequest: true };
  if (!branchName.test(options.baseline))
    throw new UsageError(`--baseline must be a scan id or a branch name (got "${options.baseline}").`);
  return { ...out, baselineBranch: options.baseline, pullRequest: true };
}

const formatBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;

/** A status line redrawn in place on a terminal; plain lines (only when they change) in CI logs. */
function statusReporter(stderr: NonNullable<ScanDeps['stderr']>) {
  let last = '';
  return {
    line(text: string) {
      if (stderr.isTTY) stderr.write(`\r\x1b[K${text}`);
      else if (text !== last) stderr.write(`${text}\n`);
      last = text;
    },
    done() {
      if (stderr.isTTY && last) stderr.write('\r\x1b[K');
      last = '';
    },
  };
}

/** The state `--resume` continues from, kept per directory and server until the run finishes. */
interface RunState {
  idempotencyKey: string;
  sha256?: string;
  archiveId?: string;
  workspaceId?: string;
  scanId?: string;
}

function stateFile(env: Env, server: string, what: string): string {
  const id = createHash('sha256').update(`${server}\n${what}`).digest('hex').slice(0, 24);
  return path.join(configDir(env), 'runs', `${id}.json`);
}

async function readState(file: string): Promise<RunState | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as RunState;
  } catch {
    return null;
  }
}

async function writeState(file: string, state: RunState): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, JSON.stringify(state), { mode: 0o600 });
}

/** The key a new scan is created under: `--idempotency-key`, or a fresh one. */
function idempotencyKeyOf(options: ScanCommandOptions): string {
  return options.idempotencyKey ?? `vigil-cli-${randomUUID()}`;
}

/** What every step of one `vigil scan` run shares. */
interface ScanRun {
  valid: ValidOptions;
  options: ScanCommandOptions;
  deps: ScanDeps;
  stdout: NonNullable<ScanDeps['stdout']>;
  stderr: NonNullable<ScanDeps['stderr']>;
  sleep: Sleep;
  status: ReturnType<typeof statusReporter>;
}

/**
 * `vigil scan`: validates, checks the key and credits, packs and uploads a directory (or names a
 * sourcehost commit), runs the scan, writes the report and returns the exit code: 0 clean, 1 a
 * finding at or above `--fail-on`. Usage and service errors throw (exit 2).
 */
export async function runScanCommand(
  dir: string | undefined,
  options: ScanCommandOptions,
  env: Env,
  deps: ScanDeps = {},
): Promise<number> {
  const stderr = deps.stderr ?? process.stderr;
  const run: ScanRun = {
    valid: await validateScanOptions(dir, options),
    options,
    deps,
    stdout: deps.stdout ?? process.stdout,
    stderr,
    sleep: deps.sleep ?? realSleep,
    status: statusReporter(stderr),
  };
  // Files first (no network): an empty directory is refused before anything is charged.
  const files = run.valid.source.kind === 'local' ? await localFiles(run, run.valid.source.dir, dir) : [];
  if (files === 'dry run') return 0;

  const connection = await resolveConnection({ url: options.url, key: options.key }, env);
  const api = cliClient(
    { url: connection.url, credential: serviceKey(connection.key) },
    {
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      retry: {
        sleep: run.sleep,
        onRetry: (reason, waitMs) => run.status.line(`${reason}; retrying in ${Math.ceil(waitMs / 1000)} s`),
        ...deps.retry,
      },
    },
  );
  await checkCredits(api, run);

  const what =
    run.valid.source.kind === 'local'
      ? `local:${run.valid.source.dir}:${run.valid.type}:${options.prefix ?? ''}`
      : `sourcehost:${run.valid.source.repository}@${run.valid.source.commit}:${run.valid.type}`;
  const runFile = stateFile(env, connection.url, what);
  const previous = options.resume ? await readState(runFile) : null;
  if (options.resume && !previous)
    stderr.write('Nothing to resume for this directory and server: starting a new scan.\n');
  const state: RunState = previous ?? { idempotencyKey: idempotencyKeyOf(options) };
  let scanId = state.scanId;
  if (scanId) stderr.write(`resuming scan ${scanId}\n`);
  else scanId = await createScan(api, run, files, state, runFile);

  const scan = await waitForScan(api, run, scanId);
  await rm(runFile, { force: true });
  if (scan.status !== 'completed') {
    throw new CliError(
      `The scan ${scan.status}${scan.error ? `: ${scan.error.message} (${scan.error.code})` : ''}.`,
    );
  }
  const vulnerabilities = await writeReport(api, run, scan);
  return exitCode(api, run, scanId, vulnerabilities);
}

/**
 * The files a local run packs, after .gitignore and the default excludes; `'dry run'` when
 * `--dry-run` listed them instead. A mistake in vigil.toml or .vigilignore (which the server reads
 * from the upload) is said here, before anything is charged. A directory without Solidity is
 * scanned for its secrets.
 */
async function localFiles(
  run: ScanRun,
  root: string,
  dir: string | undefined,
): Promise<Array<{ path: string; size: number }> | 'dry run'> {
  const files = await collectFiles(root);
  const selection = await selectionOf(root, files, run.options.prefix);
  if (run.options.dryRun) {
    for (const f of files) run.stdout.write(`${f.path}\t${f.size}\n`);
    const total = files.reduce((n, f) => n + f.size, 0);
    run.stderr.write(
      `${files.length} files (${formatBytes(total)}) would be packed; ${files.filter((f) => SOLIDITY.test(f.path)).length} Solidity files, ${selection.solidityReported} of them for the Solidity rules (tests, scripts and vendored packages are skipped; see docs/ci.md). Nothing was uploaded.\n`,
    );
    return 'dry run';
  }
  if (files.length === 0)
    throw new UsageError(
      `Nothing to scan in ${dir}: no files after .gitignore and the default excludes (${DEFAULT_EXCLUDES.join(' ')}). Nothing was uploaded or charged; run with --dry-run to see what would be packed.`,
    );
  return files;
}

/** The organization service key the run authenticates with; a missing or malformed one is a usage error. */
function serviceKey(key: string | undefined): string {
  if (!key)
    throw new UsageError(
      'No service key: pass --key, set VIGIL_API_KEY or run "vigil login" (a vgl_sk_ key with scans:create and scans:read).',
    );
  if (!/^vgl_sk_[0-9A-Za-z]{40}$/.test(key))
    throw new UsageError(
      key.startsWith('vgl_u_')
        ? 'That is a user token (vgl_u_…); vigil scan takes an organization service key (vgl_sk_…).'
        : `The service key is malformed: expected "vgl_sk_" and 40 letters and digits (got ${key.length} characters). Copy it again in full.`,
    );
  return key;
}

/**
 * The key and the credits, before packing anything. A key without credits:read is checked by the
 * scan request itself (402 before any work) instead.
 */
async function checkCredits(api: VigilClient, run: ScanRun): Promise<void> {
  const creditsAnswer = await api.GET('/api/scanner/v1/credits');
  if (creditsAnswer.response.status === 403) {
    run.stderr.write('the key cannot read credits (no credits:read scope): skipping the credit check\n');
    return;
  }
  const balances = expectOk(creditsAnswer, 'Checking the service key', {
    401: 'Check the key (--key, VIGIL_API_KEY or "vigil login"); a revoked or expired key needs replacing.',
  });
  const availability = balances.scanTypes[run.valid.type];
  if (!availability.available)
    throw new CliError(
      `A ${run.valid.type} scan is not available: ${availability.reason ?? 'not enough credits'} (costs ${availability.cost}, ${balances.remaining} remaining). Ask your manager for credits; nothing was uploaded.`,
    );
}

/**
 * Packs and uploads a local directory (unless an interrupted run already uploaded the same
 * sources) or names the sourcehost commit, then creates the scan under the run's idempotency key.
 * `state` is written to `runFile` after every step, so that `--resume` continues from the last.
 */
async function createScan(
  api: VigilClient,
  run: ScanRun,
  files: Array<{ path: string; size: number }>,
  state: RunState,
  runFile: string,
): Promise<string> {
  const { valid, options } = run;
  let scanSources: Schemas['CreateScanRequest']['scanSources'];
  if (valid.source.kind === 'local') {
    scanSources = [await uploadSources(api, run, valid.source.dir, files, state, runFile)];
  } else {
    scanSources = [{ kind: 'sourcehost', repository: valid.source.repository, commit: valid.source.commit }];
  }
  await writeState(runFile, state);
  const accepted = expectOk(
    await api.POST('/api/scanner/v1/scans', {
      params: { header: { 'idempotency-key': state.idempotencyKey } },
      body: {
        type: valid.type,
        ...(state.workspaceId ? { workspaceId: state.workspaceId } : {}),
        ...(valid.source.kind === 'sourcehost' && options.prefix ? { prefix: options.prefix } : {}),
        ...valid.comparison,
        scanSources,
      },
    }),
    'Creating the scan',
    {
      402: 'Ask your manager for credits.',
      409: 'This Idempotency-Key was used for another scan; run without --resume/--idempotency-key.',
      422: 'Check the scan type and the sources.',
    },
  );
  state.scanId = accepted.id;
  await writeState(runFile, state);
  run.stderr.write(`scan ${accepted.id} accepted (${valid.type})\n`);
  return accepted.id;
}

/** Packs the files into a gzip tarball and uploads it, or reuses the upload of an interrupted run. */
async function uploadSources(
  api: VigilClient,
  run: ScanRun,
  root: string,
  files: Array<{ path: string; size: number }>,
  state: RunState,
  runFile: string,
): Promise<{ kind: 'local'; archiveId: string; sha256: string }> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-scan-'));
  try {
    const archive = path.join(work, 'source.tar.gz');
    run.status.line(`packing ${files.length} files…`);
    await packFiles(root, files, archive);
    const { size } = await stat(archive);
    const sha256 = await sha256File(archive);
    run.status.done();
    run.stderr.write(`packed ${files.length} files (${formatBytes(size)})\n`);
    if (state.archiveId && state.sha256 === sha256) {
      run.stderr.write('resuming: the sources are unchanged and already uploaded\n');
    } else {
      if (state.archiveId) {
        // The sources changed since the interrupted run: this is a new scan with a new key.
        state.idempotencyKey = idempotencyKeyOf(run.options);
      }
      const uploaded = await upload(api, run.deps, run.status, run.stderr, {
        archive,
        size,
        sha256,
        name: path.basename(root),
        prefix: run.options.prefix,
      });
      Object.assign(state, { archiveId: uploaded.archiveId, sha256, workspaceId: uploaded.workspaceId });
      await writeState(runFile, state);
    }
    return { kind: 'local', archiveId: state.archiveId!, sha256 };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

type ScanStatus = Schemas['ScanStatus'];

/** Polls the scan until it ends (completed, failed or cancelled), within `--timeout`. */
async function waitForScan(api: VigilClient, run: ScanRun, scanId: string): Promise<ScanStatus> {
  const params = { params: { path: { scanId } } };
  const pollMs = run.deps.pollIntervalMs ?? 1000;
  let waited = 0;
  let current = expectOk(await api.GET('/api/scanner/v1/scans/{scanId}', params), 'Reading the scan');
  const describe = (s: typeof current) =>
    `scan ${s.status}: ${s.progress.filesDone}/${s.progress.filesTotal} files, ${s.findingsCount} findings`;
  run.status.line(describe(current));
  while (!['completed', 'failed', 'cancelled'].includes(current.status)) {
    if (waited >= run.valid.timeoutSeconds * 1000) {
      run.status.done();
      throw new CliError(
        `The scan did not finish within ${run.valid.timeoutSeconds} s (status ${current.status}). It keeps running: continue waiting with "vigil scan … --resume" or read it with "vigil scans show ${scanId}".`,
      );
    }
    await run.sleep(pollMs);
    waited += pollMs;
    current = expectOk(await api.GET('/api/scanner/v1/scans/{scanId}', params), 'Reading the scan');
    run.status.line(describe(current));
  }
  run.status.done();
  return current;
}

/**
 * Reads one report (the SARIF one for --format sarif, the SAST one otherwise), writes it in the
 * asked format to --output or stdout, and returns its findings: the exit code is read from them.
 */
async function writeReport(api: VigilClient, run: ScanRun, scan: ScanStatus): Promise<Vulnerability[]> {
  const { valid } = run;
  const scanId = scan.id;
  let text: string;
  let vulnerabilities: Vulnerability[];
  if (valid.format === 'sarif') {
    const sarif = expectOk(
      await api.GET('/api/scanner/v1/scans/{scanId}/findings', {
        params: { path: { scanId }, query: { format: 'sarif' } },
      }),
      'Reading the SARIF report',
    );
    vulnerabilities = vulnerabilitiesOfSarif(sarif);
    text = `${JSON.stringify(sarif, null, 2)}\n`;
  } else {
    const sast = expectOk(
      await api.GET('/api/scanner/v1/scans/{scanId}/findings', { params: { path: { scanId } } }),
      'Reading the findings',
    ) as { vulnerabilities: Vulnerability[] };
    vulnerabilities = sast.vulnerabilities;
    if (valid.format === 'sast') text = `${JSON.stringify(sast, null, 2)}\n`;
    else if (valid.format === 'json')
      text = `${JSON.stringify({ scan, failOn: valid.failOn, failOnConfidence: valid.failOnConfidence, vulnerabilities }, null, 2)}\n`;
    else text = renderTable(vulnerabilities);
  }
  if (run.options.output) await writeFile(run.options.output, text);
  else run.stdout.write(text);
  return vulnerabilities;
}

/**
 * 1 when a finding nobody dismissed is at or above `--fail-on` with at least
 * `--fail-on-confidence` (against a baseline, only the new ones unless `--fail-on-all`), 0
 * otherwise; says which on stderr, after the comparison with the baseline.
 */
async function exitCode(
  api: VigilClient,
  run: ScanRun,
  scanId: string,
  vulnerabilities: Vulnerability[],
): Promise<number> {
  const { valid, options, stderr } = run;
  const onlyNew = options.baseline !== undefined && !options.failOnAll;
  const failing = failingFindings(vulnerabilities, { ...valid, onlyNew });
  const compared = await api.GET('/api/scanner/v1/scans/{scanId}/comparison', {
    params: { path: { scanId } },
  });
  if (compared.data)
    stderr.write(
      `${compared.data.summary} (${compared.data.baselineScanId ? `against scan ${compared.data.baselineScanId}` : 'no baseline'})\n`,
    );
  const scope = onlyNew ? ' new' : '';
  stderr.write(
    valid.failOn === 'never'
      ? `${vulnerabilities.length} findings (--fail-on never)\n`
      : `${vulnerabilities.length} findings; ${failing.length}${scope} at or above ${valid.failOn}${valid.failOnConfidence === 'low' ? '' : ` with ${valid.failOnConfidence} confidence or more`}\n`,
  );
  for (const v of failing.slice(0, 20))
    stderr.write(
      `  ${isNew(v) ? 'new ' : ''}${v.severity}: ${v.name} (${v.location.file ?? '?'}:${v.location.start_line ?? '?'})\n`,
    );
  return failing.length > 0 ? 1 : 0;
}

/** Declares the archive, PUTs it with a progress bar (TTY) or plain lines, and completes the upload. */
async function upload(
  api: VigilClient,
  deps: ScanDeps,
  status: ReturnType<typeof statusReporter>,
  stderr: NonNullable<ScanDeps['stderr']>,
  archive: { archive: string; size: number; sha256: string; name: string; prefix?: string | undefined },
): Promise<{ archiveId: string; workspaceId: string }> {
  const sessions = expectOk(
    await api.POST('/api/scanner/v1/source-uploads', {
      body: {
        workspace: { name: archive.name, ...(archive.prefix ? { prefix: archive.prefix } : {}) },
        archives: [{ filename: 'source.tar.gz', sizeBytes: archive.size }],
      },
    }),
    'Starting the upload',
    { 413: 'The archive is larger than the server accepts; exclude build output with .gitignore.' },
  );
  const target = sessions.uploads[0];
  if (!target) throw new CliError('The server returned no upload URL.');
  let sent = 0;
  const width = 30;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length;
      if (stderr.isTTY) {
        const filled = Math.round((sent / archive.size) * width);
        status.line(
          `uploading [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${Math.floor((sent / archive.size) * 100)}% ${formatBytes(sent)}/${formatBytes(archive.size)}`,
        );
      }
      callback(null, chunk);
    },
  });
  if (!stderr.isTTY) stderr.write(`uploading ${formatBytes(archive.size)}\n`);
  const body = Readable.toWeb(createReadStream(archive.archive).pipe(counter));
  const doFetch = deps.fetch ?? ((request: Request) => globalThis.fetch(request));
  let put: Response;
  try {
    put = await doFetch(
      new Request(target.uploadUrl, {
        method: target.method,
        headers: { ...target.headers, 'content-length': String(archive.size) },
        body,
        duplex: 'half',
      } as RequestInit),
    );
  } catch (err) {
    throw new CliError(
      `The upload to ${new URL(target.uploadUrl).origin} failed (${(err as Error).message}); run again with --resume.`,
    );
  }
  status.done();
  if (!put.ok)
    throw new CliError(`The upload failed (${put.status}): ${await put.text()}. Run again with --resume.`);
  stderr.write('uploaded\n');
  const completed = expectOk(
    await api.POST('/api/scanner/v1/source-uploads/{uploadId}/complete', {
      params: { path: { uploadId: target.uploadId } },
      body: { sha256: archive.sha256 },
    }),
    'Completing the upload',
  );
  return { archiveId: completed.archiveId, workspaceId: sessions.workspaceId };
}

/** `vigil scan [dir]`: the CI client. */
export function registerScanCommand(program: Command, env: Env): void {
  program
    .command('scan [dir]')
    .description(
      'scan a directory (uploaded) or a sourcehost commit on a Vigil server and write the report; exit 0 clean, 1 findings at or above --fail-on, 2 usage or service error',
    )
    .option('--url <url>', 'server URL (default VIGIL_URL, the login, or http://localhost:3000)')
    .option('--key <key>', 'service key vgl_sk_… (default VIGIL_API_KEY or the login)')
    .option('--type <type>', `scan type: ${SCAN_TYPES.join(', ')} (local directories: standard)`, 'standard')
    .option('--format <format>', `report format: ${REPORT_FORMATS.join(', ')}`, 'sast')
    .option('--output <file>', 'write the report to a file instead of stdout')
    .option('--fail-on <severity>', `exit 1 at or above this severity: ${FAIL_ON.join(', ')}`, 'High')
    .option(
      '--fail-on-confidence <confidence>',
      `count only findings of this confidence or more for --fail-on: ${FAIL_ON_CONFIDENCE.join(', ')}`,
      'medium',
    )
    .option(
      '--include-tests',
      'not taken here: the server reads include_tests = true from vigil.toml in the sources (docs/ci.md)',
    )
    .option('--prefix <path>', 'workspace prefix (path within the repository)')
    .option('--timeout <seconds>', 'stop waiting after this many seconds', '1800')
    .option('--idempotency-key <key>', 'the Idempotency-Key of the scan (default: a new one per run)')
    .option('--dry-run', 'list the files that would be packed and stop (no network)')
    .option('--resume', 'continue the interrupted run of the same directory, with the same Idempotency-Key')
    .option('--repo <owner/name>', 'scan a commit of a sourcehost repository instead of a directory')
    .option('--commit <sha>', 'the full commit SHA for --repo')
    .option(
      '--branch <name>',
      'the branch of the sources: the next scan of the branch compares with this one',
    )
    .option(
      '--baseline <scan id | branch>',
      'compare with this scan, or the latest completed scan of this branch: --fail-on counts new findings',
    )
    .option(
      '--fail-on-all',
      'with --baseline, --fail-on counts every finding nobody dismissed, not only the new ones',
    )
    .action(async (dir: string | undefined, options: ScanCommandOptions) => {
      try {
        process.exitCode = await runScanCommand(dir, options, env);
      } catch (err) {
        // Exit 1 means "findings"; every error of a scan run is 2.
        if (err instanceof CliError) throw Object.assign(err, { exitCode: 2 });
        throw err;
      }
    });
}
