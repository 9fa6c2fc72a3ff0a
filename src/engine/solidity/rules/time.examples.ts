/** Examples and safe idioms of the time rules (docs/engine-rules.md; time.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const TIME_EXAMPLES: RuleExamples = {
  'sol.time.timestamp-dependence': {
    safeIdioms: [
      'Comparisons with `<`, `>`, `<=`, `>=` over windows of 15 minutes or more (`now < end + 30 days`), or against deadlines whose length is not written in the comparison.',
      'A sum or difference with the timestamp in a return value (`return block.timestamp + delay;`); other operations on it in a return value (`block.timestamp / 1 days`) are reported Low.',
      'Comparisons that involve a modulo (judged by the randomness rules).',
    ],
    vulnerable: `pragma solidity 0.4.25;

contract Roulette {
    uint256 pastBlockTime;

    function () public payable {
        require(now != pastBlockTime);
        pastBlockTime = now;
    }
}
`,
    safe: `pragma solidity 0.4.25;

contract Sale {
    uint256 end;

    function buy() public payable {
        require(now < end + 30 days);
    }
}
`,
  },
};
