/** Call results that are tested to no effect. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { UNCHECKED_CALLS_EXAMPLES } from './unchecked-calls.examples.ts';
import * as rules from './unchecked-calls.ts';

describe('sol.unchecked-call.ineffective-check', () => {
  it('reports an empty failure branch and a result OR-ed with a tautology', async () => {
    const src = `pragma solidity 0.5.12;
contract U {
  function a(address payable to) public { if (!to.send(1 ether)) { } else { } }
  function b(address payable to) public { if (!to.send(1 ether) || 1 == 1) { revert(); } }
  function c(address payable to) public { if (!to.send(1 ether)) { revert(); } } }`;
    const found = await findingsOf('sol.unchecked-call.ineffective-check', src);
    expect(found.map((v) => [v.function, v.severity])).toEqual([
      ['a', 'medium'],
      ['b', 'low'],
    ]);
  });
});

describe('sol.erc20.unchecked-transfer in a recovery of stray tokens', () => {
  const src = (modifiers: string): string => `pragma solidity 0.8.20;
interface IERC20 { function transfer(address to, uint256 v) external returns (bool); }
contract Vault { address owner; uint256 private locked = 1;
  modifier onlyOwner() { require(msg.sender == owner); _; }
  modifier nonReentrant() { require(locked == 1); locked = 2; _; locked = 1; }
  function recover(IERC20 token, uint256 v) external ${modifiers} { token.transfer(owner, v); } }`;

  it("is Low with or without a lock: the lock's flag records nothing about the transfer", async () => {
    const severities = async (m: string) =>
      (await findingsOf('sol.erc20.unchecked-transfer', src(m))).map((f) => f.severity);
    expect(await severities('onlyOwner')).toEqual(['low']);
    expect(await severities('onlyOwner nonReentrant')).toEqual(['low']);
  });
});

describeRuleExamples(rules, UNCHECKED_CALLS_EXAMPLES);
