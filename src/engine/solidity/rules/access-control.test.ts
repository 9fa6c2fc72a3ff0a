/**
 * Caller checks as the access-control rules see them: through modifiers that call internal
 * predicates, and on the variable a check actually reads (not a shadowing redeclaration).
 */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { ACCESS_CONTROL_EXAMPLES } from './access-control.examples.ts';
import * as rules from './access-control.ts';

describe('privileged writes follow the variable a check reads', () => {
  const shadowed = (redeclared: boolean): string => `pragma solidity ^0.4.18;
contract Ownable { address owner = msg.sender;
  modifier onlyOwner { if (owner == msg.sender) _; } }
contract Vault is Ownable { ${redeclared ? 'address owner = msg.sender;' : ''}
  function init() public { owner = msg.sender; }
  function sweep() public onlyOwner { msg.sender.transfer(this.balance); } }`;

  it('a write to a derived redeclaration of `owner` grants nothing: the modifier reads the base variable', async () => {
    expect(await findingsOf('sol.access.unprotected-privileged-write', shadowed(true))).toEqual([]);
  });

  it('the same write without the redeclaration takes over the owner', async () => {
    const found = await findingsOf('sol.access.unprotected-privileged-write', shadowed(false));
    expect(found.map((f) => f.function)).toEqual(['init']);
  });
});

describe('inter-procedural caller checks', () => {
  it('a modifier that requires an internal predicate comparing msg.sender guards the function', async () => {
    const src = `pragma solidity 0.5.12;
contract O { address private _owner; address public relayer;
  function isOwner() public view returns (bool) { return msg.sender == _owner; }
  modifier onlyOwner() { require(isOwner()); _; }
  function setRelayer(address r) external onlyOwner { relayer = r; }
  function gift() external onlyOwner { msg.sender.transfer(1 ether); } }`;
    expect(await findingsOf('sol.access.unprotected-privileged-write', src)).toEqual([]);
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toEqual([]);
  });
});

describeRuleExamples(rules, ACCESS_CONTROL_EXAMPLES);
