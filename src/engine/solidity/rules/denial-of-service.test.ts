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

describe('sol.dos.unbounded-loop over an array grown through a helper', () => {
  const src = (guard: string): string => `pragma solidity 0.8.20;
contract Lottery { address owner; address[] players; mapping(address => uint256) paid;
  function join() external payable { ${guard} _add(msg.sender); }
  function _add(address p) internal { players.push(p); }
  function settle() external {
    for (uint256 i = 0; i < players.length; i++) paid[players[i]] += 1;
  } }`;

  it('anyone who reaches the push grows it', async () => {
    expect(await findingsOf('sol.dos.unbounded-loop', src(''))).toHaveLength(1);
  });

  it('a caller check on the way keeps it to the privileged', async () => {
    expect(await findingsOf('sol.dos.unbounded-loop', src('require(msg.sender == owner);'))).toEqual([]);
  });
});

describeRuleExamples(rules, DENIAL_OF_SERVICE_EXAMPLES);
