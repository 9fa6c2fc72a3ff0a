/**
 * How the sourcehost adapter runs git: the exact command lines and environments (pure, so tests
 * can check where the token goes), a runner that kills the whole process group on a deadline,
 * and the mapping of git's failures onto reasons callers can act on.
 *
 * The token only ever travels in the child's environment, as an `http.<base>/.extraHeader`
 * scoped to the sourcehost's base URL: never in argv (visible in every process list), never in
 * a URL (which git prints in its messages), never in a credential helper.
 */
import { spawn } from 'node:child_process';
import { AppError } from '../../errors.ts';

/** Why a sourcehost request failed; carried as `details.reason` of SOURCEHOST_ERROR. */
export type SourcehostFailureReason =
  /** The repository exists but does not have this commit (or the id is not a commit). */
  | 'commit_not_found'
  /** The host has no such repository, or hides it from this token. */
  | 'repository_not_found'
  /** The host refused the token. */
  | 'authentication_failed'
  /** git did not finish within the time allowed and was killed. */
  | 'timeout'
  /** The repository or commit is not of the accepted form; git was not run. */
  | 'invalid_reference'
  /** The base URL of the sourcehost integration is not a plain http(s) URL. */
  | 'invalid_base_url'
  /** The outbound policy refuses the host (an internal address); git was not run. */
  | 'destination_refused'
  /** The host could not be reached or the transfer broke off. */
  | 'network'
  /** git failed locally for another reason. */
  | 'git_failed'
  /** The host's REST API answered an error status or a body of an unknown shape. */
  | 'api_error';

/** The reasons a git run that was started can end with. */
export type GitFailureReason = Exclude<
  SourcehostFailureReason,
  'invalid_reference' | 'invalid_base_url' | 'api_error' | 'destination_refused'
>;

/** How the token is presented to the host. */
export type GitAuthScheme = 'basic' | 'bearer';

/** The user name sent with a token in Basic authentication; common git hosts accept it. */
export const BASIC_AUTH_USERNAME = 'x-access-token';

/** A git invocation: the arguments after `git` and the complete environment of the child. */
export interface GitCommand {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** Variables taken over from the server's environment: how to reach the host, nothing else. */
const INHERITED_VARIABLES = [
  'PATH',
  'TMPDIR',
  'http_proxy',
  'https_proxy',
  'HTTPS_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'no_proxy',
  'NO_PROXY',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
] as const;

/** Options of {@link buildGitFetchCommand}. */
export interface GitFetchCommandOptions {
  /** The temporary bare repository fetched into. */
  readonly gitDir: string;
  /** Home of the child: an empty directory of ours, so no `~/.netrc` or user config is read. */
  readonly homeDir: string;
  /** Normalized base URL of the host (`https://host[/path]`, no trailing slash). */
  readonly baseUrl: string;
  /** `owner/name`, already validated. */
  readonly repository: string;
  /** Full commit id, already validated. */
  readonly commit: string;
  readonly token: string;
  readonly authScheme: GitAuthScheme;
  /** The server's environment; only the variables that say how to reach the host are kept. */
  readonly inheritedEnv?: NodeJS.ProcessEnv;
  /**
   * The address the outbound policy checked for the host of `baseUrl`: git connects to it and to
   * nothing else (`http.curloptResolve`), so the name is not resolved a second time. Absent when
   * the host is an address already.
   */
  readonly pinnedAddress?: { readonly host: string; readonly port: number; readonly address: string };
}

/**
 * The `git fetch` of exactly one commit, shallow, without tags, into `gitDir`. The token is only
 * in `env`, as an Authorization header scoped to `baseUrl`; redirects are not followed, so the
 * header never reaches another host.
 */
export function buildGitFetchCommand(options: GitFetchCommandOptions): GitCommand {
  const allowHttp = options.baseUrl.startsWith('http://');
  const args = [
    `--git-dir=${options.gitDir}`,
    // An empty value clears every credential helper, so nothing is stored or asked for.
    '-c',
    'credential.helper=',
    '-c',
    'protocol.allow=never',
    '-c',
    'protocol.https.allow=always',
    '-c',
    `protocol.http.allow=${allowHttp ? 'always' : 'never'}`,
    '-c',
    'http.followRedirects=false',
    ...(options.pinnedAddress
      ? [
          '-c',
          `http.curloptResolve=${options.pinnedAddress.host}:${options.pinnedAddress.port}:${
            options.pinnedAddress.address.includes(':')
              ? `[${options.pinnedAddress.address}]`
              : options.pinnedAddress.address
          }`,
        ]
      : []),
    '-c',
    'gc.auto=0',
    '-c',
    'maintenance.auto=false',
    'fetch',
    '--quiet',
    '--depth=1',
    '--no-tags',
    '--no-recurse-submodules',
    '--no-write-fetch-head',
    `${options.baseUrl}/${options.repository}.git`,
    options.commit,
  ];
  const env: Record<string, string> = {
    ...buildBaseEnvironment(options.homeDir, options.inheritedEnv),
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${options.baseUrl}/.extraHeader`,
    GIT_CONFIG_VALUE_0: `Authorization: ${formatAuthorization(options.token, options.authScheme)}`,
  };
  return { args, env };
}

/** A git command that only touches the local repository `gitDir` (no network, no token). */
export function buildLocalGitCommand(
  gitDir: string,
  homeDir: string,
  args: readonly string[],
  inheritedEnv?: NodeJS.ProcessEnv,
): GitCommand {
  return {
    args: [`--git-dir=${gitDir}`, ...args],
    env: buildBaseEnvironment(homeDir, inheritedEnv),
  };
}

/** The Authorization header value for a token in the given scheme. */
export function formatAuthorization(token: string, scheme: GitAuthScheme): string {
  if (scheme === 'bearer') return `Bearer ${token}`;
  return `Basic ${Buffer.from(`${BASIC_AUTH_USERNAME}:${token}`).toString('base64')}`;
}

function buildBaseEnvironment(homeDir: string, inheritedEnv: NodeJS.ProcessEnv = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = inheritedEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return {
    ...env,
    HOME: homeDir,
    // The server's own git configuration must not change what is fetched or how.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // Never wait for a human: a refused token fails at once instead of prompting.
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    GCM_INTERACTIVE: 'never',
    // git's messages are matched to tell the failure reasons apart.
    LC_ALL: 'C',
    LANG: 'C',
  };
}

/** What a git process that did not succeed left behind. */
export interface GitRunFailure {
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** Options of {@link runGit}. */
export interface RunGitOptions {
  /** The process group is killed after this many milliseconds. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

/** Thrown by {@link runGit} when git exits non-zero or is killed. */
export class GitRunError extends Error {
  readonly failure: GitRunFailure;

  constructor(failure: GitRunFailure) {
    super(failure.timedOut ? 'git was killed after its deadline' : `git exited with ${failure.exitCode}`);
    this.name = 'GitRunError';
    this.failure = failure;
  }
}

/**
 * Runs `git` and resolves with its standard output. git starts helpers of its own
 * (`git-remote-https`, `index-pack`), so it runs in a process group of its own and the whole
 * group is killed on the deadline or on abort. Rejects with {@link GitRunError}, or with the
 * signal's reason on abort.
 */
export function runGit(command: GitCommand, options: RunGitOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    options.signal?.throwIfAborted();
    const child = spawn('git', command.args, {
      env: command.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let aborted = false;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    // `close` waits for every holder of the pipes, so the helpers are gone too.
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (aborted) {
        reject(options.signal?.reason);
        return;
      }
      if (exitCode === 0 && !timedOut) {
        resolve(Buffer.concat(out));
        return;
      }
      reject(new GitRunError({ exitCode, stderr: Buffer.concat(err).toString('utf8'), timedOut }));
    });
  });
}

/** Replaces every secret (and its Basic-encoded forms) in `text` by `[REDACTED]`. */
export function redactSecret(text: string, secret: string): string {
  if (secret === '') return text;
  const forms = [
    formatAuthorization(secret, 'basic').slice('Basic '.length),
    Buffer.from(secret).toString('base64'),
    encodeURIComponent(secret),
    secret,
  ];
  let result = text;
  for (const form of forms) result = result.split(form).join('[REDACTED]');
  return result;
}

/** The reason a failed fetch stands for, from git's (C locale) messages. */
export function classifyFetchFailure(failure: GitRunFailure): GitFailureReason {
  if (failure.timedOut) return 'timeout';
  const stderr = failure.stderr;
  if (/not our ref|couldn't find remote ref|no such remote ref|unadvertised object|bad object/i.test(stderr))
    return 'commit_not_found';
  if (/repository '.*' not found|repository not found|returned error: 404/i.test(stderr))
    return 'repository_not_found';
  if (
    /authentication failed|could not read (username|password)|terminal prompts disabled|returned error: 40[13]/i.test(
      stderr,
    )
  )
    return 'authentication_failed';
  if (
    /unable to access|could not resolve|failed to connect|connection (refused|reset|timed out)|rpc failed|early eof|remote end hung up|\bssl\b|\btls\b|gnutls|certificate|returned error: [35]\d\d|redirect/i.test(
      stderr,
    )
  )
    return 'network';
  return 'git_failed';
}

/** A SOURCEHOST_ERROR carrying `reason`; the message is for people, the reason for programs. */
export function sourcehostError(
  reason: SourcehostFailureReason,
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): AppError {
  return new AppError('SOURCEHOST_ERROR', { message, details: { reason, ...details }, cause });
}
