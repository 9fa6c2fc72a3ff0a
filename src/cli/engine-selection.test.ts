import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRulesUrl } from '../config.ts';
import { RULES_DOC_URL } from '../engine/report/common.ts';
import { type EngineCommandDeps, registerEngineCommands } from './engine.ts';

const VULNERABLE = `pragma solidity ^0.4.24;
contract Kill { function kill() public { selfdestruct(msg.sender); } }
`;
const SKIPPED =
  'Solidity rules skipped 2 test or script file(s) under *.t.sol, test/ (their secrets were scanned); use --include-tests or include_tests = true in vigil.toml to include them.';

interface Sast {
  scan: { messages?: Array<{ level: string; value: string }> };
  vulnerabilities: Array<{ location: { file: string }; identifiers: Array<{ type: string; url?: string }> }>;
}
interface Sarif {
  runs: Array<{
    tool: { driver: { informationUri: string; rules: Array<{ id: string; helpUri: string }> } };
    results: Array<{
      ruleId: string;
      locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }>;
    }>;
    invocations?: Array<{ toolExecutionNotifications?: Array<{ level: string; message: { text: string } }> }>;
  }>;
}

describe('vigil engine scan: what is reported, and where rules link', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vigil-cli-selection-'));
    const files: Record<string, string> = {
      'contracts/Kill.sol': VULNERABLE,
      'test/KillTest.sol': VULNERABLE,
      'contracts/Kill.t.sol': VULNERABLE,
      'lib/dep/Kill.sol': VULNERABLE,
      'app/config.js': 'const id = "AKIAQYLPMN5HHHFPZAM2";\n',
    };
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), content);
    }
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], register: (program: Command, deps: EngineCommandDeps) => void) {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const program = new Command().exitOverride();
    register(program, { stdout, stderr: new PassThrough() });
    await program.parseAsync(['node', 'vigil', 'engine', 'scan', dir, ...args]);
    return out;
  }
  const plain = (program: Command, deps: EngineCommandDeps) => registerEngineCommands(program, deps);
  // As registerEngineCommandsFromEnv configures the commands, with the test's streams.
  const fromEnv = (env: NodeJS.ProcessEnv) => (program: Command, deps: EngineCommandDeps) =>
    registerEngineCommands(program, { ...deps, rulesUrl: loadRulesUrl(env) });

  it('says what it skipped in the table, the SAST report and the SARIF log', async () => {
    const table = await run([], plain);
    expect(table).toContain(`info: ${SKIPPED}`);
    expect(table).toContain('info: 1 file(s) of vendored packages under lib/ were not scanned.');
    expect(table).toMatch(/contracts\/Kill\.sol:2/);
    expect(table).toMatch(/app\/config\.js:1/);
    expect(table).not.toMatch(/test\/KillTest\.sol|Kill\.t\.sol|lib\/dep/);

    const sast = JSON.parse(await run(['--format', 'sast'], plain)) as Sast;
    expect(sast.scan.messages).toContainEqual({ level: 'info', value: SKIPPED });
    expect(new Set(sast.vulnerabilities.map((v) => v.location.file))).toEqual(
      new Set(['contracts/Kill.sol', 'app/config.js']),
    );

    const sarif = JSON.parse(await run(['--format', 'sarif'], plain)) as Sarif;
    expect(sarif.runs[0]!.invocations?.[0]?.toolExecutionNotifications).toContainEqual({
      level: 'note',
      message: { text: SKIPPED },
    });
  });

  it('reports tests and scripts with --include-tests', async () => {
    const sast = JSON.parse(await run(['--format', 'sast', '--include-tests'], plain)) as Sast;
    expect(new Set(sast.vulnerabilities.map((v) => v.location.file))).toEqual(
      new Set(['contracts/Kill.sol', 'contracts/Kill.t.sol', 'test/KillTest.sol', 'app/config.js']),
    );
    expect(sast.scan.messages?.some((m) => m.value.startsWith('Solidity rules skipped'))).toBe(false);
  });

  it('links the rule catalogue of the repository without a public URL, never localhost', async () => {
    for (const register of [plain, fromEnv({ PORT: '3000' }), fromEnv({})]) {
      const sast = await run(['--format', 'sast'], register);
      const sarif = await run(['--format', 'sarif'], register);
      expect(sast).not.toContain('localhost');
      expect(sarif).not.toContain('localhost');
      const rule = (JSON.parse(sast) as Sast).vulnerabilities
        .flatMap((v) => v.identifiers)
        .find((i) => i.type === 'vigil_rule' && i.url?.includes('selfdestruct'));
      expect(rule?.url).toBe(`${RULES_DOC_URL}#solaccessunprotected-selfdestruct`);
      const driver = (JSON.parse(sarif) as Sarif).runs[0]!.tool.driver;
      expect(driver.informationUri).toBe(RULES_DOC_URL);
      for (const r of driver.rules) expect(r.helpUri.startsWith(`${RULES_DOC_URL}#`)).toBe(true);
    }
  });

  it('links the rule pages of the configured public URL (VIGIL_PUBLIC_URL or --public-url)', async () => {
    const env = await run(['--format', 'sarif'], fromEnv({ VIGIL_PUBLIC_URL: 'https://vigil.example.com/' }));
    const driver = (JSON.parse(env) as Sarif).runs[0]!.tool.driver;
    expect(driver.informationUri).toBe('https://vigil.example.com/docs/rules');
    expect(driver.rules.map((r) => r.helpUri)).toContain(
      'https://vigil.example.com/docs/rules/sol.access.unprotected-selfdestruct',
    );
    const option = await run(['--format', 'sast', '--public-url', 'https://scan.example.org'], plain);
    const urls = (JSON.parse(option) as Sast).vulnerabilities.flatMap((v) =>
      v.identifiers.filter((i) => i.type === 'vigil_rule').map((i) => i.url),
    );
    expect(urls).toContain('https://scan.example.org/docs/rules/sol.access.unprotected-selfdestruct');
    await expect(run(['--public-url', 'ftp://x'], plain)).rejects.toThrow(/http:\/\/ or https:\/\//);
  });
});
