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

describeRuleExamples(rules, UNCHECKED_CALLS_EXAMPLES);
