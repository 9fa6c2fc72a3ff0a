import { describe, expect, it } from 'vitest';
import { BudgetExceededError, Deadline, isBudgetExceeded } from './deadline.ts';
import { analyzeTree, scanTree, toSarifReport, toSastReport } from './index.ts';
import {
  deeplyNested,
  elseIfChain,
  hugeContract,
  longAssembly,
  loopChain,
  manyFunctions,
  manyLocalDefs,
} from './pathological.fixtures.ts';
import { FileAnalysis } from './solidity/analysis.ts';
import { SolFile } from './solidity/model.ts';
import { parseSolidity } from './solidity/parser.ts';
import { memoryTree } from './test-helpers.ts';
import type { ScanResult } from './types.ts';

// A re-entrant withdrawal (a `standard` finding), a tx.origin check (a `lite` one) and a key in a
// comment (a secret): the cheap passes keep the last two, the full pass finds all three.
const BANK = `pragma solidity ^0.4.24;
// DEPLOYER_PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318
contract Bank {
  address owner;
  mapping(address => uint) balances;
  function withdraw() public {
    require(tx.origin == owner);
    uint amount = balances[msg.sender];
    require(msg.sender.call.value(amount)());
    balances[msg.sender] = 0;
  }
}
`;

const PATHOLOGICAL: Record<string, string> = {
  'gen/Nested.sol': deeplyNested(300),
  'gen/Many.sol': manyFunctions(2_000),
  'gen/Huge.sol': hugeContract(50_000),
  'gen/Assembly.sol': longAssembly(3_000),
  'gen/Crowdsale.sol': elseIfChain(20, 40),
  'gen/Defs.sol': manyLocalDefs(100),
};

const rulesOf = (r: ScanResult, file: string): string[] =>
  r.vulnerabilities.filter((v) => v.location.file === file).map((v) => v.ruleId);

/** The reports' view of a scan's messages: SARIF notifications and SAST `scan.messages`. */
function reported(r: ScanResult): { sarif: string[]; sast: string[] } {
  const items = r.vulnerabilities.map((vulnerability, i) => ({ id: `id-${i}`, vulnerability }));
  const now = new Date();
  const sarif = toSarifReport(items, { startTime: now, endTime: now, messages: r.messages });
  const sast = toSastReport(items, { startTime: now, endTime: now, messages: r.messages });
  return {
    sarif: (sarif.runs[0]!.invocations?.[0]?.toolExecutionNotifications ?? []).map((n) => n.message.text),
    sast: (sast.scan.messages ?? []).map((m) => m.value),
  };
}

describe('the per-file analysis budget', () => {
  it('gives every generated pathological file a report under the default budget', async () => {
    const r = await scanTree(memoryTree(PATHOLOGICAL), { type: 'standard' });
    expect(r.stats.files).toBe(Object.keys(PATHOLOGICAL).length);
    for (const file of Object.keys(PATHOLOGICAL)) {
      // Every file has a floating or outdated pragma: lite findings the full pass and the cheap
      // passes both report.
      expect(rulesOf(r, file).filter((id) => id.startsWith('sol.pragma.'))).not.toEqual([]);
    }
    // A file over budget is named by the result and by a warning; one within it by neither.
    for (const file of r.filesOverBudget ?? [])
      expect(r.messages.some((m) => m.level === 'warning' && m.value.startsWith(`${file}: analysis`))).toBe(
        true,
      );
    expect(r.messages.filter((m) => m.level === 'error')).toEqual([
      // The call chain of 2,000 internal functions is deeper than a summary's recursion goes.
      ...r.messages.filter((m) => m.value.startsWith('gen/Many.sol: rule')),
    ]);
  }, 120_000);

  it('past the budget, keeps the cheap passes of the file and names it in SARIF, SAST and the result', async () => {
    const files = { 'contracts/Bank.sol': BANK, 'gen/Crowdsale.sol': PATHOLOGICAL['gen/Crowdsale.sol']! };
    const full = await scanTree(memoryTree(files), { type: 'standard' });
    expect(full.filesOverBudget).toEqual([]);
    expect(rulesOf(full, 'contracts/Bank.sol')).toContain('sol.reentrancy.state-after-call');

    // A budget of 0 runs out at the first check of every file, whatever the machine's speed.
    const r = await scanTree(memoryTree(files), { type: 'standard', fileBudgetMs: 0 });
    expect(r.filesOverBudget).toEqual(['contracts/Bank.sol', 'gen/Crowdsale.sol']);
    const bank = rulesOf(r, 'contracts/Bank.sol');
    expect(bank).toContain('sol.access.tx-origin');
    expect(bank).toContain('secret.eth-private-key');
    expect(bank).not.toContain('sol.reentrancy.state-after-call');
    // Exactly the lite findings of the full pass, and its secrets.
    const cheap = new Set(bank);
    expect(
      rulesOf(full, 'contracts/Bank.sol')
        .filter((id) => cheap.has(id))
        .sort(),
    ).toEqual([...bank].sort());

    const warning = r.messages.find((m) => m.value.startsWith('contracts/Bank.sol: analysis exceeded'));
    expect(warning).toMatchObject({ level: 'warning' });
    expect(warning!.value).toContain('only the cheap passes (lite rules, secret rules) ran');
    const { sarif, sast } = reported(r);
    for (const file of ['contracts/Bank.sol', 'gen/Crowdsale.sol']) {
      expect(sarif.some((t) => t.startsWith(`${file}: analysis exceeded its budget`))).toBe(true);
      expect(sast.some((t) => t.startsWith(`${file}: analysis exceeded its budget`))).toBe(true);
    }
  });

  it('bounds the one pass of analyzeTree too: the file adds nothing to the threat model and is marked', async () => {
    const tree = memoryTree({ 'contracts/Bank.sol': BANK });
    const within = await analyzeTree(tree, { type: 'audit' });
    expect(within.threatModel.entryPoints.length).toBeGreaterThan(0);
    expect(within.prepared.files[0]!.overBudget).toBeUndefined();

    const over = await analyzeTree(memoryTree({ 'contracts/Bank.sol': BANK }), {
      type: 'audit',
      fileBudgetMs: 0,
    });
    expect(over.threatModel.entryPoints).toEqual([]);
    const [file] = over.prepared.files;
    expect(file!.overBudget).toBe(true);
    expect(file!.vulnerabilities.map((v) => v.ruleId)).toContain('sol.access.tx-origin');
    expect(file!.vulnerabilities.map((v) => v.ruleId)).not.toContain('sol.reentrancy.state-after-call');
    // The scan that takes the pass over reports the file as over budget.
    const r = await scanTree(memoryTree({ 'contracts/Bank.sol': BANK }), {
      type: 'audit',
      threatModel: over.threatModel,
      prepared: over.prepared,
    });
    expect(r.filesOverBudget).toEqual(['contracts/Bank.sol']);
    expect(rulesOf(r, 'contracts/Bank.sol')).toContain('secret.eth-private-key');
  });

  it('stops the reaching-definitions and taint fixpoints of one function through the analysis', async () => {
    for (const source of [manyLocalDefs(100), elseIfChain(20, 40)]) {
      const parsed = await parseSolidity(source);
      const fa = new FileAnalysis(new SolFile('x.sol', source, parsed.root, parsed.errors));
      const fn = [...fa.ownFunctions()].find((f) => f.body)!;
      let checks = 0;
      // A deadline that runs out at its 50th check: the CFG's own loops must be checking it.
      fa.deadline = {
        check() {
          if (++checks > 50) throw new Error('not the budget');
        },
      } as unknown as FileAnalysis['deadline'];
      expect(() => fa.analyze(fn).cfg.taint(() => true)).toThrow('not the budget');
      expect(checks).toBeGreaterThan(50);
    }
  });

  it('taints a chain of locals in a loop looking at each definition a bounded number of times', async () => {
    const source = loopChain(300);
    const parsed = await parseSolidity(source);
    const fa = new FileAnalysis(new SolFile('x.sol', source, parsed.root, parsed.errors));
    const { cfg } = fa.analyze([...fa.ownFunctions()].find((f) => f.name === 'f')!);
    let looks = 0;
    const taint = cfg.taint((e) => {
      looks++;
      return fa.compact(e) === 'msg.value';
    });
    // Every link of the chain is tainted…
    const a0 = cfg.defs.findIndex((d) => d.name === 'a0' && d.rhs !== undefined);
    expect(taint.tainted.has(a0)).toBe(true);
    // …in a number of looks linear in the definitions (rounds over all of them until nothing
    // changed took one round per link: about defs² / 2).
    expect(looks).toBeLessThan(4 * cfg.defs.length);
  });

  it('bounds an audit scan analysed in this thread: its own threat model and the file over budget', async () => {
    const tree = {
      'contracts/Bank.sol': BANK,
      'contracts/Kill.sol': 'contract Kill { function k() public { selfdestruct(msg.sender); } }\n',
    };
    const r = await scanTree(memoryTree(tree), { type: 'audit', fileBudgetMs: 0 });
    expect(r.filesOverBudget).toEqual(['contracts/Bank.sol', 'contracts/Kill.sol']);
    expect(rulesOf(r, 'contracts/Kill.sol')).toContain('sol.access.unprotected-selfdestruct');
    expect(rulesOf(r, 'contracts/Bank.sol')).not.toContain('sol.reentrancy.cross-function');
    const full = await scanTree(memoryTree(tree), { type: 'audit' });
    expect(full.filesOverBudget).toEqual([]);
    expect(full.messages).toEqual([]);
  });

  it('throws its own error, recognised after the rules catch the others', async () => {
    const r = await scanTree(memoryTree({ 'contracts/Bank.sol': BANK }), { type: 'lite', fileBudgetMs: 0 });
    // `lite`: the full pass was the lite rules; only the secret rules remain.
    expect(rulesOf(r, 'contracts/Bank.sol')).toEqual(['secret.eth-private-key']);
    expect(r.messages[0]!.value).toContain('only the secret rules ran');
    expect(isBudgetExceeded(new Error('x'))).toBe(false);
  });
});

describe('Deadline', () => {
  it('counts the thread CPU time it is given, not the wall time that went by', async () => {
    let cpu = 1_000;
    const deadline = Deadline.after(5, () => cpu);
    // The wall clock passes the 5 ms while the thread's CPU time stands still: not spent.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(() => deadline.check()).not.toThrow();
    expect(deadline.remainingMs()).toBe(5);
    // Spent: the next look at the CPU time (once the wall clock says it may be spent) throws.
    // (The clock is read at one check in 32: a loop's steps reach it.)
    cpu += 5;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(() => {
      for (let i = 0; i < 32; i++) deadline.check();
    }).toThrow(BudgetExceededError);
    expect(Deadline.after(0).remainingMs()).toBe(0);
    expect(() => Deadline.none.check()).not.toThrow();
  });
});
