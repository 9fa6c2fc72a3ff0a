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

describeRuleExamples(rules, DENIAL_OF_SERVICE_EXAMPLES);
