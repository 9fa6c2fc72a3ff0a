/** Severity of the recipient race: a revealed answer makes it worse than a plain race. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { FRONT_RUNNING_EXAMPLES } from './front-running.examples.ts';
import * as rules from './front-running.ts';

describe('sol.frontrun.recipient-race', () => {
  it('is Medium when the recipient is chosen by a revealed answer, Low for a plain race', async () => {
    const revealed = `pragma solidity 0.5.12;
contract T { address payable winner;
  function play(bytes32 g) public { if (keccak256(abi.encode(g)) == keccak256(abi.encode("x"))) winner = msg.sender; }
  function reward() public payable { winner.transfer(msg.value); } }`;
    const plain = `pragma solidity 0.5.12;
contract T { address payable last;
  function join() public { last = msg.sender; }
  function reward() public payable { last.transfer(msg.value); } }`;
    expect((await findingsOf('sol.frontrun.recipient-race', revealed))[0]?.severity).toBe('medium');
    expect((await findingsOf('sol.frontrun.recipient-race', plain))[0]?.severity).toBe('low');
  });
});

describeRuleExamples(rules, FRONT_RUNNING_EXAMPLES);
