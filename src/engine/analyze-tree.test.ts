import { describe, expect, it } from 'vitest';
import type { LlmClient } from '../integrations/llm/llm-client.ts';
import { analyzeTree, buildThreatModel, type ScanType, scanTree, type ThreatModel } from './index.ts';
import { profiles, rulesFor } from './solidity/rules/index.ts';
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

// `Vault` inherits a call to `impl` and lets anyone set it, but the threat model records only
// Vault's own call to `oracle` as its trust boundary: the steered audit rule reports the setter
// without a model and not with the whole tree's model.
const STEERED = `pragma solidity ^0.8.0;
contract Base {
  address public impl;
  function run() public { (bool ok, ) = impl.delegatecall(""); require(ok); }
}
contract Vault is Base {
  address public oracle;
  function poke() public { (bool ok, ) = oracle.call(""); require(ok); }
  function setImpl(address a) public { impl = a; }
}
`;

const FILES = {
  'contracts/Bank.sol': BANK,
  'contracts/Vault.sol': STEERED,
  'contracts/Broken.sol': 'contract { function ( {',
  'contracts/Token.sol': BANK.replaceAll('Bank', 'Token'),
  'README.md': '# bank\n',
};

const withoutTime = (model: ThreatModel) => ({ ...model, generatedAt: '' });

/** An LLM that records what it is asked and finds nothing. */
function recordingLlm(): LlmClient & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    model: 'reviewer-1',
    prompts,
    async complete(request) {
      prompts.push(JSON.stringify(request));
      return '{"findings":[]}';
    },
  };
}

describe('analyzeTree', () => {
  it.each(['lite', 'standard', 'audit'] as ScanType[])(
    'parses each Solidity file once for the threat model and the %s rules, as the two passes did',
    async (type) => {
      const parses = new Map<string, number>();
      const onParse = (p: string) => parses.set(p, (parses.get(p) ?? 0) + 1);

      // The one pass, then the scan taking it over (through JSON, as it is stored between jobs).
      const tree = memoryTree(FILES);
      const pass = await analyzeTree(tree, { type, onParse });
      const prepared = JSON.parse(JSON.stringify(pass.prepared));
      const one = await scanTree(tree, { type, threatModel: pass.threatModel, prepared, onParse });
      expect(Object.fromEntries(parses)).toEqual({
        'contracts/Bank.sol': 1,
        'contracts/Broken.sol': 1,
        'contracts/Token.sol': 1,
        'contracts/Vault.sol': 1,
      });

      // The two passes: the threat model, then the scan given that model, parsing every file again.
      parses.clear();
      const model = await buildThreatModel(memoryTree(FILES));
      const two = await scanTree(memoryTree(FILES), { type, threatModel: model, onParse });
      expect([...parses.values()]).toEqual([1, 1, 1, 1]);

      expect(withoutTime(pass.threatModel)).toEqual(withoutTime(model));
      expect(one.vulnerabilities).toEqual(two.vulnerabilities);
      expect(one.messages).toEqual(two.messages);
      expect({ ...one.stats, durationMs: 0 }).toEqual({ ...two.stats, durationMs: 0 });
      expect(one.vulnerabilities.length).toBeGreaterThan(0);
      expect(one.messages.some((m) => m.value.startsWith('contracts/Broken.sol: syntax errors'))).toBe(true);
    },
  );

  it('runs the rules that read the threat model with the whole tree’s model', async () => {
    const steered = (r: { vulnerabilities: Array<{ ruleId: string; location: { file: string } }> }) =>
      r.vulnerabilities
        .filter((v) => v.ruleId === 'sol.access.unprotected-call-target')
        .map((v) => v.location.file);
    const pass = await analyzeTree(memoryTree(FILES), { type: 'audit' });
    const withModel = await scanTree(memoryTree(FILES), {
      type: 'audit',
      threatModel: pass.threatModel,
      prepared: pass.prepared,
    });
    // Without the model's boundaries the rule reports the setter; the model steers it away.
    const unsteered = await scanTree(memoryTree(FILES), {
      type: 'audit',
      threatModel: { ...pass.threatModel, trustBoundaries: [] },
    });
    expect(steered(unsteered)).toContain('contracts/Vault.sol');
    expect(steered(withModel)).not.toContain('contracts/Vault.sol');
  });

  it('gives an audit scan’s LLM review the same functions as the two passes did', async () => {
    const pass = await analyzeTree(memoryTree(FILES), { type: 'audit' });
    expect(pass.prepared.reviewCandidates?.length).toBeGreaterThan(0);
    const oneLlm = recordingLlm();
    const one = await scanTree(memoryTree(FILES), {
      type: 'audit',
      threatModel: pass.threatModel,
      prepared: pass.prepared,
      llm: oneLlm,
    });
    const twoLlm = recordingLlm();
    const two = await scanTree(memoryTree(FILES), {
      type: 'audit',
      threatModel: await buildThreatModel(memoryTree(FILES)),
      llm: twoLlm,
    });
    expect(oneLlm.prompts.length).toBeGreaterThan(0);
    expect(oneLlm.prompts).toEqual(twoLlm.prompts);
    expect(one.messages).toEqual(two.messages);
  });

  it('a scan given another type’s pass parses again', async () => {
    const pass = await analyzeTree(memoryTree(FILES), { type: 'lite' });
    const parses: string[] = [];
    await scanTree(memoryTree(FILES), {
      type: 'standard',
      threatModel: pass.threatModel,
      prepared: pass.prepared,
      onParse: (p) => parses.push(p),
    });
    expect(parses.sort()).toEqual([
      'contracts/Bank.sol',
      'contracts/Broken.sol',
      'contracts/Token.sol',
      'contracts/Vault.sol',
    ]);
  });

  it('the rules that read the threat model come last in every scan type (the pass runs them last)', () => {
    expect(
      Object.values(profiles)
        .flat()
        .some((r) => r.readsThreatModel),
    ).toBe(true);
    for (const type of ['lite', 'standard', 'audit'] as ScanType[]) {
      const rules = rulesFor(type);
      const first = rules.findIndex((r) => r.readsThreatModel);
      if (first === -1) continue;
      expect(rules.slice(first).every((r) => r.readsThreatModel)).toBe(true);
    }
  });
});
