import { describe, expect, it } from 'vitest';
import { isAppError } from '../../errors.ts';
import { analyzeTree, buildThreatModel, scanTree } from '../index.ts';
import { memoryTree } from '../test-helpers.ts';
import {
  classifyPath,
  defaultSelectionSettings,
  loadSelectionSettings,
  ProjectSettingsError,
  parseVigilToml,
  type SelectionSettings,
} from './selection.ts';

const defaults = defaultSelectionSettings();

describe('classifyPath', () => {
  it.each([
    ['contracts/Vault.sol', 'report'],
    ['src/Token.sol', 'report'],
    ['test/Vault.t.sol', 'test'],
    ['tests/Vault.sol', 'test'],
    ['mocks/MockToken.sol', 'test'],
    ['mock/MockToken.sol', 'test'],
    ['script/Deploy.s.sol', 'test'],
    ['src/test/Helper.sol', 'test'],
    ['packages/core/Test/Case.sol', 'test'],
    ['src/Vault.t.sol', 'test'],
    ['src/Deploy.s.sol', 'test'],
    ['lib/forge-std/src/Test.sol', 'vendored'],
    ['lib/openzeppelin-contracts/contracts/token/ERC20/ERC20.sol', 'vendored'],
    ['node_modules/@openzeppelin/contracts/access/Ownable.sol', 'vendored'],
    ['packages/app/node_modules/x/index.js', 'vendored'],
    ['test/node_modules/x/A.sol', 'vendored'],
    ['vendor/forge-std/src/Test.sol', 'vendored'],
    ['src/v0.8/vendor/openzeppelin-solidity/v4.8.3/contracts/utils/Address.sol', 'vendored'],
    ['contracts/vendors/Oracle.sol', 'report'],
    ['contracts/Vendor/VendorPayouts.sol', 'report'],
    ['app/config.js', 'report'],
    ['test/fixtures.js', 'test'],
  ] as const)('%s is %s', (path, expected) => {
    expect(classifyPath(path, defaults)).toBe(expected);
  });

  it('matches whole path segments only', () => {
    expect(classifyPath('contests/Contest.sol', defaults)).toBe('report');
    expect(classifyPath('testing/Helper.sol', defaults)).toBe('report');
    expect(classifyPath('scripts/deploy.js', defaults)).toBe('report');
    expect(classifyPath('contracts/Attest.sol', defaults)).toBe('report');
    expect(classifyPath('contracts/libs/Math.sol', defaults)).toBe('report');
    // A file named like a folder is not in it.
    expect(classifyPath('contracts/test', defaults)).toBe('report');
    expect(classifyPath('contracts/Test.sol', defaults)).toBe('report');
  });

  it('takes lib/ as vendored at the root and beside a foundry.toml only', () => {
    expect(classifyPath('contracts/lib/SafeMath.sol', defaults)).toBe('report');
    const foundry: SelectionSettings = { ...defaults, packageRoots: new Set(['', 'packages/vault']) };
    expect(classifyPath('packages/vault/lib/solmate/src/ERC20.sol', foundry)).toBe('vendored');
    expect(classifyPath('packages/other/lib/Math.sol', foundry)).toBe('report');
  });

  it('reports tests when they are included, never vendored packages', () => {
    const included = defaultSelectionSettings({ includeTests: true });
    expect(classifyPath('test/Vault.t.sol', included)).toBe('report');
    expect(classifyPath('script/Deploy.s.sol', included)).toBe('report');
    expect(classifyPath('lib/forge-std/src/Test.sol', included)).toBe('vendored');
    expect(classifyPath('node_modules/x/test/A.sol', included)).toBe('vendored');
  });
});

describe('parseVigilToml', () => {
  it('reads include_tests and exclude, with comments and arrays over several lines', () => {
    expect(
      parseVigilToml(
        [
          '# Vigil settings',
          'include_tests = true  # the tests are part of the audit',
          'exclude = [',
          '  "generated/",  # code generators',
          "  'legacy/**',",
          '  "weird \\"name\\".sol",',
          ']',
          '',
        ].join('\n'),
      ),
    ).toEqual({ includeTests: true, exclude: ['generated/', 'legacy/**', 'weird "name".sol'] });
    expect(parseVigilToml('exclude = ["a/", "b/"]\ninclude_tests = false')).toEqual({
      includeTests: false,
      exclude: ['a/', 'b/'],
    });
    expect(parseVigilToml('')).toEqual({});
  });

  it.each([
    ['rules_url = "https://x"', /line 1: unknown key "rules_url".*include_tests.*exclude/],
    ['[scan]\ninclude_tests = true', /line 1: tables are not supported/],
    ['include_tests = "yes"', /line 1: include_tests must be true or false/],
    ['exclude = "generated/"', /line 1: exclude must be an array of strings/],
    ['exclude = [1, 2]', /line 1: exclude must hold strings only/],
    ['exclude = [\n"a/",\n', /line 1: exclude: the array is not closed/],
    ['include_tests = true\ninclude_tests = false', /line 2: include_tests is set twice/],
    ['just words', /line 1: expected key = value/],
  ])('refuses %j', (text, message) => {
    expect(() => parseVigilToml(text)).toThrow(message);
    expect(() => parseVigilToml(text)).toThrow(ProjectSettingsError);
  });
});

describe('loadSelectionSettings', () => {
  it('reads .vigilignore and vigil.toml from the root of the tree and finds Foundry projects', async () => {
    const tree = memoryTree({
      '.vigilignore': '# generated code\ngenerated/\n*.gen.sol\n',
      'vigil.toml': 'include_tests = true\nexclude = ["legacy/"]\n',
      'packages/vault/foundry.toml': '[profile.default]\n',
      'sub/vigil.toml': 'not = read',
    });
    const settings = await loadSelectionSettings(tree, await tree.list());
    expect(classifyPath('generated/Big.sol', settings)).toBe('ignored');
    expect(classifyPath('contracts/Token.gen.sol', settings)).toBe('ignored');
    expect(classifyPath('legacy/Old.sol', settings)).toBe('ignored');
    expect(classifyPath('test/Vault.t.sol', settings)).toBe('report');
    expect(classifyPath('packages/vault/lib/x/A.sol', settings)).toBe('vendored');
    expect(classifyPath('contracts/Vault.sol', settings)).toBe('report');
    expect(tree.reads).not.toContain('sub/vigil.toml');
  });

  it('reads them from the workspace prefix of a tree limited to one, patterns relative to it', async () => {
    const tree = memoryTree({
      'packages/vault/.vigilignore': 'gen/\n/top.sol\n',
      'packages/vault/vigil.toml': 'include_tests = true\n',
      'packages/vault/gen/Big.sol': '',
      'packages/vault/top.sol': '',
      'packages/vault/src/top.sol': '',
      'packages/vault/test/Vault.t.sol': '',
    });
    const settings = await loadSelectionSettings(tree, await tree.list());
    expect(classifyPath('packages/vault/gen/Big.sol', settings)).toBe('ignored');
    expect(classifyPath('packages/vault/top.sol', settings)).toBe('ignored');
    expect(classifyPath('packages/vault/src/top.sol', settings)).toBe('report');
    expect(classifyPath('packages/vault/test/Vault.t.sol', settings)).toBe('report');
    // Settings deeper than the top folder of the files are not read.
    const deeper = memoryTree({ 'a/vigil.toml': 'include_tests = true\n', 'b/test/T.sol': '' });
    const none = await loadSelectionSettings(deeper, await deeper.list());
    expect(classifyPath('b/test/T.sol', none)).toBe('test');
    expect(deeper.reads).toEqual([]);
  });

  it('lets --include-tests win over the file', async () => {
    const tree = memoryTree({ 'vigil.toml': 'include_tests = false\n' });
    const off = await loadSelectionSettings(tree, await tree.list());
    const on = await loadSelectionSettings(tree, await tree.list(), { includeTests: true });
    expect(classifyPath('test/A.sol', off)).toBe('test');
    expect(classifyPath('test/A.sol', on)).toBe('report');
  });
});

// A finding of `sol.access.tx-origin` wherever its rules run.
const TX_ORIGIN = `pragma solidity ^0.8.0;
contract Wallet {
  address owner;
  function pay(address payable to, uint amount) public {
    require(tx.origin == owner);
    to.transfer(amount);
  }
}
`;
const AWS_KEY = 'AWS_ACCESS_KEY_ID=AKIAQYLPMN5HHHFPZAM2\n';

describe('scanTree with the default selection', () => {
  const project = {
    'contracts/Wallet.sol': TX_ORIGIN,
    'test/Wallet.t.sol': `${TX_ORIGIN}// ${AWS_KEY}`,
    'mocks/MockWallet.sol': TX_ORIGIN,
    'script/Deploy.s.sol': TX_ORIGIN,
    'lib/forge-std/src/Wallet.sol': `${TX_ORIGIN}// ${AWS_KEY}`,
    'node_modules/pkg/index.js': AWS_KEY,
    'app/config.js': `const key = "${AWS_KEY.trim()}";\n`,
    'test/helpers.js': AWS_KEY,
  };
  const files = (r: Awaited<ReturnType<typeof scanTree>>, rule: RegExp) =>
    [...new Set(r.vulnerabilities.filter((v) => rule.test(v.ruleId)).map((v) => v.location.file))].sort();

  it('runs the Solidity rules on the project’s own files only, and looks for secrets in tests too', async () => {
    const r = await scanTree(memoryTree(project), { type: 'standard' });
    expect(files(r, /^sol\.access\.tx-origin$/)).toEqual(['contracts/Wallet.sol']);
    expect(files(r, /^secret\./)).toEqual(['app/config.js', 'test/Wallet.t.sol', 'test/helpers.js']);
    const values = r.messages.map((m) => m.value);
    expect(values).toContain(
      'Solidity rules skipped 3 test or script file(s) under mocks/, script/, test/ (their secrets were scanned); use --include-tests or include_tests = true in vigil.toml to include them.',
    );
    expect(values).toContain('2 file(s) of vendored packages under lib/, node_modules/ were not scanned.');
  });

  it('runs them on tests with includeTests or include_tests = true, never on vendored packages', async () => {
    const expected = [
      'contracts/Wallet.sol',
      'mocks/MockWallet.sol',
      'script/Deploy.s.sol',
      'test/Wallet.t.sol',
    ];
    const flag = await scanTree(memoryTree(project), { type: 'standard', includeTests: true });
    expect(files(flag, /^sol\.access\.tx-origin$/)).toEqual(expected);
    expect(flag.messages.some((m) => m.value.startsWith('Solidity rules skipped'))).toBe(false);
    const toml = await scanTree(memoryTree({ ...project, 'vigil.toml': 'include_tests = true\n' }), {
      type: 'standard',
    });
    expect(files(toml, /^sol\.access\.tx-origin$/)).toEqual(expected);
    expect(files(toml, /^secret\./)).not.toContain('lib/forge-std/src/Wallet.sol');
  });

  it('leaves out what .vigilignore and exclude name, secrets included, and says so', async () => {
    const r = await scanTree(
      memoryTree({
        ...project,
        '.vigilignore': 'app/\n',
        'vigil.toml': 'exclude = ["test/helpers.js"]\n',
      }),
      { type: 'standard' },
    );
    expect(files(r, /^secret\./)).toEqual(['test/Wallet.t.sol']);
    expect(r.messages.map((m) => m.value)).toContain(
      '2 file(s) excluded by .vigilignore or vigil.toml were not scanned.',
    );
  });

  it('tells beforeParse the bytes of Solidity the rules run on, not of tests or vendored files', async () => {
    const own = Buffer.byteLength(TX_ORIGIN);
    const sizes: number[] = [];
    await scanTree(memoryTree(project), { type: 'standard', beforeParse: (bytes) => sizes.push(bytes) });
    expect(sizes).toEqual([own]);
    await scanTree(memoryTree(project), {
      type: 'standard',
      includeTests: true,
      beforeParse: (bytes) => sizes.push(bytes),
    });
    expect(sizes[1]).toBe(own + Buffer.byteLength(project['test/Wallet.t.sol']) + 2 * own);
    const none: number[] = [];
    await scanTree(memoryTree({ 'app/config.js': 'x' }), {
      type: 'standard',
      beforeParse: (b) => none.push(b),
    });
    expect(none).toEqual([]);
  });

  it('gives analyzeTree and buildThreatModel the same selection', async () => {
    const parsed: string[] = [];
    const pass = await analyzeTree(memoryTree(project), { type: 'standard', onParse: (p) => parsed.push(p) });
    expect(parsed).toEqual(['contracts/Wallet.sol']);
    expect(pass.prepared.files.map((f) => f.path)).toEqual(['contracts/Wallet.sol']);
    expect(pass.threatModel.summary.solidityFiles).toBe(1);
    const withTests = await analyzeTree(memoryTree(project), { type: 'standard', includeTests: true });
    expect(withTests.prepared.files).toHaveLength(4);
    expect((await buildThreatModel(memoryTree(project))).summary.solidityFiles).toBe(1);
    // The scan job takes the pass over and parses nothing again.
    const again: string[] = [];
    const r = await scanTree(memoryTree(project), {
      type: 'standard',

      prepared: pass.prepared,
      threatModel: pass.threatModel,
      onParse: (p) => again.push(p),
    });
    expect(again).toEqual([]);
    expect(r.vulnerabilities.filter((v) => v.ruleId === 'sol.access.tx-origin')).toHaveLength(1);
  });

  it('fails with INVALID_PROJECT_SETTINGS for a vigil.toml it cannot use', async () => {
    const run = scanTree(memoryTree({ ...project, 'vigil.toml': 'include_test = true\n' }), {
      type: 'standard',
    });
    const err = await run.catch((e: unknown) => e);
    expect(isAppError(err, 'INVALID_PROJECT_SETTINGS')).toBe(true);
    expect((err as Error).message).toMatch(/vigil\.toml line 1: unknown key "include_test"/);
  });
});
