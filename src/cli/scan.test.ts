import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeGitServer } from '../../test/fakes/git-server.ts';
import { sharedTestApp } from '../../test/helpers/app.ts';
import {
  buildCompany,
  buildServiceKey,
  connectSourcehost,
  grantCredits,
} from '../../test/helpers/factories.ts';
import { REENTRANT_BANK } from '../../test/helpers/scan-helpers.ts';
import { UsageError } from './cli-error.ts';
import { CliError } from './http-client.ts';
import { runScanCommand, type ScanCommandOptions, type ScanDeps } from './scan.ts';
import { packDirectory } from './scan-sources.ts';

const sample = path.resolve(import.meta.dirname, '../../examples/sample-project');
let url: string;
let work: string;

const t = sharedTestApp({ worker: true, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  work = await mkdtemp(path.join(os.tmpdir(), 'vigil-scan-cli-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Captured output, recorded requests and waits of one run; requests go to the test server. */
function harness(options: { fetch?: (request: Request) => Promise<Response> } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const requests: Array<{ method: string; path: string; idempotencyKey: string | null }> = [];
  const sleeps: number[] = [];
  const inner = options.fetch ?? ((request: Request) => fetch(request));
  const deps: ScanDeps = {
    fetch: async (request) => {
      requests.push({
        method: request.method,
        path: new URL(request.url).pathname,
        idempotencyKey: request.headers.get('idempotency-key'),
      });
      return inner(request);
    },
    sleep: async (ms) => {
      // The injected clock: each wait is recorded, and paced by 50 ms of real time so that the
      // scan's worker runs meanwhile without the polls exhausting the key's rate limit.
      sleeps.push(ms);
      await new Promise((resolve) => setTimeout(resolve, 50));
    },
    pollIntervalMs: 1000,
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s), isTTY: false },
  };
  return { deps, out, err, requests, sleeps };
}

let configCount = 0;
const envFor = () => ({ VIGIL_CONFIG_DIR: path.join(work, `config-${++configCount}`) });

async function tenant(credits: number) {
  const company = await buildCompany(t);
  const key = await buildServiceKey(t, { companyId: company.id });
  if (credits > 0) await grantCredits(t, company.id, credits);
  return { company, key: key.key };
}

async function credits(key: string) {
  const res = await fetch(`${url}/api/scanner/v1/credits`, { headers: { 'x-api-key': key } });
  return (await res.json()) as { used: number; reserved: number; remaining: number };
}

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(work, 'src-'));
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

const base = (key: string, extra: Partial<ScanCommandOptions> = {}): ScanCommandOptions => ({
  url,
  key,
  timeout: '600',
  ...extra,
});

describe('vigil scan: a full run', () => {
  it('writes every format, and exits 1 at or above --fail-on and 0 below it', async () => {
    const { key } = await tenant(20);
    const sast = harness();
    const output = path.join(work, 'report.json');
    expect(await runScanCommand(sample, base(key, { output, failOn: 'high' }), envFor(), sast.deps)).toBe(1);
    const report = JSON.parse(await readFile(output, 'utf8'));
    expect(report.vulnerabilities.some((v: { severity: string }) => v.severity === 'High')).toBe(true);
    expect(sast.err.join('')).toMatch(/\d+ findings; [1-9]\d* at or above High/);
    expect(sast.err.join('')).toMatch(/^uploading .*\nuploaded\n/m);

    const sarif = harness();
    const sarifFile = path.join(work, 'r.sarif');
    const code = await runScanCommand(
      sample,
      base(key, { format: 'sarif', output: sarifFile, failOn: 'never' }),
      envFor(),
      sarif.deps,
    );
    expect(code).toBe(0);
    expect(JSON.parse(await readFile(sarifFile, 'utf8')).version).toBe('2.1.0');
    // The report is read once, as SARIF.
    expect(sarif.requests.filter((r) => r.path.endsWith('/findings'))).toHaveLength(1);
    expect(sarif.err.join('')).toMatch(/[1-9]\d* findings \(--fail-on never\)/);
    const sarifHigh = harness();
    expect(
      await runScanCommand(
        sample,
        base(key, { format: 'sarif', output: sarifFile, failOn: 'high' }),
        envFor(),
        sarifHigh.deps,
      ),
    ).toBe(1);
    expect(sarifHigh.err.join('')).toMatch(/\d+ findings; [1-9]\d* at or above High/);

    const table = harness();
    expect(
      await runScanCommand(sample, base(key, { format: 'table', failOn: 'Critical' }), envFor(), table.deps),
    ).toBe(0);
    expect(table.out.join('')).toMatch(/^SEVERITY\s+FINDING\s+LOCATION\s+ID\n(High|Critical|Medium)/);

    const json = harness();
    await runScanCommand(sample, base(key, { format: 'json' }), envFor(), json.deps);
    const summary = JSON.parse(json.out.join(''));
    expect(summary.scan.status).toBe('completed');
    expect(summary.failOn).toBe('High');
    expect(summary.vulnerabilities.length).toBe(report.vulnerabilities.length);
  });

  it('scans a sourcehost commit with --repo and --commit, without uploading', async () => {
    const git = await startFakeGitServer({ token: 'git-token' });
    try {
      const { commit } = await git.createRepository('acme/bank', { 'contracts/Bank.sol': REENTRANT_BANK });
      const { company, key } = await tenant(10);
      await connectSourcehost(t, company.id, { baseUrl: git.baseUrl, token: 'git-token' });
      const h = harness();
      const code = await runScanCommand(
        undefined,
        base(key, { repo: 'acme/bank', commit, type: 'lite', format: 'sast' }),
        envFor(),
        h.deps,
      );
      expect([0, 1]).toContain(code);
      expect(h.requests.some((r) => r.path.includes('source-uploads'))).toBe(false);
      expect(JSON.parse(h.out.join('')).vulnerabilities).toBeInstanceOf(Array);
    } finally {
      await git.close();
    }
  });
});

describe('vigil scan --baseline', () => {
  it('fails a run against a baseline only for what it brings, and for every open finding with --fail-on-all', async () => {
    const { key } = await tenant(20);
    const first = harness();
    expect(
      await runScanCommand(sample, base(key, { branch: 'main', failOn: 'high' }), envFor(), first.deps),
    ).toBe(1);
    // The same sources against main: every High is already there, so nothing new fails the run.
    const same = harness();
    expect(
      await runScanCommand(sample, base(key, { baseline: 'main', failOn: 'high' }), envFor(), same.deps),
    ).toBe(0);
    expect(same.err.join('')).toMatch(/\d+ findings; 0 new at or above High/);
    // A plain run and --fail-on-all still count the Highs nobody dismissed.
    const plain = harness();
    expect(await runScanCommand(sample, base(key, { failOn: 'high' }), envFor(), plain.deps)).toBe(1);
    const all = harness();
    expect(
      await runScanCommand(
        sample,
        base(key, { baseline: 'main', failOn: 'high', failOnAll: true }),
        envFor(),
        all.deps,
      ),
    ).toBe(1);
    expect(all.err.join('')).toMatch(/\d+ findings; [1-9]\d* at or above High/);
  });
});

describe('vigil scan: a project without Solidity', () => {
  const LEAKED = 'export const aws = { accessKeyId: "AKIAQYLPMN5HHHFPZAM2" };\n';

  it('is scanned for secrets: exit 1 at --fail-on with a leaked key, 0 when clean', async () => {
    const { key } = await tenant(20);
    const leaky = await project({
      'package.json': '{"name":"app"}\n',
      'src/config.js': LEAKED,
      'test/fixtures.js': LEAKED,
      'lib/vendored/keys.js': LEAKED,
    });
    const h = harness();
    expect(await runScanCommand(leaky, base(key, { format: 'json' }), envFor(), h.deps)).toBe(1);
    const { vulnerabilities } = JSON.parse(h.out.join('')) as {
      vulnerabilities: Array<{
        severity: string;
        location: { file: string };
        identifiers: Array<{ value: string }>;
      }>;
    };
    // Secrets are looked for in tests too, never in vendored packages.
    expect(vulnerabilities.map((v) => [v.location.file, v.identifiers[0]?.value]).sort()).toEqual([
      ['src/config.js', 'secret.aws-access-key'],
      ['test/fixtures.js', 'secret.aws-access-key'],
    ]);
    expect(h.err.join('')).toMatch(/2 findings; 2 at or above High with medium confidence or more/);

    const clean = await project({
      'package.json': '{"name":"app"}\n',
      'src/index.js': 'export const x = 1;\n',
    });
    const ok = harness();
    expect(await runScanCommand(clean, base(key, { format: 'sarif' }), envFor(), ok.deps)).toBe(0);
    const sarif = JSON.parse(ok.out.join('')) as { runs: Array<{ results: unknown[] }> };
    expect(sarif.runs[0]!.results).toEqual([]);
    expect(ok.err.join('')).toMatch(/0 findings; 0 at or above High/);
  });

  it('says in the report which Solidity files the rules skipped, and links no localhost', async () => {
    const { key } = await tenant(20);
    const dir = await project({
      'src/Bank.sol': REENTRANT_BANK,
      'test/Bank.t.sol': REENTRANT_BANK,
      'script/Deploy.s.sol': REENTRANT_BANK,
    });
    const h = harness();
    await runScanCommand(dir, base(key, { format: 'sast', failOn: 'never' }), envFor(), h.deps);
    const report = JSON.parse(h.out.join('')) as {
      scan: { messages?: Array<{ value: string }> };
      vulnerabilities: Array<{ location: { file: string } }>;
    };
    expect(new Set(report.vulnerabilities.map((v) => v.location.file))).toEqual(new Set(['src/Bank.sol']));
    expect(report.scan.messages?.map((m) => m.value)).toContain(
      'Solidity rules skipped 2 test or script file(s) under script/, test/ (their secrets were scanned); use --include-tests or include_tests = true in vigil.toml to include them.',
    );
    expect(h.out.join('')).not.toContain('localhost');

    // vigil.toml in the uploaded sources asks for the tests.
    await writeFile(path.join(dir, 'vigil.toml'), 'include_tests = true\n');
    const withTests = harness();
    await runScanCommand(dir, base(key, { format: 'sarif', failOn: 'never' }), envFor(), withTests.deps);
    const sarif = JSON.parse(withTests.out.join('')) as {
      runs: Array<{
        results: Array<{ locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }> }>;
      }>;
    };
    expect(
      new Set(sarif.runs[0]!.results.map((r) => r.locations[0]!.physicalLocation.artifactLocation.uri)),
    ).toEqual(new Set(['src/Bank.sol', 'test/Bank.t.sol', 'script/Deploy.s.sol']));
  });
});

describe('vigil scan --fail-on-confidence', () => {
  // A payout read from a variable another function sets: a medium finding of low confidence.
  const MUTABLE_PAYOUT = `pragma solidity 0.8.20;
contract Reward { address owner; uint reward;
  function setReward() public payable { require(msg.sender == owner); reward = msg.value; }
  function claim(uint answer) public { require(answer < 10); payable(msg.sender).transfer(reward); }
}
`;
  const RANK: Record<string, number> = { Info: 0, Unknown: 0, Low: 1, Medium: 2, High: 3, Critical: 4 };
  const CONFIDENCE: Record<string, number> = { low: 0, medium: 1, high: 2 };

  it('counts findings of medium confidence and above for --fail-on unless told otherwise', async () => {
    const { key } = await tenant(20);
    const dir = await project({ 'contracts/Reward.sol': MUTABLE_PAYOUT });
    const all = harness();
    await runScanCommand(
      dir,
      base(key, { format: 'json', failOn: 'never', failOnConfidence: 'low' }),
      envFor(),
      all.deps,
    );
    const found = (
      JSON.parse(all.out.join('')) as {
        vulnerabilities: Array<{ severity: string; details: { confidence: { value: string } } }>;
      }
    ).vulnerabilities.map((v) => ({
      rank: RANK[v.severity] ?? 0,
      confidence: CONFIDENCE[v.details.confidence.value]!,
    }));
    const failing = (confidence: number) =>
      found.filter((v) => v.rank >= RANK.Medium! && v.confidence >= confidence).length;
    // The project is chosen for a Medium-or-above finding that only --fail-on-confidence low counts.
    expect(failing(0)).toBeGreaterThan(failing(1));

    for (const [failOnConfidence, least] of [
      [undefined, 1],
      ['low', 0],
      ['medium', 1],
      ['high', 2],
    ] as const) {
      const h = harness();
      const code = await runScanCommand(
        dir,
        base(key, { format: 'sarif', failOn: 'Medium', ...(failOnConfidence ? { failOnConfidence } : {}) }),
        envFor(),
        h.deps,
      );
      expect(code).toBe(failing(least) > 0 ? 1 : 0);
      expect(h.err.join('')).toContain(`; ${failing(least)} at or above Medium`);
    }
  });
});

describe('vigil scan: mistakes are refused before any network call (exit 2)', () => {
  const noNetwork = () =>
    harness({
      fetch: async () => {
        throw new Error('no request may be sent');
      },
    });
  const cases: Array<[string, string | undefined, Partial<ScanCommandOptions>, RegExp]> = [
    [
      'an unknown --fail-on',
      sample,
      { failOn: 'foo' },
      /--fail-on must be one of Critical, High, Medium, Low, Info, never/,
    ],
    [
      'an unknown --type',
      sample,
      { type: 'bogus' },
      /--type must be one of lite, standard, audit \(got "bogus"\)/,
    ],
    ['lite on a local directory', sample, { type: 'lite' }, /local sources support standard only/],
    [
      'audit on a local directory',
      sample,
      { type: 'audit' },
      /--type audit is not available for a local directory/,
    ],
    ['an unknown --format', sample, { format: 'xml' }, /--format must be one of table, json, sarif, sast/],
    [
      'a directory that does not exist',
      'examples/nonexistent',
      {},
      /examples\/nonexistent: no such directory/,
    ],
    [
      'a file instead of a directory',
      path.join(sample, 'contracts/Vault.sol'),
      {},
      /is a file, not a directory. Pass the folder that contains it/,
    ],
    [
      '--repo without --commit',
      undefined,
      { repo: 'acme/bank' },
      /--repo owner\/name and --commit SHA go together/,
    ],
    ['a short commit', undefined, { repo: 'acme/bank', commit: 'abc123' }, /full 40-character commit SHA/],
    ['a bad --timeout', sample, { timeout: 'soon' }, /--timeout must be a whole number/],
    ['nothing to scan', undefined, {}, /Say what to scan/],
    [
      'an unknown --fail-on-confidence',
      sample,
      { failOnConfidence: 'sure' },
      /--fail-on-confidence must be one of low, medium, high \(got "sure"\)/,
    ],
    [
      '--include-tests, which the server reads from vigil.toml',
      sample,
      { includeTests: true },
      /put "include_tests = true" in a vigil\.toml at the root of/,
    ],
  ];
  for (const [name, dir, extra, message] of cases) {
    it(`refuses ${name}`, async () => {
      const h = noNetwork();
      const run = runScanCommand(dir, base('vgl_sk_x', extra), envFor(), h.deps);
      await expect(run).rejects.toThrow(message);
      await expect(run).rejects.toBeInstanceOf(UsageError);
      await expect(run).rejects.toMatchObject({ exitCode: 2 });
      expect(h.requests).toEqual([]);
    });
  }

  it('refuses a directory with nothing to scan before anything is charged', async () => {
    const dir = await project({ '.gitignore': '*\n', 'node_modules/x/A.sol': 'contract A {}' });
    const h = noNetwork();
    await expect(runScanCommand(dir, base('vgl_sk_x'), envFor(), h.deps)).rejects.toThrow(
      /Nothing to scan in .*no files after \.gitignore and the default excludes.*Nothing was uploaded or charged/,
    );
    expect(h.requests).toEqual([]);
  });

  it('refuses a vigil.toml the server could not use, with the line to fix, before anything is charged', async () => {
    const dir = await project({ 'src/Bank.sol': REENTRANT_BANK, 'vigil.toml': 'include_tests = yes\n' });
    const h = noNetwork();
    const run = runScanCommand(dir, base('vgl_sk_x'), envFor(), h.deps);
    await expect(run).rejects.toThrow(
      /^vigil\.toml line 1: include_tests must be true or false\. Nothing was uploaded or charged\.$/,
    );
    await expect(run).rejects.toBeInstanceOf(UsageError);
    // Under a workspace prefix the settings of that folder are read, as the server reads them.
    const nested = await project({ 'pkg/src/A.sol': REENTRANT_BANK, 'pkg/vigil.toml': '[scan]\n' });
    await expect(
      runScanCommand(nested, base('vgl_sk_x', { prefix: 'pkg' }), envFor(), h.deps),
    ).rejects.toThrow(/vigil\.toml line 1: tables are not supported/);
    expect(h.requests).toEqual([]);
  });

  it('--dry-run counts the Solidity files the rules will read, tests and vendored packages left out', async () => {
    const dir = await project({
      'src/A.sol': 'contract A {}',
      'test/A.t.sol': 'contract T {}',
      'lib/dep/B.sol': 'contract B {}',
      '.vigilignore': 'legacy/\n',
      'legacy/Old.sol': 'contract O {}',
    });
    const h = noNetwork();
    expect(await runScanCommand(dir, { dryRun: true }, envFor(), h.deps)).toBe(0);
    expect(h.err.join('')).toMatch(/4 Solidity files, 1 of them for the Solidity rules/);
    await writeFile(path.join(dir, 'vigil.toml'), 'include_tests = true\n');
    const again = noNetwork();
    expect(await runScanCommand(dir, { dryRun: true }, envFor(), again.deps)).toBe(0);
    expect(again.err.join('')).toMatch(/4 Solidity files, 2 of them for the Solidity rules/);
  });

  it('refuses a missing, malformed or user key before packing', async () => {
    const h = noNetwork();
    await expect(runScanCommand(sample, { url }, envFor(), h.deps)).rejects.toThrow(
      /VIGIL_API_KEY.*vigil login/,
    );
    await expect(runScanCommand(sample, base('vgl_sk_abc'), envFor(), h.deps)).rejects.toThrow(
      /service key is malformed: expected "vgl_sk_" and 40 letters and digits/,
    );
    await expect(runScanCommand(sample, base(`vgl_u_${'a'.repeat(40)}`), envFor(), h.deps)).rejects.toThrow(
      /That is a user token/,
    );
    expect(h.requests).toEqual([]);
  });

  it('--dry-run lists what would be packed, honouring .gitignore and the default excludes', async () => {
    const dir = await project({
      '.gitignore': 'secrets/\n*.log\n',
      'contracts/A.sol': 'contract A {}',
      'contracts/.gitignore': 'generated.sol\n',
      'contracts/generated.sol': 'contract G {}',
      'secrets/key.txt': 'x',
      'debug.log': 'x',
      'node_modules/dep/B.sol': 'contract B {}',
      'out/C.sol': 'contract C {}',
    });
    const h = noNetwork();
    expect(await runScanCommand(dir, { dryRun: true }, envFor(), h.deps)).toBe(0);
    const listed = h.out
      .join('')
      .trim()
      .split('\n')
      .map((l) => l.split('\t')[0]);
    expect(listed).toEqual(['.gitignore', 'contracts/.gitignore', 'contracts/A.sol']);
    expect(h.err.join('')).toMatch(
      /3 files .* would be packed; 1 Solidity files, 1 of them for the Solidity rules .*\. Nothing was uploaded/,
    );
    expect(h.requests).toEqual([]);
  });
});

describe('vigil scan: the key and credits are checked before packing', () => {
  it('stops on an unknown key with the server’s answer and what to do', async () => {
    const h = harness();
    await expect(runScanCommand(sample, base(`vgl_sk_${'Z'.repeat(40)}`), envFor(), h.deps)).rejects.toThrow(
      /Checking the service key failed \(401\): Unknown service key.*Check the key/,
    );
    expect(h.requests.map((r) => r.path)).toEqual(['/api/scanner/v1/credits']);
  });

  it('stops without credits before uploading', async () => {
    const { key } = await tenant(0);
    const h = harness();
    await expect(runScanCommand(sample, base(key), envFor(), h.deps)).rejects.toThrow(
      /A standard scan is not available: .*0 remaining\). Ask your manager for credits; nothing was uploaded/,
    );
    expect(h.requests.map((r) => r.path)).toEqual(['/api/scanner/v1/credits']);
  });
});

describe('vigil scan: retries', () => {
  it('waits Retry-After on 429 and 503, then goes on', async () => {
    const { key } = await tenant(0);
    const answers = [
      new Response('{"error":"slow down","code":"RATE_LIMITED"}', {
        status: 429,
        headers: { 'retry-after': '7' },
      }),
      new Response('{"error":"busy","code":"UNAVAILABLE"}', { status: 503, headers: { 'retry-after': '3' } }),
    ];
    const h = harness({ fetch: async (request) => answers.shift() ?? fetch(request) });
    await expect(runScanCommand(sample, base(key), envFor(), h.deps)).rejects.toThrow(/not available/);
    expect(h.sleeps).toEqual([7000, 3000]);
    expect(h.err.join('')).toMatch(/429 from the server; retrying in 7 s/);
  });

  it('backs off on network errors, then fails clearly', async () => {
    const h = harness({
      fetch: async () => {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
        });
      },
    });
    await expect(runScanCommand(sample, base(`vgl_sk_${'a'.repeat(40)}`), envFor(), h.deps)).rejects.toThrow(
      /Cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\) after 5 attempts/,
    );
    expect(h.sleeps).toEqual([500, 1000, 2000, 4000]);
  });
});

describe('vigil scan --resume', () => {
  it('continues an interrupted run with the same Idempotency-Key and pays once', async () => {
    const { key } = await tenant(10);
    const env = envFor();
    const dir = await project({ 'contracts/Bank.sol': REENTRANT_BANK });
    // The scan request reaches the server, but the answer is lost (the connection drops).
    const lost = harness({
      fetch: async (request) => {
        const response = await fetch(request);
        if (request.method === 'POST' && new URL(request.url).pathname === '/api/scanner/v1/scans')
          throw new TypeError('fetch failed', {
            cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
          });
        return response;
      },
    });
    lost.deps.retry = { attempts: 1 };
    await expect(runScanCommand(dir, base(key), env, lost.deps)).rejects.toBeInstanceOf(CliError);
    const after = await credits(key);
    expect(after.used + after.reserved).toBe(2);

    const resumed = harness();
    const code = await runScanCommand(dir, base(key, { resume: true, failOn: 'never' }), env, resumed.deps);
    expect(code).toBe(0);
    const firstKey = lost.requests.find((r) => r.path === '/api/scanner/v1/scans')?.idempotencyKey;
    const secondKey = resumed.requests.find((r) => r.path === '/api/scanner/v1/scans')?.idempotencyKey;
    expect(firstKey).toMatch(/^vigil-cli-/);
    expect(secondKey).toBe(firstKey);
    expect(resumed.requests.some((r) => r.path.includes('source-uploads'))).toBe(false);
    expect(resumed.err.join('')).toMatch(/resuming: the sources are unchanged and already uploaded/);
    const final = await credits(key);
    expect(final.used + final.reserved).toBe(2);
  });
});

describe('vigil scan on a terminal', () => {
  it('draws an upload progress bar and a live status line in place', async () => {
    const { key } = await tenant(10);
    const dir = await project({ 'contracts/Bank.sol': REENTRANT_BANK });
    const h = harness();
    h.deps.stderr = { write: (text: string) => h.err.push(text), isTTY: true };
    expect(await runScanCommand(dir, base(key, { failOn: 'never' }), envFor(), h.deps)).toBe(0);
    // Each redraw goes back to the start of the line and clears it (CR, ESC [K).
    const drawn = h.err.join('').replaceAll('\r\u001b[K', '<redraw>');
    expect(drawn).toMatch(/<redraw>uploading \[#+\] 100% /);
    expect(drawn).toMatch(/<redraw>scan (preparing|queued|running|completed): \d+\/\d+ files, \d+ findings/);
    expect(drawn).not.toMatch(/^uploading \d/m);
  });
});

describe('packing', () => {
  it('packs regular files and skips dependency folders', async () => {
    const dir = await project({ 'A.sol': 'contract A {}', 'node_modules/x/B.sol': 'contract B {}' });
    const { files } = await packDirectory(dir, path.join(work, 'a.tar.gz'));
    expect(files).toBe(1);
  });
});
