import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlmServer, startFakeLlmServer } from '../../test/fakes/llm-server.ts';
import { buildTarGz } from '../../test/fixtures/archives.ts';
import { createLlmClient } from '../integrations/llm/llm-client.ts';
import { reportedSeverity } from './findings.ts';
import {
  analyzeTree,
  buildThreatModel,
  openDirectoryTree,
  renderThreatModelMarkdown,
  scanTree,
} from './index.ts';
import { allRuleMetas } from './rules-catalogue.ts';
import { parseSolidity } from './solidity/parser.ts';
import { openArchiveTree } from './sources/archive-tree.ts';
import { memoryTree } from './test-helpers.ts';

const BANK = `pragma solidity ^0.4.24;
contract Bank {
  address owner;
  mapping(address => uint) balances;
  modifier onlyOwner { require(msg.sender == owner); _; }
  function Bank() public { owner = msg.sender; }
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function withdraw() public {
    uint amount = balances[msg.sender];
    require(msg.sender.call.value(amount)());
    balances[msg.sender] = 0;
  }
  function sweep(address to) public onlyOwner { to.transfer(this.balance); }
  function upgrade(address lib) public { require(lib.delegatecall(msg.data)); }
}
`;

describe('scanTree', () => {
  it('scans Solidity and secrets, reports progress per file, and skips binary files', async () => {
    const tree = memoryTree({
      'contracts/Bank.sol': BANK,
      '.env': 'DEPLOYER_PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
      'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]),
    });
    const progress: Array<[number, number]> = [];
    const r = await scanTree(tree, {
      type: 'standard',
      onProgress: (p) => void progress.push([p.filesDone, p.filesTotal]),
    });
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(r.stats.files).toBe(2);
    const ids = r.vulnerabilities.map((v) => `${v.location.file}:${v.location.startLine} ${v.ruleId}`);
    expect(ids).toContain('contracts/Bank.sol:10 sol.reentrancy.state-after-call');
    expect(ids).toContain('contracts/Bank.sol:14 sol.delegatecall.controlled');
    expect(ids).toContain('.env:1 secret.eth-private-key');
    expect(ids.some((i) => i.includes('sweep'))).toBe(false);
  });

  it('writes every rule text in ASCII, so that reports of ASCII sources are one byte per character', () => {
    const nonAscii = allRuleMetas().flatMap((m) =>
      [m.title, m.description, m.remediation, m.reasoning ?? '']
        .filter((t) => /[\u0080-\uffff]/.test(t))
        .map((t) => `${m.id}: ${t}`),
    );
    expect(nonAscii).toEqual([]);
  });

  it('runs only lite rules for a lite scan', async () => {
    const r = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'lite' });
    expect(r.vulnerabilities.every((v) => !v.ruleId.startsWith('sol.reentrancy'))).toBe(true);
    expect(r.vulnerabilities.some((v) => v.ruleId === 'sol.pragma.floating')).toBe(true);
  });

  it('lets the event loop run between files (a job heartbeat, the API of the same process)', async () => {
    await parseSolidity('contract Warm {}');
    const files = { 'a.sol': BANK, 'b.sol': BANK, 'c.sol': BANK, 'd.sol': BANK };
    for (const pass of [
      () => analyzeTree(memoryTree(files), { type: 'standard' }),
      () => scanTree(memoryTree(files), { type: 'standard' }),
    ]) {
      let ticks = 0;
      let running = true;
      const tick = (): void => {
        ticks++;
        if (running) setImmediate(tick);
      };
      setImmediate(tick);
      await pass();
      running = false;
      // A tree read from memory awaits nothing but promises: only the engine's own yields let
      // these callbacks run while it works.
      expect(ticks).toBeGreaterThanOrEqual(Object.keys(files).length);
    }
  });

  it('stops between files when the signal is aborted', async () => {
    const tree = memoryTree({ 'a.sol': BANK, 'b.sol': BANK, 'c.sol': BANK });
    const controller = new AbortController();
    const done: number[] = [];
    await expect(
      scanTree(tree, {
        type: 'standard',
        signal: controller.signal,
        onProgress: (p) => {
          done.push(p.filesDone);
          if (p.filesDone === 1) controller.abort(new Error('cancelled by user'));
        },
      }),
    ).rejects.toThrow('cancelled by user');
    expect(done).toEqual([1]);
    // The project model reads every Solidity file once, before the rules run.
    expect(tree.reads).toEqual(['a.sol', 'b.sol', 'c.sol']);
  });

  it('stops while loading the project when the signal is aborted, with parses started ahead', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`c${String(i).padStart(2, '0')}.sol`, BANK]),
    );
    const controller = new AbortController();
    const handed: string[] = [];
    await expect(
      scanTree(memoryTree(files), {
        type: 'standard',
        signal: controller.signal,
        onParse: (p) => {
          handed.push(p);
          if (handed.length === 3) controller.abort(new Error('cancelled while loading'));
        },
      }),
    ).rejects.toThrow('cancelled while loading');
    // Files are handed to the parser ahead of their conversion, in order; none after the abort.
    expect(handed).toEqual(['c00.sol', 'c01.sol', 'c02.sol']);
  });

  it('turns a file that does not parse into a message and goes on', async () => {
    const r = await scanTree(memoryTree({ 'bad.sol': 'contract { function ( {', 'good.sol': BANK }), {
      type: 'standard',
    });
    expect(r.messages.some((m) => m.value.startsWith('bad.sol: syntax errors'))).toBe(true);
    expect(r.vulnerabilities.some((v) => v.location.file === 'good.sol')).toBe(true);
  });
});

describe('buildThreatModel', () => {
  it('describes entry points, roles, assets, external calls and threats with code locations', async () => {
    const model = await buildThreatModel(memoryTree({ 'contracts/Bank.sol': BANK, 'README.md': '# bank' }));
    expect(model.summary).toMatchObject({ files: 2, solidityFiles: 1, contracts: 1 });
    const entry = (name: string) => model.entryPoints.find((e) => e.function === name)!;
    expect(entry('deposit')).toMatchObject({ payable: true, guarded: false });
    expect(entry('sweep')).toMatchObject({ guarded: true, modifiers: ['onlyOwner'] });
    expect(model.roles.map((r) => `${r.kind}:${r.name}`)).toEqual(
      expect.arrayContaining(['modifier:onlyOwner', 'owner-variable:owner']),
    );
    expect(model.assets.map((a) => `${a.kind}:${a.name}`)).toEqual(
      expect.arrayContaining(['ether:ether balance', 'balance-map:balances']),
    );
    expect(model.externalCalls.find((c) => c.kind === 'delegatecall')).toMatchObject({
      function: 'upgrade',
      callerControlledTarget: true,
      ref: { file: 'contracts/Bank.sol', line: 14 },
    });
    expect(model.upgradeability.map((u) => u.pattern)).toContain('delegatecall');
    const titles = model.threats.map((t) => t.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        'Re-entrancy into Bank',
        "Code executed in Bank's storage context",
        'Privileged roles of Bank',
      ]),
    );
    const reentry = model.threats.find((t) => t.category === 'reentrancy')!;
    expect(reentry.refs).toEqual([
      { file: 'contracts/Bank.sol', line: 10, contract: 'Bank', function: 'withdraw' },
    ]);
    const md = renderThreatModelMarkdown(model);
    expect(md).toContain('# Threat model');
    expect(md).toContain('`contracts/Bank.sol:10`');
    expect(md).toContain('| Bank.deposit | function | yes | **none** |');
  });
});

describe('audit scan with an LLM', () => {
  let llm: FakeLlmServer;
  beforeAll(async () => {
    llm = await startFakeLlmServer({ apiKey: 'sk-test' });
  });
  afterAll(async () => {
    await llm.close();
  });

  const client = () =>
    createLlmClient({
      baseUrl: llm.baseUrl,
      apiKey: 'sk-test',
      model: 'reviewer-1',
      retryDelayMs: 1,
      maxRetries: 1,
    });

  it('turns the model’s JSON answer into findings located in the reviewed function', async () => {
    llm.requests.length = 0;
    llm.fallback = (req) => {
      const prompt = req.body.messages?.[1]?.content ?? '';
      if (!prompt.includes('Function: withdraw')) return { kind: 'content', content: '{"findings":[]}' };
      return {
        kind: 'content',
        content:
          '```json\n{"findings":[{"title":"Withdraw re-enters before zeroing","severity":"high","category":"reentrancy","startLine":10,"endLine":11,"description":"The call happens before the balance is zeroed.","remediation":"Zero first.","confidence":"high"},{"title":"Out of range","severity":"low","category":"other","startLine":999,"description":"clamped"}]}\n```',
      };
    };
    const r = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'audit', llm: client() });
    const reviewed = r.vulnerabilities.filter((v) => v.ruleId.startsWith('llm.review.'));
    expect(reviewed.map((v) => [v.ruleId, v.location.startLine, v.location.endLine, v.function])).toEqual([
      ['llm.review.reentrancy', 10, 11, 'withdraw'],
      ['llm.review.other', 12, 12, 'withdraw'],
    ]);
    expect(llm.requests.length).toBeGreaterThan(0);
    expect(llm.requests[0]!.body).toMatchObject({
      model: 'reviewer-1',
      response_format: { type: 'json_object' },
    });
    expect(r.messages.some((m) => m.level === 'info' && m.value.includes('LLM review (reviewer-1)'))).toBe(
      true,
    );
  });

  it('reports a malformed answer and a server error as messages, and the scan completes', async () => {
    llm.replies.push({ kind: 'content', content: 'Sure! Here are my thoughts: reentrancy everywhere.' });
    llm.fallback = () => ({ kind: 'status', status: 500 });
    const r = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'audit', llm: client() });
    expect(r.messages.some((m) => m.level === 'warning' && m.value.includes('not valid JSON'))).toBe(true);
    expect(r.messages.some((m) => m.level === 'warning' && m.value.includes('HTTP 500'))).toBe(true);
    expect(r.vulnerabilities.some((v) => v.ruleId === 'sol.reentrancy.state-after-call')).toBe(true);
    expect(r.vulnerabilities.some((v) => v.ruleId.startsWith('llm.'))).toBe(false);
  });

  it('LLM triage is off by default, and may only lower or dismiss findings with a recorded reason', async () => {
    llm.requests.length = 0;
    llm.replies.length = 0;
    const base = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'standard', llm: client() });
    expect(llm.requests).toHaveLength(0);
    const ids = (vs: typeof base.vulnerabilities) => vs.map((v) => `${v.ruleId}@${v.location.startLine}`);
    llm.fallback = (req) => {
      const prompt = req.body.messages?.[1]?.content ?? '';
      if (prompt.includes('Rule: sol.delegatecall.controlled'))
        return {
          kind: 'content',
          content: '{"verdict":"dismiss","reason":"the library address is fixed by the deployer"}',
        };
      if (prompt.includes('Rule: sol.reentrancy.state-after-call'))
        return {
          kind: 'content',
          content: '{"verdict":"lower","reason":"only the caller\'s own balance is at stake"}',
        };
      if (prompt.includes('Rule: sol.pragma.floating'))
        return { kind: 'content', content: '{"verdict":"dismiss"}' };
      if (prompt.includes('Rule: sol.deprecated'))
        return { kind: 'content', content: '{"verdict":"add","finding":{}}' };
      return { kind: 'content', content: '{"verdict":"keep","reason":"confirmed"}' };
    };
    const r = await scanTree(memoryTree({ 'Bank.sol': BANK }), {
      type: 'standard',
      llm: client(),
      llmTriage: true,
    });
    expect(llm.requests.length).toBeGreaterThan(0);
    // Nothing added: the triaged findings are the rule findings minus the dismissed one, none
    // with a severity or confidence above the rule's; one lowered to low confidence is at most Medium.
    expect(ids(r.vulnerabilities)).toEqual(
      ids(base.vulnerabilities).filter((i) => !i.startsWith('sol.delegatecall.controlled')),
    );
    const order = ['low', 'medium', 'high'];
    for (const v of r.vulnerabilities) {
      const b = base.vulnerabilities.find((x) => x.fingerprint === v.fingerprint);
      expect(b).toBeDefined();
      expect(v.severity).toBe(reportedSeverity(b!.severity, v.confidence));
      expect(order.indexOf(v.confidence)).toBeLessThanOrEqual(order.indexOf(b!.confidence));
      if (v.confidence === 'low') expect(['critical', 'high']).not.toContain(v.severity);
    }
    // The limit bounds the findings sent to the model (the most severe first).
    llm.requests.length = 0;
    const limited = await scanTree(memoryTree({ 'Bank.sol': BANK }), {
      type: 'standard',
      llm: client(),
      llmTriage: true,
      llmTriageLimit: 1,
    });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.body.messages?.[1]?.content).toMatch(/severity (critical|high)/);
    expect(limited.vulnerabilities.length).toBeGreaterThanOrEqual(base.vulnerabilities.length - 1);
    const re = r.vulnerabilities.find((v) => v.ruleId === 'sol.reentrancy.state-after-call')!;
    const before = base.vulnerabilities.find((v) => v.ruleId === 'sol.reentrancy.state-after-call')!;
    expect(re.confidence).toBe(before.confidence === 'high' ? 'medium' : 'low');
    expect(re.severity).toBe(
      re.confidence === 'low' && before.severity === 'high' ? 'medium' : before.severity,
    );
    expect(re.description).toContain('only the caller');
    expect(
      r.messages.some(
        (m) =>
          m.value.includes('dismissed sol.delegatecall.controlled') &&
          m.value.includes('fixed by the deployer'),
      ),
    ).toBe(true);
    // A dismissal without a reason, or an unknown verdict, changes nothing.
    expect(r.vulnerabilities.some((v) => v.ruleId === 'sol.pragma.floating')).toBe(true);
    expect(r.messages.some((m) => m.level === 'warning' && m.value.includes('sol.pragma.floating'))).toBe(
      true,
    );
    expect(
      r.messages.some((m) => /LLM triage \(reviewer-1\): \d+ kept, 1 lowered, 1 dismissed/.test(m.value)),
    ).toBe(true);
  });

  it('LLM triage that lowers a High finding to low confidence reports it as Medium', async () => {
    llm.requests.length = 0;
    llm.replies.length = 0;
    llm.fallback = (req) =>
      (req.body.messages?.[1]?.content ?? '').includes('Rule: sol.delegatecall.controlled')
        ? { kind: 'content', content: '{"verdict":"lower","reason":"only trusted libraries are passed in"}' }
        : { kind: 'content', content: '{"verdict":"keep","reason":"confirmed"}' };
    const base = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'standard' });
    expect(base.vulnerabilities.find((v) => v.ruleId === 'sol.delegatecall.controlled')).toMatchObject({
      severity: 'high',
      confidence: 'medium',
    });
    const r = await scanTree(memoryTree({ 'Bank.sol': BANK }), {
      type: 'standard',
      llm: client(),
      llmTriage: true,
    });
    expect(r.vulnerabilities.find((v) => v.ruleId === 'sol.delegatecall.controlled')).toMatchObject({
      severity: 'medium',
      confidence: 'low',
    });
  });

  it('is deterministic and complete without an LLM', async () => {
    const a = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'audit' });
    const b = await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'audit' });
    expect(a.vulnerabilities.map((v) => v.fingerprint)).toEqual(b.vulnerabilities.map((v) => v.fingerprint));
    expect(a.vulnerabilities.length).toBeGreaterThanOrEqual(
      (await scanTree(memoryTree({ 'Bank.sol': BANK }), { type: 'standard' })).vulnerabilities.length,
    );
  });
});

describe('openDirectoryTree', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vigil-tree-'));
    await mkdir(path.join(dir, 'contracts/lib'), { recursive: true });
    await mkdir(path.join(dir, 'node_modules/dep'), { recursive: true });
    await mkdir(path.join(dir, '.git'), { recursive: true });
    await writeFile(path.join(dir, 'contracts/A.sol'), 'contract A {}');
    await writeFile(path.join(dir, 'contracts/lib/B.sol'), 'contract B {}');
    await writeFile(path.join(dir, 'node_modules/dep/C.sol'), 'contract C {}');
    await writeFile(path.join(dir, '.git/config'), '[core]');
    await writeFile(path.join(dir, 'README.md'), '# x');
    await symlink('/etc/hostname', path.join(dir, 'contracts/outside.txt'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists regular files sorted, skipping node_modules, .git and symlinks', async () => {
    const tree = await openDirectoryTree(dir);
    expect((await tree.list()).map((e) => e.path)).toEqual([
      'README.md',
      'contracts/A.sol',
      'contracts/lib/B.sol',
    ]);
    expect((await tree.read('contracts/A.sol')).toString()).toBe('contract A {}');
    await expect(tree.read('contracts/outside.txt')).rejects.toThrow('not in the source tree');
    await expect(tree.read('../etc/passwd')).rejects.toThrow();
    await tree.close();
  });

  it('refuses a listed file that was replaced by a symlink before it was read', async () => {
    await writeFile(path.join(dir, 'contracts/Later.sol'), 'contract Later {}');
    const tree = await openDirectoryTree(dir);
    expect((await tree.list()).map((e) => e.path)).toContain('contracts/Later.sol');
    await rm(path.join(dir, 'contracts/Later.sol'));
    await symlink('/etc/hostname', path.join(dir, 'contracts/Later.sol'));
    await expect(tree.read('contracts/Later.sol')).rejects.toMatchObject({ code: 'ELOOP' });
    await rm(path.join(dir, 'contracts/Later.sol'));
  });

  it('limits the tree to a prefix', async () => {
    const tree = await openDirectoryTree(dir, { prefix: 'contracts/lib' });
    expect((await tree.list()).map((e) => e.path)).toEqual(['contracts/lib/B.sol']);
    await expect(openDirectoryTree(dir, { prefix: '../x' })).rejects.toThrow('..');
  });
});

describe('scanTree and files a tree left out', () => {
  it('reports every skipped file as a scan message', async () => {
    const archive = buildTarGz([
      { name: 'contracts/Small.sol', content: 'pragma solidity ^0.8.0; contract Small {}' },
      { name: 'contracts/Huge.sol', content: `// ${'x'.repeat(4096)}\ncontract Huge {}` },
    ]);
    const tree = await openArchiveTree([{ open: async () => Readable.from([archive]) }], {
      maxFileBytes: 1024,
    });
    try {
      const result = await scanTree(tree, { type: 'standard' });
      expect(result.stats.files).toBe(1);
      expect(result.messages).toContainEqual({
        level: 'warning',
        value: expect.stringMatching(/^contracts\/Huge\.sol: not scanned/),
      });
    } finally {
      await tree.close();
    }
  });
});
