/** Severity and confidence of the fixed-payout rule, from what the analysis proves about the contract. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { PAYOUTS_EXAMPLES } from './payouts.examples.ts';
import * as rules from './payouts.ts';

describe('sol.payout.fixed-amount-anyone', () => {
  it('is High where the contract holds ether booked for others, Medium otherwise', async () => {
    const bank = `pragma solidity 0.5.12;
contract Bank { mapping(address => uint) balances;
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function gift() public { msg.sender.transfer(1 ether); } }`;
    const tip = `pragma solidity 0.5.12;
contract Tip { function gift() public payable { msg.sender.transfer(1 ether); } }`;
    const [b] = await findingsOf('sol.payout.fixed-amount-anyone', bank);
    const [t] = await findingsOf('sol.payout.fixed-amount-anyone', tip);
    expect(b).toMatchObject({ severity: 'high', confidence: 'high', swc: 'SWC-105' });
    expect(t).toMatchObject({ severity: 'medium', confidence: 'high' });
  });

  it('is silent when a modifier or an internal function guards the payout', async () => {
    const src = `pragma solidity 0.5.12;
contract G { address owner; mapping(address => bool) done;
  modifier onlyOwner() { require(msg.sender == owner); _; }
  function once() internal { require(!done[msg.sender]); done[msg.sender] = true; }
  function a() public onlyOwner { msg.sender.transfer(1 ether); }
  function b() public { once(); msg.sender.transfer(1 ether); } }`;
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toEqual([]);
  });

  it('treats a local only ever assigned a literal as a fixed amount', async () => {
    const src = `pragma solidity 0.5.12;
contract L { function f() public { uint amount = 10; msg.sender.transfer(amount); } }`;
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toHaveLength(1);
  });
});

describeRuleExamples(rules, PAYOUTS_EXAMPLES);
