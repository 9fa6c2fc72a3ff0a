/**
 * A git host that speaks the real smart HTTP protocol: a node:http server on 127.0.0.1 that runs
 * `git http-backend` as a CGI program, requires a token (Basic `x-access-token:TOKEN` or
 * `Bearer TOKEN`), can hold its responses back (to exercise client timeouts) and records every
 * request line it saw (so tests can assert that no secret travelled in a URL).
 *
 * Repositories live as bare repositories under a temporary project root, at `owner/name.git`.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  /** The request target exactly as sent (path and query). */
  readonly url: string;
  /** The status the server answered with. */
  status: number;
}

/** What a repository's commit holds besides regular files. */
export interface CommitContent {
  /** Regular files by POSIX path; `null` deletes the file in a later commit. */
  readonly files: Record<string, string | null>;
  /** Symbolic links by POSIX path, valued by their target. */
  readonly symlinks?: Record<string, string>;
  /** Submodule (gitlink) entries by POSIX path, valued by the commit they pin. */
  readonly submodules?: Record<string, string>;
}

export interface FakeGitServerOptions {
  /** The only token the server accepts. */
  readonly token: string;
}

export interface FakeGitServer {
  /** `http://127.0.0.1:PORT`; repositories are at `${baseUrl}/owner/name.git`. */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Creates `owner/name` with one commit holding `files` and returns that commit. */
  createRepository(
    repository: string,
    files: Record<string, string>,
    extra?: Omit<CommitContent, 'files'>,
  ): Promise<{ commit: string }>;
  /** Adds a commit on top of the repository's tip (which becomes the new tip). */
  addCommit(repository: string, content: CommitContent): Promise<{ commit: string }>;
  /** Resolves with the next request the server receives (before any delay is applied). */
  waitForRequest(): Promise<RecordedRequest>;
  /** Holds every later response back for `ms` milliseconds before answering (0 answers at once). */
  setResponseDelay(ms: number): void;
  close(): Promise<void>;
}

const GIT_IDENTITY_ENV = {
  GIT_AUTHOR_NAME: 'Fake Author',
  GIT_AUTHOR_EMAIL: 'author@example.test',
  GIT_COMMITTER_NAME: 'Fake Committer',
  GIT_COMMITTER_EMAIL: 'committer@example.test',
  // The host's own git configuration must not change how the fixtures are built.
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** Starts a fake git host on a random port of 127.0.0.1. */
export async function startFakeGitServer(options: FakeGitServerOptions): Promise<FakeGitServer> {
  const root = await mkdtemp(join(tmpdir(), 'vigil-git-server-'));
  const projectRoot = join(root, 'repositories');
  const workRoot = join(root, 'work');
  await mkdir(projectRoot);
  await mkdir(workRoot);

  const requests: RecordedRequest[] = [];
  const pendingTimers = new Set<NodeJS.Timeout>();
  const requestWaiters: Array<(request: RecordedRequest) => void> = [];
  let responseDelayMs = 0;

  const server = createServer((req, res) => {
    const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', status: 0 };
    requests.push(recorded);
    for (const notify of requestWaiters.splice(0)) notify(recorded);
    res.on('finish', () => {
      recorded.status = res.statusCode;
    });
    const answer = (): void => {
      if (!isAuthorized(req.headers.authorization, options.token)) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
        res.end('Authentication required\n');
        return;
      }
      runHttpBackend(req, res, projectRoot);
    };
    if (responseDelayMs <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      pendingTimers.delete(timer);
      answer();
    }, responseDelayMs);
    pendingTimers.add(timer);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const runGit = (args: string[], extraEnv: Record<string, string> = {}): Promise<string> =>
    runProcess('git', args, { ...GIT_IDENTITY_ENV, ...extraEnv });

  const locate = (repository: string): { gitDir: string; workTree: string } => ({
    gitDir: join(projectRoot, `${repository}.git`),
    workTree: join(workRoot, repository),
  });

  const commitContent = async (repository: string, content: CommitContent, message: string) => {
    const { gitDir, workTree } = locate(repository);
    const git = (args: string[]) => runGit([`--git-dir=${gitDir}`, `--work-tree=${workTree}`, ...args]);
    for (const [path, text] of Object.entries(content.files)) {
      const target = join(workTree, path);
      if (text === null) {
        await rm(target, { force: true });
        continue;
      }
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, text);
    }
    for (const [path, linkTarget] of Object.entries(content.symlinks ?? {})) {
      const target = join(workTree, path);
      await mkdir(dirname(target), { recursive: true });
      await symlink(linkTarget, target);
    }
    await git(['add', '-A']);
    for (const [path, pinned] of Object.entries(content.submodules ?? {})) {
      await git(['update-index', '--add', '--cacheinfo', `160000,${pinned},${path}`]);
    }
    await git(['commit', '-q', '--allow-empty', '-m', message]);
    return { commit: (await git(['rev-parse', 'HEAD'])).trim() };
  };

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    async createRepository(repository, files, extra = {}) {
      const { gitDir, workTree } = locate(repository);
      await mkdir(workTree, { recursive: true });
      await runGit(['init', '-q', '--bare', '--initial-branch=main', gitDir]);
      // Clients fetch one commit by its id, as the adapter does; real hosts allow it too.
      await runGit([`--git-dir=${gitDir}`, 'config', 'uploadpack.allowAnySHA1InWant', 'true']);
      await runGit([`--git-dir=${gitDir}`, 'config', 'http.receivepack', 'false']);
      return commitContent(repository, { ...extra, files }, 'Initial commit');
    },
    addCommit(repository, content) {
      return commitContent(repository, content, 'Next commit');
    },
    waitForRequest() {
      return new Promise((resolve) => requestWaiters.push(resolve));
    },
    setResponseDelay(ms) {
      responseDelayMs = ms;
    },
    async close() {
      for (const timer of pendingTimers) clearTimeout(timer);
      pendingTimers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

function isAuthorized(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const [scheme, value] = header.split(' ', 2);
  if (value === undefined) return false;
  if (scheme?.toLowerCase() === 'bearer') return value === token;
  if (scheme?.toLowerCase() === 'basic') {
    return Buffer.from(value, 'base64').toString('utf8') === `x-access-token:${token}`;
  }
  return false;
}

/** Runs one request through `git http-backend` (CGI/1.1) and relays its answer. */
function runHttpBackend(req: IncomingMessage, res: ServerResponse, projectRoot: string): void {
  const url = new URL(req.url ?? '/', 'http://fake');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    REMOTE_USER: 'x-access-token',
  };
  const headerEnv: Array<[string, string]> = [
    ['content-type', 'CONTENT_TYPE'],
    ['content-length', 'CONTENT_LENGTH'],
    ['content-encoding', 'HTTP_CONTENT_ENCODING'],
    // Protocol v2 is negotiated through this header, which the backend reads from GIT_PROTOCOL.
    ['git-protocol', 'GIT_PROTOCOL'],
  ];
  for (const [header, variable] of headerEnv) {
    const value = req.headers[header];
    if (typeof value === 'string') env[variable] = value;
  }

  const backend = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  req.pipe(backend.stdin);
  backend.stdin.on('error', () => {
    // The backend may answer and exit before reading the whole body (for example a 404).
  });

  let head = Buffer.alloc(0);
  let headersSent = false;
  backend.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const parsed = parseCgiHead(head);
    if (parsed === undefined) return;
    headersSent = true;
    res.writeHead(parsed.status, parsed.headers);
    if (parsed.body.length > 0) res.write(parsed.body);
  });
  backend.on('close', () => {
    if (!headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
    res.end();
  });
  backend.on('error', () => {
    if (!headersSent) res.writeHead(500);
    res.end();
  });
}

function parseCgiHead(
  head: Buffer,
): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
  let end = head.indexOf('\r\n\r\n');
  let separatorLength = 4;
  if (end === -1) {
    end = head.indexOf('\n\n');
    separatorLength = 2;
  }
  if (end === -1) return undefined;
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else headers[name] = value;
  }
  return { status, headers, body: head.subarray(end + separatorLength) };
}

/** The process environment minus GIT_* variables, which a surrounding git hook may have set. */
function environmentWithoutGit(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('GIT_')) env[key] = value;
  }
  return env;
}

function runProcess(command: string, args: string[], extraEnv: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...environmentWithoutGit(), ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited ${code}: ${Buffer.concat(err).toString('utf8')}`),
        );
    });
  });
}
