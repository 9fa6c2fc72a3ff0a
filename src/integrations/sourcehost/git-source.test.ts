import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGitServer, startFakeGitServer } from '../../../test/fakes/git-server.ts';
import { AppError } from '../../errors.ts';
import { createOutboundPolicy } from '../outbound/outbound-policy.ts';
import { buildGitFetchCommand, formatAuthorization, redactSecret } from './git-command.ts';
import { type OpenGitCommitTreeOptions, openGitCommitTree } from './git-source.ts';
import { parseRepositoryRef } from './repository-ref.ts';

const TOKEN = 'ght_s3cr3t-T0ken-for-tests';
const LARGE_FILE = `${'// padding line of a large contract file\n'.repeat(5_000)}`;

let server: FakeGitServer;
let firstCommit: string;
let secondCommit: string;
let workDir: string;
/** Loopback is allowed, as `VIGIL_OUTBOUND_ALLOW=127.0.0.1/32` does; `git.vigil.test` resolves to it. */
const outbound = createOutboundPolicy({
  allow: { hosts: [], cidrs: ['127.0.0.1/32'] },
  resolve: async (hostname) => {
    if (hostname === 'git.vigil.test') return [{ address: '127.0.0.1', family: 4 }];
    throw new Error(`no such host ${hostname}`);
  },
});

beforeAll(async () => {
  server = await startFakeGitServer({ token: TOKEN });
  ({ commit: firstCommit } = await server.createRepository(
    'acme/vault',
    {
      'README.md': '# Vault\n',
      'contracts/Vault.sol': 'contract Vault { uint256 public v1; }\n',
      'contracts/lib/Math.sol': 'library Math {}\n',
      'contracts/Large.sol': LARGE_FILE,
      'docs/empty.txt': '',
    },
    {
      symlinks: { 'contracts/passwd.sol': '/etc/passwd', 'contracts/escape.sol': '../../README.md' },
      submodules: { 'contracts/vendor': 'a'.repeat(40) },
    },
  ));
  ({ commit: secondCommit } = await server.addCommit('acme/vault', {
    files: {
      'contracts/Vault.sol': 'contract Vault { uint256 public v2; }\n',
      'contracts/New.sol': 'contract New {}\n',
    },
  }));
});

afterAll(async () => {
  await outbound.close();
  await server.close();
});

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'vigil-git-source-test-'));
  server.setResponseDelay(0);
});

afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
});

function options(overrides: Partial<OpenGitCommitTreeOptions> = {}): OpenGitCommitTreeOptions {
  return {
    baseUrl: server.baseUrl,
    token: TOKEN,
    repository: 'acme/vault',
    commit: secondCommit,
    timeoutMs: 20_000,
    workDir,
    outbound,
    ...overrides,
  };
}

async function openFailure(overrides: Partial<OpenGitCommitTreeOptions>): Promise<AppError> {
  const error = await openGitCommitTree(options(overrides)).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** Everything an error exposes: its message, its details and the messages of its causes. */
function describeError(error: AppError): string {
  const causes: string[] = [];
  for (let cause = error.cause; cause instanceof Error; cause = cause.cause) causes.push(cause.message);
  return [error.message, JSON.stringify(error.details), ...causes].join('\n');
}

describe('openGitCommitTree', () => {
  it('lists the regular files of the commit with their sizes and reads their contents', async () => {
    const tree = await openGitCommitTree(options());
    try {
      expect(tree.commit).toBe(secondCommit);
      expect(await tree.list()).toEqual([
        { path: 'README.md', size: 8 },
        { path: 'contracts/Large.sol', size: Buffer.byteLength(LARGE_FILE) },
        { path: 'contracts/New.sol', size: 16 },
        { path: 'contracts/Vault.sol', size: 38 },
        { path: 'contracts/lib/Math.sol', size: 16 },
        { path: 'docs/empty.txt', size: 0 },
      ]);
      // Concurrent reads share one cat-file process and must each get their own content.
      const [vault, large, empty, math] = await Promise.all([
        tree.read('contracts/Vault.sol'),
        tree.read('contracts/Large.sol'),
        tree.read('docs/empty.txt'),
        tree.read('contracts/lib/Math.sol'),
      ]);
      expect(vault?.toString()).toBe('contract Vault { uint256 public v2; }\n');
      expect(large?.toString()).toBe(LARGE_FILE);
      expect(empty?.length).toBe(0);
      expect(math?.toString()).toBe('library Math {}\n');
    } finally {
      await tree.close();
    }
  });

  it('fetches an older commit exactly, not the tip of the branch', async () => {
    const tree = await openGitCommitTree(options({ commit: firstCommit.toUpperCase() }));
    try {
      expect(tree.commit).toBe(firstCommit);
      const paths = (await tree.list()).map((entry) => entry.path);
      expect(paths).not.toContain('contracts/New.sol');
      expect((await tree.read('contracts/Vault.sol')).toString()).toBe(
        'contract Vault { uint256 public v1; }\n',
      );
    } finally {
      await tree.close();
    }
  });

  it('lists only the files under the prefix, by their repository path', async () => {
    const tree = await openGitCommitTree(options({ prefix: '/contracts/lib/' }));
    try {
      expect(await tree.list()).toEqual([{ path: 'contracts/lib/Math.sol', size: 16 }]);
      await expect(tree.read('contracts/Vault.sol')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await tree.close();
    }
  });

  it('refuses a prefix that climbs out of the repository', async () => {
    const error = await openFailure({ prefix: 'contracts/../..' });
    expect(error.code).toBe('VALIDATION_FAILED');
  });

  it('neither lists nor reads symbolic links and submodules', async () => {
    const tree = await openGitCommitTree(options());
    try {
      const paths = (await tree.list()).map((entry) => entry.path);
      expect(paths).not.toContain('contracts/passwd.sol');
      expect(paths).not.toContain('contracts/escape.sol');
      expect(paths).not.toContain('contracts/vendor');
      await expect(tree.read('contracts/passwd.sol')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(tree.read('contracts/escape.sol')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    } finally {
      await tree.close();
    }
  });

  it('leaves files over maxFileBytes out and reports them as skipped', async () => {
    const tree = await openGitCommitTree(options({ maxFileBytes: 1_000 }));
    try {
      expect(tree.skipped).toEqual([
        { path: 'contracts/Large.sol', size: Buffer.byteLength(LARGE_FILE), reason: 'too-large' },
      ]);
      expect((await tree.list()).map((entry) => entry.path)).not.toContain('contracts/Large.sol');
    } finally {
      await tree.close();
    }
  });

  it('authenticates with a Bearer header when asked to', async () => {
    const tree = await openGitCommitTree(options({ authScheme: 'bearer' }));
    try {
      expect((await tree.list()).length).toBe(6);
    } finally {
      await tree.close();
    }
  });

  it('removes its temporary repository on close, and close can be called twice', async () => {
    const tree = await openGitCommitTree(options());
    expect(await readdir(workDir)).toHaveLength(1);
    await tree.read('README.md');
    await tree.close();
    await tree.close();
    expect(await readdir(workDir)).toEqual([]);
    await expect(tree.read('README.md')).rejects.toThrow(/closed/);
  });

  it('answers commit_not_found for a commit the repository does not have', async () => {
    const error = await openFailure({ commit: 'f'.repeat(40) });
    expect(error.code).toBe('SOURCEHOST_ERROR');
    expect(error.details).toMatchObject({ reason: 'commit_not_found', repository: 'acme/vault' });
  });

  it('answers repository_not_found for a repository the host does not have', async () => {
    const error = await openFailure({ repository: 'acme/missing' });
    expect(error.details).toMatchObject({ reason: 'repository_not_found', repository: 'acme/missing' });
  });

  it('answers authentication_failed for a token the host refuses, in either scheme', async () => {
    for (const authScheme of ['basic', 'bearer'] as const) {
      const error = await openFailure({ token: 'wrong-token', authScheme });
      expect(error.details).toMatchObject({ reason: 'authentication_failed' });
    }
  });

  it('answers invalid_reference without running git for a repository or commit of another form', async () => {
    const requestsBefore = server.requests.length;
    const cases: Array<Partial<OpenGitCommitTreeOptions>> = [
      { repository: 'a/b/c' },
      { repository: 'https://elsewhere.example/acme/vault' },
      { repository: '--upload-pack=touch/x' },
      { commit: 'main' },
      { commit: secondCommit.slice(0, 12) },
      { commit: `${secondCommit}\n` },
    ];
    for (const overrides of cases) {
      const error = await openFailure(overrides);
      expect(error.details).toMatchObject({ reason: 'invalid_reference' });
    }
    expect(server.requests.length).toBe(requestsBefore);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('answers invalid_base_url for a base URL with credentials or another scheme', async () => {
    for (const baseUrl of [`http://user:${TOKEN}@127.0.0.1:1`, 'file:///srv/git', 'not a url']) {
      const error = await openFailure({ baseUrl });
      expect(error.details).toMatchObject({ reason: 'invalid_base_url' });
      expect(describeError(error)).not.toContain(TOKEN);
    }
  });

  it('kills git and every helper it started when the host does not answer in time', async () => {
    server.setResponseDelay(60_000);
    const requestSeen = server.waitForRequest();
    const opening = openGitCommitTree(options({ timeoutMs: 1_500 })).then(
      () => undefined,
      (err: unknown) => err,
    );
    await requestSeen;
    // git and its HTTP helper wait for the host; their home is in workDir, the token in no argv.
    const running = await readProcesses();
    const gitProcesses = running.filter((p) => p.environment.includes(workDir));
    expect(gitProcesses.map((p) => p.commandLine.split(' ')[0])).toEqual(
      expect.arrayContaining(['git', expect.stringMatching(/remote-http/)]),
    );
    expect(running.filter((p) => p.commandLine.includes(TOKEN))).toEqual([]);

    const error = (await opening) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error.details).toMatchObject({ reason: 'timeout' });
    expect((await readProcesses()).filter((p) => p.environment.includes(workDir))).toEqual([]);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('connects git to the address the policy checked (a name no DNS knows, pinned to it)', async () => {
    const baseUrl = server.baseUrl.replace('127.0.0.1', 'git.vigil.test');
    const tree = await openGitCommitTree(options({ baseUrl }));
    try {
      expect(tree.commit).toBe(secondCommit);
      expect((await tree.list()).length).toBeGreaterThan(0);
    } finally {
      await tree.close();
    }
  });

  it('answers destination_refused without running git for an internal address', async () => {
    const strict = createOutboundPolicy({ allow: { hosts: [], cidrs: [] } });
    try {
      for (const baseUrl of [
        server.baseUrl,
        'http://2130706433:1/',
        'http://[::ffff:127.0.0.1]/',
        'http://localhost/',
      ]) {
        const before = server.requests.length;
        const error = await openFailure({ baseUrl, outbound: strict });
        expect(error.details).toMatchObject({ reason: 'destination_refused' });
        expect(server.requests.length).toBe(before);
      }
    } finally {
      await strict.close();
    }
  });

  it('answers network when the host cannot be reached', async () => {
    const error = await openFailure({ baseUrl: 'http://127.0.0.1:1' });
    expect(error.details).toMatchObject({ reason: 'network' });
    expect(await readdir(workDir)).toEqual([]);
  });

  it('stops git and rejects with the reason when the signal aborts', async () => {
    server.setResponseDelay(60_000);
    const controller = new AbortController();
    const requestSeen = server.waitForRequest();
    const opening = openGitCommitTree(options({ signal: controller.signal }));
    await requestSeen;
    controller.abort(new Error('scan cancelled'));
    await expect(opening).rejects.toThrow('scan cancelled');
    expect((await readProcesses()).filter((p) => p.environment.includes(workDir))).toEqual([]);
    expect(await readdir(workDir)).toEqual([]);
  });

  it('reports paths that are not plain relative POSIX paths instead of listing them', async () => {
    const { commit } = await server.createRepository('acme/odd-paths', {
      'contracts\\Evil.sol': 'contract Evil {}\n',
      'contracts/Fine.sol': 'contract Fine {}\n',
    });
    const tree = await openGitCommitTree(options({ repository: 'acme/odd-paths', commit }));
    try {
      expect(await tree.list()).toEqual([{ path: 'contracts/Fine.sol', size: 17 }]);
      expect(tree.skipped).toEqual([{ path: 'contracts\\Evil.sol', size: 17, reason: 'unsafe-path' }]);
    } finally {
      await tree.close();
    }
  });

  it('keeps the token out of error messages and out of every URL the host saw', async () => {
    const errors = [
      await openFailure({ commit: 'e'.repeat(40) }),
      await openFailure({ repository: 'acme/missing' }),
      await openFailure({ token: `${TOKEN}-revoked` }),
    ];
    for (const error of errors) {
      const text = describeError(error);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(formatAuthorization(TOKEN, 'basic').slice('Basic '.length));
    }
    expect(server.requests.length).toBeGreaterThan(0);
    for (const request of server.requests) expect(request.url).not.toContain(TOKEN);
  });
});

describe('buildGitFetchCommand', () => {
  const base = {
    gitDir: '/tmp/vigil-git-x/repository.git',
    homeDir: '/tmp/vigil-git-x/home',
    repository: 'acme/vault',
    commit: 'c'.repeat(40),
    token: TOKEN,
    inheritedEnv: {
      PATH: '/usr/bin',
      HOME: '/root',
      GIT_DIR: '/elsewhere',
      GIT_TRACE_CURL: '1',
      SECRET: 'x',
    },
  };

  it('puts the token only in the environment, as a header scoped to the base URL', () => {
    for (const authScheme of ['basic', 'bearer'] as const) {
      const command = buildGitFetchCommand({ ...base, baseUrl: 'https://git.example.test', authScheme });
      const header = `Authorization: ${formatAuthorization(TOKEN, authScheme)}`;
      expect(command.args.join(' ')).not.toContain(TOKEN);
      expect(command.args.join(' ')).not.toContain(header.slice('Authorization: '.length));
      expect(command.args).toContain('https://git.example.test/acme/vault.git');
      expect(command.env).toMatchObject({
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'http.https://git.example.test/.extraHeader',
        GIT_CONFIG_VALUE_0: header,
      });
    }
  });

  it('allows plain http only when the base URL is http, and never prompts or reads user config', () => {
    const https = buildGitFetchCommand({ ...base, baseUrl: 'https://git.example.test', authScheme: 'basic' });
    const http = buildGitFetchCommand({ ...base, baseUrl: 'http://127.0.0.1:9', authScheme: 'basic' });
    expect(https.args).toContain('protocol.http.allow=never');
    expect(http.args).toContain('protocol.http.allow=always');
    expect(https.args).toContain('protocol.allow=never');
    expect(https.args).toContain('credential.helper=');
    expect(https.env).toMatchObject({
      GIT_TERMINAL_PROMPT: '0',
      GCM_INTERACTIVE: 'never',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: '/tmp/vigil-git-x/home',
      PATH: '/usr/bin',
    });
    expect(https.env).not.toHaveProperty('GIT_DIR');
    expect(https.env).not.toHaveProperty('GIT_TRACE_CURL');
    expect(https.env).not.toHaveProperty('SECRET');
  });
});

describe('redactSecret', () => {
  it('removes the token and its Basic-encoded form', () => {
    const basic = formatAuthorization(TOKEN, 'basic');
    expect(redactSecret(`token ${TOKEN} and header ${basic}`, TOKEN)).toBe(
      'token [REDACTED] and header Basic [REDACTED]',
    );
  });
});

describe('parseRepositoryRef', () => {
  it('accepts owner/name with letters, digits, dots, dashes and underscores', () => {
    expect(parseRepositoryRef('Acme-Labs/vault_v2.core')).toEqual({
      owner: 'Acme-Labs',
      name: 'vault_v2.core',
      fullName: 'Acme-Labs/vault_v2.core',
    });
    expect(parseRepositoryRef('acme/vault.git').fullName).toBe('acme/vault');
  });

  it('refuses URLs, other notations and paths of another depth with a 422', () => {
    const refs = [
      'https://elsewhere.example/acme/vault',
      'git@elsewhere.example:acme/vault.git',
      'a/b/c',
      'acme',
      'acme/',
      '/vault',
      'acme/..',
      'acme/vault.',
      '-acme/vault',
      'ac me/vault',
      `acme/${'x'.repeat(101)}`,
    ];
    for (const ref of refs) {
      let caught: unknown;
      try {
        parseRepositoryRef(ref);
      } catch (err) {
        caught = err;
      }
      expect(caught, ref).toMatchObject({ code: 'UNSUPPORTED_REPOSITORY_TYPE', status: 422 });
    }
  });
});

/** The command line and environment of every process this user can see. */
async function readProcesses(): Promise<Array<{ commandLine: string; environment: string }>> {
  const processes: Array<{ commandLine: string; environment: string }> = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const [commandLine, environment] = await Promise.all(
        ['cmdline', 'environ'].map(async (file) =>
          (await readFile(join('/proc', entry, file))).toString('utf8').replaceAll('\0', ' '),
        ),
      );
      processes.push({ commandLine: commandLine ?? '', environment: environment ?? '' });
    } catch {
      // The process ended while the list was read.
    }
  }
  return processes;
}
