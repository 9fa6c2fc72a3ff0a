/** Push payments to a stored recipient, seen through address conversions. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { DENIAL_OF_SERVICE_EXAMPLES } from './denial-of-service.examples.ts';
import * as rules from './denial-of-service.ts';

describe('sol.dos.failing-push-payment', () => {
  it('sees the stored leader through a payable() conversion', async () => {
    const src = `pragma solidity 0.8.20;
contract Auction { address leader; uint topBid;
  function bid() external payable { require(msg.value > topBid);
    payable(leader).transfer(topBid);
    leader = msg.sender; topBid = msg.value; } }`;
    const found = await findingsOf('sol.dos.failing-push-payment', src);
    expect(found.map((v) => v.location.startLine)).toEqual([4]);
  });
});

describe('sol.dos.external-call-in-loop and a result checked after the call', () => {
  const src = (after: string): string => `pragma solidity 0.8.20;
contract Payroll { address payable[] staff; uint256 wage;
  function payAll() external {
    for (uint256 i = 0; i < staff.length; i++) {
      (bool ok, ) = staff[i].call{value: wage}("");
      ${after}
    } } }`;

  it('a required result reverts the whole loop', async () => {
    expect(await findingsOf('sol.dos.external-call-in-loop', src('require(ok);'))).toHaveLength(1);
    expect(await findingsOf('sol.dos.external-call-in-loop', src('if (!ok) revert();'))).toHaveLength(1);
  });

  it('a failure kept aside does not', async () => {
    expect(await findingsOf('sol.dos.external-call-in-loop', src('if (!ok) wage = 0;'))).toEqual([]);
  });
});

describeRuleExamples(rules, DENIAL_OF_SERVICE_EXAMPLES);
