/** Examples and safe idioms of the payout rules (docs/engine-rules.md; payouts.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const PAYOUTS_EXAMPLES: RuleExamples = {
  'sol.payout.fixed-amount-anyone': {
    impactRationale:
      'High when the contract also keeps ether for others (some function books `msg.value`): those deposits are drained. Medium otherwise.',
    safeIdioms: [
      'Any condition that runs before the payment: a record of who was paid, a deadline, a balance check — in the function, its modifiers or an internal function it calls first.',
      'A caller check on the function or on every public path to it.',
      'An amount that is not fixed (a recorded balance, a parameter).',
      'Payments to anyone but the caller.',
    ],
    vulnerable: `pragma solidity 0.5.12;

contract Faucet {
    function gift() public {
        msg.sender.transfer(1 ether);
    }

    function () external payable {}
}
`,
    safe: `pragma solidity 0.5.12;

contract Faucet {
    mapping(address => bool) paid;

    function gift() public {
        require(!paid[msg.sender]);
        paid[msg.sender] = true;
        msg.sender.transfer(1 ether);
    }

    function () external payable {}
}
`,
  },
};
