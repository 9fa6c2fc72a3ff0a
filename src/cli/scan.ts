import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { Command } from 'commander';
import ignore, { type Ignore } from 'ignore';
import tar from 'tar-stream';
import { REPORT_SEVERITY } from '../engine/report/common.ts';
import { classifyPath, loadSelectionSettings, ProjectSettingsError } from '../engine/sources/selection.ts';
import type { Schemas, VigilClient } from '../sdk/index.ts';
import { CliError, formatTable } from './http-client.ts';
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

/** Folders never packed, whatever `.gitignore` says: dependencies, VCS data and build output. */
export const DEFAULT_EXCLUDES = [
  'node_modules/',
  '.git/',
  '.hg/',
  '.svn/',
  'artifacts/',
  'cache/',
  'out/',
  'coverage/',
  '.next/',
  'typechain-types/',
  'broadcast/',
  '.vigil-scan/',
];
/** What the Solidity rules analyse (secrets are looked for in every file). */
const SOLIDITY = /\.sol$/i;

const SEVERITY_RANK: Record<string, number> = {
  Info: 0,
  Unknown: 0,
  Low: 1,
  Medium: 2,
  High: 3,
  Critical: 4,
};

/** A usage mistake: exit 2 before any network call. */
export class UsageError extends CliError {
  override name = 'UsageError';
  override exitCode = 2;
}

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

/** The files a directory contributes: `.gitignore` files (at every level) and the default excludes honoured. */
export async function collectFiles(root: string): Promise<Array<{ path: string; size: number }>> {
  const files: Array<{ path: string; size: number }> = [];
  async function walk(relative: string, rules: Array<{ base: string; ig: Ignore }>): Promise<void> {
    const here = path.join(root, relative);
    const local = await readFile(path.join(here, '.gitignore'), 'utf8').catch(() => null);
    const scoped = local === null ? rules : [...rules, { base: relative, ig: ignore().add(local) }];
    const entries = await readdir(here, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      const isDir = entry.isDirectory();
      const ignored = scoped.some(({ base, ig }) => {
        const inner = base ? rel.slice(base.length + 1) : rel;
        return ig.ignores(isDir ? `${inner}/` : inner);
      });
      if (ignored) continue;
      if (isDir) await walk(rel, scoped);
      else if (entry.isFile()) files.push({ path: rel, size: (await stat(path.join(root, rel))).size });
    }
  }
  await walk('', [{ base: '', ig: ignore().add(DEFAULT_EXCLUDES) }]);
  return files;
}

/**
 * How the server's engine will select the files of a local scan (its settings files read as it
 * reads them, under the workspace prefix). A settings file it cannot use is a UsageError.
 */
async function selectionOf(
  root: string,
  files: Array<{ path: string; size: number }>,
  prefix: string | undefined,
): Promise<{ solidityReported: number }> {
  const under = prefix
    ?.split('/')
    .filter((s) => s && s !== '.')
    .join('/');
  const listed = under ? files.filter((f) => f.path.startsWith(`${under}/`)) : files;
  try {
    const settings = await loadSelectionSettings(
      { read: (p: string) => readFile(path.join(root, ...p.split('/'))) },
      listed,
    );
    return {
      solidityReported: listed.filter(
        (f) => SOLIDITY.test(f.path) && classifyPath(f.path, settings) === 'report',
      ).length,
    };
  } catch (err) {
    if (err instanceof ProjectSettingsError)
      throw new UsageError(`${err.message} Nothing was uploaded or charged.`);
    throw err;
  }
}

/** Packs the listed files into a tar.gz; the same files give the same bytes (for `--resume`). */
export async function packFiles(root: string, files: Array<{ path: string }>, target: string): Promise<void> {
  const pack = tar.pack();
  const output = pipeline(pack, createGzip(), createWriteStream(target));
  for (const file of files) {
    const full = path.join(root, file.path);
    const { size, mode, mtime } = await stat(full);
    await new Promise<void>((resolve, reject) => {
      const sink = pack.entry({ name: file.path, size, mode, mtime }, (err) =>
        err ? reject(err) : resolve(),
      );
      createReadStream(full).on('error', reject).pipe(sink);
    });
  }
  pack.finalize();
  await output;
}

/** Packs a directory as `vigil scan` would. */
export async function packDirectory(root: string, target: string): Promise<{ files: number }> {
  const files = await collectFiles(root);
  await packFiles(root, files, target);
  return { files: files.length };
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
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

interface Vulnerability {
  id: string;
  name: string;
  severity: string;
  location: { file?: string; start_line?: number };
  /** The SAST report's details (the confidence is read from them). */
  details?: { confidence?: { value?: unknown } };
  /** The draft's triage (`dismissed` never fails a run). */
  triage_state?: string | null;
  /** Against the scan's baseline: new, unchanged or reopened. */
  baseline_state?: string | null;
}

/** Whether the finding is new to the scan's baseline (new or reopened). */
const isNew = (v: Vulnerability) => (v.baseline_state ?? 'new') !== 'unchanged';

const CONFIDENCE_RANK: Record<string, number> = { low: 0, medium: 1, high: 2 };

/**
 * A finding's confidence rank; a finding without a known confidence counts as the highest, so
 * that `--fail-on-confidence` never lets through what it cannot judge.
 */
function confidenceRank(v: Vulnerability): number {
  const value = v.details?.confidence?.value;
  return (typeof value === 'string' ? CONFIDENCE_RANK[value.toLowerCase()] : undefined) ?? 2;
}

interface SarifRead {
  runs?: Array<{
    tool?: { driver?: { rules?: Array<{ shortDescription?: { text?: string } }> } };
    results?: Array<{
      ruleId?: string;
      ruleIndex?: number;
      locations?: Array<{
        physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number } };
      }>;
      properties?: {
        findingId?: string;
        severity?: string;
        confidence?: string;
        triageState?: string | null;
        vigilBaselineState?: string;
      };
    }>;
  }>;
}

/** The findings of a SARIF report as the exit code and the summary read them (SAST severities). */
function vulnerabilitiesOfSarif(report: unknown): Vulnerability[] {
  const run = (report as SarifRead).runs?.[0];
  const rules = run?.tool?.driver?.rules ?? [];
  return (run?.results ?? []).map((r) => {
    const where = r.locations?.[0]?.physicalLocation;
    const file = where?.artifactLocation?.uri;
    const line = where?.region?.startLine;
    const severity = r.properties?.severity;
    return {
      id: r.properties?.findingId ?? '',
      name:
        (r.ruleIndex === undefined ? undefined : rules[r.ruleIndex]?.shortDescription?.text) ??
        r.ruleId ??
        '?',
      severity:
        severity !== undefined && severity in REPORT_SEVERITY
          ? REPORT_SEVERITY[severity as keyof typeof REPORT_SEVERITY]
          : 'Unknown',
      location: {
        ...(file !== undefined ? { file } : {}),
        ...(line !== undefined ? { start_line: line } : {}),
      },
      ...(r.properties?.confidence !== undefined
        ? { details: { confidence: { value: r.properties.confidence } } }
        : {}),
      triage_state: r.properties?.triageState ?? null,
      baseline_state: r.properties?.vigilBaselineState ?? 'new',
    };
  });
}

function renderTable(vulnerabilities: Vulnerability[]): string {
  if (vulnerabilities.length === 0) return 'No findings.\n';
  const rows = [...vulnerabilities]
    .sort((a, b) => (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0))
    .map((v) => ({
      SEVERITY: v.severity,
      FINDING: v.name,
      LOCATION: `${v.location.file ?? '?'}:${v.location.start_line ?? '?'}`,
      ID: v.id,
    }));
  return `${formatTable(rows, ['SEVERITY', 'FINDING', 'LOCATION', 'ID'], { rule: false })}\n`;
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
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const sleep = deps.sleep ?? realSleep;
  const valid = await validateScanOptions(dir, options);
  const status = statusReporter(stderr);

  // Files first (no network): an empty directory is refused before anything is charged. A
  // directory without Solidity is scanned for secrets.
  let files: Array<{ path: string; size: number }> = [];
  if (valid.source.kind === 'local') {
    files = await collectFiles(valid.source.dir);
    // The server reads vigil.toml and .vigilignore from the upload: a mistake in them is said now,
    // before anything is charged.
    const selection = await selectionOf(valid.source.dir, files, options.prefix);
    if (options.dryRun) {
      for (const f of files) stdout.write(`${f.path}\t${f.size}\n`);
      const total = files.reduce((n, f) => n + f.size, 0);
      stderr.write(
        `${files.length} files (${formatBytes(total)}) would be packed; ${files.filter((f) => SOLIDITY.test(f.path)).length} Solidity files, ${selection.solidityReported} of them for the Solidity rules (tests, scripts and vendored packages are skipped; see docs/ci.md). Nothing was uploaded.\n`,
      );
      return 0;
    }
    if (files.length === 0)
      throw new UsageError(
        `Nothing to scan in ${dir}: no files after .gitignore and the default excludes (${DEFAULT_EXCLUDES.join(' ')}). Nothing was uploaded or charged; run with --dry-run to see what would be packed.`,
      );
  }

  const connection = await resolveConnection({ url: options.url, key: options.key }, env);
  const key = connection.key;
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

  const retry: Partial<RetryPolicy> = {
    sleep,
    onRetry: (reason, waitMs) => status.line(`${reason}; retrying in ${Math.ceil(waitMs / 1000)} s`),
    ...deps.retry,
  };
  const api = cliClient(
    { url: connection.url, credential: key },
    { ...(deps.fetch ? { fetch: deps.fetch } : {}), retry },
  );

  // The key and the credits, before packing anything. A key without credits:read is checked by the
  // scan request itself (402 before any work) instead.
  const creditsAnswer = await api.GET('/api/scanner/v1/credits');
  if (creditsAnswer.response.status === 403) {
    stderr.write('the key cannot read credits (no credits:read scope): skipping the credit check\n');
  } else {
    const balances = expectOk(creditsAnswer, 'Checking the service key', {
      401: 'Check the key (--key, VIGIL_API_KEY or "vigil login"); a revoked or expired key needs replacing.',
    });
    const availability = balances.scanTypes[valid.type];
    if (!availability.available)
      throw new CliError(
        `A ${valid.type} scan is not available: ${availability.reason ?? 'not enough credits'} (costs ${availability.cost}, ${balances.remaining} remaining). Ask your manager for credits; nothing was uploaded.`,
      );
  }

  const what =
    valid.source.kind === 'local'
      ? `local:${valid.source.dir}:${valid.type}:${options.prefix ?? ''}`
      : `sourcehost:${valid.source.repository}@${valid.source.commit}:${valid.type}`;
  const runFile = stateFile(env, connection.url, what);
  const previous = options.resume ? await readState(runFile) : null;
  if (options.resume && !previous)
    stderr.write('Nothing to resume for this directory and server: starting a new scan.\n');
  const state: RunState = previous ?? {
    idempotencyKey: options.idempotencyKey ?? `vigil-cli-${randomUUID()}`,
  };

  let scanId = state.scanId;
  if (!scanId) {
    let scanSources: Schemas['CreateScanRequest']['scanSources'];
    let workspaceId = state.workspaceId;
    if (valid.source.kind === 'local') {
      const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-scan-'));
      try {
        const archive = path.join(work, 'source.tar.gz');
        status.line(`packing ${files.length} files…`);
        await packFiles(valid.source.dir, files, archive);
        const { size } = await stat(archive);
        const sha256 = await sha256File(archive);
        status.done();
        stderr.write(`packed ${files.length} files (${formatBytes(size)})\n`);
        if (state.archiveId && state.sha256 === sha256) {
          stderr.write('resuming: the sources are unchanged and already uploaded\n');
        } else {
          if (state.archiveId) {
            // The sources changed since the interrupted run: this is a new scan with a new key.
            state.idempotencyKey = options.idempotencyKey ?? `vigil-cli-${randomUUID()}`;
          }
          const uploaded = await upload(api, deps, status, stderr, {
            archive,
            size,
            sha256,
            name: path.basename(valid.source.dir),
            prefix: options.prefix,
          });
          Object.assign(state, { archiveId: uploaded.archiveId, sha256, workspaceId: uploaded.workspaceId });
          workspaceId = uploaded.workspaceId;
          await writeState(runFile, state);
        }
        scanSources = [{ kind: 'local', archiveId: state.archiveId!, sha256 }];
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    } else {
      scanSources = [
        { kind: 'sourcehost', repository: valid.source.repository, commit: valid.source.commit },
      ];
    }
    await writeState(runFile, state);
    const accepted = expectOk(
      await api.POST('/api/scanner/v1/scans', {
        params: { header: { 'idempotency-key': state.idempotencyKey } },
        body: {
          type: valid.type,
          ...(workspaceId ? { workspaceId } : {}),
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
    scanId = accepted.id;
    state.scanId = scanId;
    await writeState(runFile, state);
    stderr.write(`scan ${scanId} accepted (${valid.type})\n`);
  } else {
    stderr.write(`resuming scan ${scanId}\n`);
  }

  const params = { params: { path: { scanId } } };
  const pollMs = deps.pollIntervalMs ?? 1000;
  let waited = 0;
  let current = expectOk(await api.GET('/api/scanner/v1/scans/{scanId}', params), 'Reading the scan');
  const describe = (s: typeof current) =>
    `scan ${s.status}: ${s.progress.filesDone}/${s.progress.filesTotal} files, ${s.findingsCount} findings`;
  status.line(describe(current));
  while (!['completed', 'failed', 'cancelled'].includes(current.status)) {
    if (waited >= valid.timeoutSeconds * 1000) {
      status.done();
      throw new CliError(
        `The scan did not finish within ${valid.timeoutSeconds} s (status ${current.status}). It keeps running: continue waiting with "vigil scan … --resume" or read it with "vigil scans show ${scanId}".`,
      );
    }
    await sleep(pollMs);
    waited += pollMs;
    current = expectOk(await api.GET('/api/scanner/v1/scans/{scanId}', params), 'Reading the scan');
    status.line(describe(current));
  }
  status.done();
  await rm(runFile, { force: true });
  if (current.status !== 'completed') {
    throw new CliError(
      `The scan ${current.status}${current.error ? `: ${current.error.message} (${current.error.code})` : ''}.`,
    );
  }

  // One report is read: the SARIF one for --format sarif (the exit code is read from it too).
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
      await api.GET('/api/scanner/v1/scans/{scanId}/findings', params),
      'Reading the findings',
    ) as { vulnerabilities: Vulnerability[] };
    vulnerabilities = sast.vulnerabilities;
    if (valid.format === 'sast') text = `${JSON.stringify(sast, null, 2)}\n`;
    else if (valid.format === 'json')
      text = `${JSON.stringify({ scan: current, failOn: valid.failOn, failOnConfidence: valid.failOnConfidence, vulnerabilities }, null, 2)}\n`;
    else text = renderTable(vulnerabilities);
  }
  if (options.output) await writeFile(options.output, text);
  else stdout.write(text);

  const threshold = valid.failOn === 'never' ? Number.POSITIVE_INFINITY : SEVERITY_RANK[valid.failOn]!;
  const leastConfidence = CONFIDENCE_RANK[valid.failOnConfidence]!;
  // A dismissed finding never fails a run. Against a baseline (a pull request's check), only what
  // the change brings fails it, unless --fail-on-all; a plain run counts every open finding.
  const onlyNew = options.baseline !== undefined && !options.failOnAll;
  const failing = vulnerabilities
    .filter(
      (v) =>
        (SEVERITY_RANK[v.severity] ?? 0) >= threshold &&
        confidenceRank(v) >= leastConfidence &&
        v.triage_state !== 'dismissed' &&
        (!onlyNew || isNew(v)),
    )
    // New ones first, then by severity.
    .sort(
      (a, b) =>
        Number(isNew(b)) - Number(isNew(a)) ||
        (SEVERITY_RANK[b.severity] ?? 0) - (SEVERITY_RANK[a.severity] ?? 0),
    );
  const compared = await api.GET('/api/scanner/v1/scans/{scanId}/comparison', params);
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
