/**
 * A read-only source tree of one commit of a sourcehost repository, fetched over git's smart
 * HTTP protocol.
 *
 * Exactly the requested commit is fetched, shallow, into a temporary bare repository; nothing is
 * checked out. The listing comes from `git ls-tree` and contents from `git cat-file`, so no file
 * is ever written under a name taken from the repository, and links are never followed: only
 * regular files (modes 100644 and 100755) are listed; symbolic links and submodules are not.
 *
 * Paths are repository paths. With a prefix, only files under it are listed, still by their
 * repository path, as the archive tree does.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { normalizeArchivePath } from '../../engine/sources/archive-read.ts';
import type { SourceEntry, SourceTree } from '../../engine/sources/tree.ts';
import { AppError, isAppError } from '../../errors.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { isOutboundRefused } from '../outbound/outbound-policy.ts';
import { createGitBlobReader } from './git-blob-reader.ts';
import {
  buildGitFetchCommand,
  buildLocalGitCommand,
  classifyFetchFailure,
  type GitAuthScheme,
  type GitCommand,
  type GitFailureReason,
  GitRunError,
  redactSecret,
  runGit,
  sourcehostError,
} from './git-command.ts';
import { normalizeCommitId, parseRepositoryRef, type RepositoryRef } from './repository-ref.ts';

const MIB = 1024 * 1024;

/** Options of {@link openGitCommitTree}. */
export interface OpenGitCommitTreeOptions {
  /** Base URL of the sourcehost's git service: repositories are at `<baseUrl>/<owner>/<name>.git`. */
  readonly baseUrl: string;
  /** Access token of the sourcehost integration. Never put in argv, URLs, logs or errors. */
  readonly token: string;
  /** `owner/name`. */
  readonly repository: string;
  /** Full 40-hex commit id. Branch names and short ids are refused. */
  readonly commit: string;
  /** Workspace prefix: only files under this repository folder are listed. Default: all. */
  readonly prefix?: string | undefined;
  /** Deadline of the whole fetch and listing, after which git is killed. Default 120 s. */
  readonly timeoutMs?: number | undefined;
  /** Parent of the temporary repository. Default: the OS temporary directory. */
  readonly workDir?: string | undefined;
  /** `basic` (user `x-access-token`, the default) or `bearer`. */
  readonly authScheme?: GitAuthScheme | undefined;
  /** Files larger than this are left out (see `skipped`). Default 2 MiB, as for archives. */
  readonly maxFileBytes?: number | undefined;
  /** Aborting kills git and rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** The outbound policy: the host is resolved and checked by it, and git is pinned to that address. */
  readonly outbound: Pick<OutboundPolicy, 'resolve'>;
}

/** A file of the commit that the tree leaves out. */
export interface SkippedGitFile {
  readonly path: string;
  readonly size: number;
  /** `too-large`: over `maxFileBytes`; `unsafe-path`: not valid UTF-8, or `..`, a backslash or a control character. */
  readonly reason: 'too-large' | 'unsafe-path';
}

/** A {@link SourceTree} of one commit, which also reports the files it left out. */
export interface GitSourceTree extends SourceTree {
  /** The commit the tree holds (lower-case full id). */
  readonly commit: string;
  /** Files under the prefix that are not listed, in path order. */
  readonly skipped: readonly SkippedGitFile[];
}

interface IndexedBlob {
  readonly id: string;
  readonly size: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * Fetches `repository` at `commit` and returns its tree. Errors: SOURCEHOST_ERROR with
 * `details.reason` one of `invalid_reference`, `invalid_base_url` (git not run),
 * `repository_not_found`, `commit_not_found`, `authentication_failed`, `timeout`, `network`,
 * `git_failed`; VALIDATION_FAILED for a `prefix` with `..` or a backslash. Nothing is left on
 * disk when it fails.
 */
export async function openGitCommitTree(options: OpenGitCommitTreeOptions): Promise<GitSourceTree> {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  const repository = parseRepositoryForFetch(options.repository);
  const commit = normalizeCommitId(options.commit);
  if (commit === null) {
    throw sourcehostError('invalid_reference', 'The commit must be a full 40-hex commit id.', {
      commit: options.commit.slice(0, 100),
    });
  }
  const prefix = normalizePrefix(options.prefix ?? '');
  const maxFileBytes = options.maxFileBytes ?? 2 * MIB;
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const context = { repository: repository.fullName, commit };

  const dir = await mkdtemp(join(options.workDir ?? tmpdir(), 'vigil-git-'));
  const gitDir = join(dir, 'repository.git');
  const homeDir = join(dir, 'home');
  const local = (args: readonly string[]): GitCommand =>
    buildLocalGitCommand(gitDir, homeDir, args, process.env);
  const run = async (command: GitCommand, step: GitStep): Promise<Buffer> => {
    try {
      return await runGit(command, { timeoutMs: Math.max(1, deadline - Date.now()), signal: options.signal });
    } catch (err) {
      throw toSourcehostError(err, step, options.token, context);
    }
  };

  try {
    const pinnedAddress = await pinAddress(options.outbound, baseUrl);
    await mkdir(homeDir);
    await run(local(['init', '--quiet', '--bare']), 'init');
    await run(
      buildGitFetchCommand({
        gitDir,
        homeDir,
        baseUrl,
        repository: repository.fullName,
        commit,
        token: options.token,
        authScheme: options.authScheme ?? 'basic',
        inheritedEnv: process.env,
        ...(pinnedAddress ? { pinnedAddress } : {}),
      }),
      'fetch',
    );
    // A tree or blob id can be fetched as well; only a commit names a reviewable state.
    const type = (await run(local(['cat-file', '-t', commit]), 'cat-file')).toString('latin1').trim();
    if (type !== 'commit') {
      throw sourcehostError(
        'commit_not_found',
        `${commit} is not a commit of ${repository.fullName}.`,
        context,
      );
    }
    const listing = await run(local(['ls-tree', '-r', '-l', '-z', '--full-tree', commit]), 'ls-tree');
    const { index, skipped } = indexTree(listing, prefix, maxFileBytes);
    return createTree(dir, commit, index, skipped, createGitBlobReader(local(['cat-file', '--batch'])));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Resolves the base URL's host through the outbound policy (which refuses internal addresses)
 * and returns the address git must connect to; undefined when the host is an address itself
 * (the policy checked it, and git does not resolve it).
 */
async function pinAddress(
  outbound: Pick<OutboundPolicy, 'resolve'>,
  baseUrl: string,
): Promise<{ host: string; port: number; address: string } | undefined> {
  const url = new URL(baseUrl);
  let addresses: Awaited<ReturnType<OutboundPolicy['resolve']>>;
  try {
    addresses = await outbound.resolve(url.hostname);
  } catch (err) {
    if (!isOutboundRefused(err)) throw err;
    throw sourcehostError('destination_refused', (err as Error).message, {}, err);
  }
  if (url.hostname.startsWith('[') || /^[\d.]+$/.test(url.hostname)) return undefined;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { host: url.hostname, port, address: addresses[0]!.address };
}

function createTree(
  dir: string,
  commit: string,
  index: Map<string, IndexedBlob>,
  skipped: SkippedGitFile[],
  blobs: ReturnType<typeof createGitBlobReader>,
): GitSourceTree {
  const listing: SourceEntry[] = [...index.entries()]
    .map(([path, blob]) => ({ path, size: blob.size }))
    .sort((a, b) => comparePaths(a.path, b.path));
  let closing: Promise<void> | undefined;

  return {
    commit,
    skipped,

    async list() {
      return listing.map((entry) => ({ ...entry }));
    },

    async read(path) {
      if (closing) throw new Error('The source tree is closed.');
      const blob = index.get(path);
      if (!blob) {
        throw new AppError('NOT_FOUND', {
          message: `"${path}" is not in the source tree.`,
          details: { path },
        });
      }
      return blobs.read(blob.id);
    },

    close() {
      closing ??= (async () => {
        await blobs.close();
        await rm(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

const REGULAR_FILE_MODES = new Set(['100644', '100755']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses `git ls-tree -r -l -z` output (`<mode> <type> <id> <size>\t<path>\0` per entry) into
 * the regular files under `prefix`. Paths are bytes in git; one that is not UTF-8 or not a plain
 * relative path (a hostile server can send any tree) is reported, never listed.
 */
function indexTree(
  listing: Buffer,
  prefix: string,
  maxFileBytes: number,
): { index: Map<string, IndexedBlob>; skipped: SkippedGitFile[] } {
  const index = new Map<string, IndexedBlob>();
  const skipped: SkippedGitFile[] = [];
  let start = 0;
  while (start < listing.length) {
    let end = listing.indexOf(0, start);
    if (end === -1) end = listing.length;
    const record = listing.subarray(start, end);
    start = end + 1;
    const tab = record.indexOf(0x09);
    if (tab === -1) continue;
    const [mode, type, id, sizeText] = record.subarray(0, tab).toString('latin1').trim().split(/\s+/);
    if (type !== 'blob' || mode === undefined || !REGULAR_FILE_MODES.has(mode) || id === undefined) continue;
    const size = Number(sizeText);
    const path = decodePath(record.subarray(tab + 1));
    if (path === null) {
      const printable = record.subarray(tab + 1).toString('utf8');
      if (isUnder(printable, prefix)) skipped.push({ path: printable, size, reason: 'unsafe-path' });
      continue;
    }
    if (!isUnder(path, prefix)) continue;
    if (size > maxFileBytes) {
      skipped.push({ path, size, reason: 'too-large' });
      continue;
    }
    index.set(path, { id, size });
  }
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { index, skipped };
}

/** The path when it is UTF-8 and already a plain relative POSIX path, else null. */
function decodePath(bytes: Buffer): string | null {
  let path: string;
  try {
    path = utf8.decode(bytes);
  } catch {
    return null;
  }
  try {
    return normalizeArchivePath(path) === path ? path : null;
  } catch {
    return null;
  }
}

function normalizePrefix(value: string): string {
  try {
    return normalizeArchivePath(value.replace(/^\/+/, ''));
  } catch (err) {
    throw new AppError('VALIDATION_FAILED', {
      message: `The prefix "${value.slice(0, 200)}" is not a valid repository folder.`,
      details: { prefix: value.slice(0, 200) },
      cause: err,
    });
  }
}

function parseRepositoryForFetch(repository: string): RepositoryRef {
  try {
    return parseRepositoryRef(repository);
  } catch (err) {
    if (!isAppError(err, 'UNSUPPORTED_REPOSITORY_TYPE')) throw err;
    throw sourcehostError(
      'invalid_reference',
      'The repository must be given as "owner/name".',
      { repository: repository.slice(0, 300) },
      err,
    );
  }
}

/**
 * `scheme://host[:port][/path]` without a trailing slash. Credentials, a query or a fragment
 * in the base URL are refused: the token has one way in, and git would print the URL.
 */
function normalizeBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw sourcehostError('invalid_base_url', 'The sourcehost base URL is not a valid URL.');
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw sourcehostError(
      'invalid_base_url',
      'The sourcehost base URL must be a plain http(s) URL without credentials, query or fragment.',
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const FAILURE_MESSAGES: Record<GitFailureReason, (context: FailureContext) => string> = {
  commit_not_found: (c: FailureContext) => `The commit ${c.commit} was not found in ${c.repository}.`,
  repository_not_found: (c: FailureContext) =>
    `The repository ${c.repository} was not found, or the integration's token cannot see it.`,
  authentication_failed: (c: FailureContext) =>
    `The sourcehost refused the integration's token for ${c.repository}.`,
  timeout: (c: FailureContext) => `Fetching ${c.repository} at ${c.commit} did not finish in time.`,
  network: (c: FailureContext) => `The sourcehost could not be reached to fetch ${c.repository}.`,
  git_failed: (c: FailureContext) => `git failed while fetching ${c.repository} at ${c.commit}.`,
};

/** The git runs of opening a tree; only the fetch talks to the host. */
type GitStep = 'init' | 'fetch' | 'cat-file' | 'ls-tree';

interface FailureContext {
  readonly repository: string;
  readonly commit: string;
}

/**
 * The SOURCEHOST_ERROR for a failed git run. git's own message, with the token scrubbed, is kept
 * as the cause for the logs; it is not put in `details`, which clients see.
 */
function toSourcehostError(err: unknown, step: GitStep, token: string, context: FailureContext): unknown {
  if (!(err instanceof GitRunError)) return err;
  const failure = err.failure;
  const reason: GitFailureReason =
    step === 'fetch' ? classifyFetchFailure(failure) : failure.timedOut ? 'timeout' : 'git_failed';
  const stderr = redactSecret(failure.stderr, token).trim().slice(-2000);
  const cause = new Error(`git ${step} failed (exit ${failure.exitCode}): ${stderr}`);
  return sourcehostError(reason, FAILURE_MESSAGES[reason](context), { ...context }, cause);
}

function isUnder(path: string, folder: string): boolean {
  return folder === '' || path.startsWith(`${folder}/`);
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
