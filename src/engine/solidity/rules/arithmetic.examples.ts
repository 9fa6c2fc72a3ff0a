/** Examples and safe idioms of the arithmetic rules (docs/engine-rules.md; arithmetic.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const ARITHMETIC_EXAMPLES: RuleExamples = {
  'sol.arithmetic.unchecked-overflow': {
    impactRationale:
      'A wrapped balance or lock time lets the caller mint value or skip a wait. In a `view` function the wrapped value changes no state and is reported Low.',
    safeIdioms: [
      'Solidity 0.8 or later outside `unchecked { … }` blocks (checked arithmetic).',
      'A condition of the function or of its modifiers that compares both operands (`require(balance >= amount)` before `balance - amount`, `require(a + b >= a)`); an expression that is itself the overflow check (`a + b >= a`).',
      'Operands no caller chooses: only parameters count as caller input; `msg.value` and balances are bounded by the ether supply.',
      "Inside an `unchecked` block of 0.8+, and before 0.8 in a contract that attaches a checked-math library (`using SafeMath for uint256`), raw arithmetic is a choice: the result of a call computed from a parameter (a price, a gas cost, a pool's output) is no input there, only the caller's number itself, and the finding is Medium with low confidence.",
      'A bound set by a `?:` before the operation (`amount = requested > owed ? owed : requested`).',
      'A literal or `constant` operand of `+` or `-` (a name in capitals whose declaration is out of sight, such as a file-level constant, counts as one; a parameter, local or state variable so named does not), and loop-counter updates.',
      '`supply -= v` next to a checked `balance -= v` (a burn), and `m[to] += v` next to a checked `m[from] -= v` (a move).',
      'Functions with a caller check (privileged callers supply trusted numbers), non-public functions, and libraries.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract TimeLock {
    mapping(address => uint256) public lockTime;

    function increaseLockTime(uint256 secondsToAdd) public {
        lockTime[msg.sender] += secondsToAdd;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract TimeLock {
    mapping(address => uint256) public lockTime;

    function increaseLockTime(uint256 secondsToAdd) public {
        require(lockTime[msg.sender] + secondsToAdd >= lockTime[msg.sender]);
        lockTime[msg.sender] += secondsToAdd;
    }
}
`,
  },
  'sol.arithmetic.local-wrap': {
    impactRationale:
      'Medium when the wrapped value is read afterwards and the wrap is certain or follows caller input; Low for a possible wrap with no caller input or a result nobody reads; Informational (confidence low) for a narrow accumulator that cannot wrap as written.',
    safeIdioms: [
      'Solidity 0.8 or later outside `unchecked { … }` blocks (checked arithmetic).',
      'Values whose range, computed from literals, parameter types and the reaching definitions of locals, stays within the type of the local they are written to.',
      '256-bit locals whose range only might leave the type (only a certain wrap is reported for them).',
      'Arithmetic in loops and in conditions, and in modifiers and libraries.',
      'Arithmetic whose result is not assigned to a local (a write to state is judged by `sol.arithmetic.unchecked-overflow`).',
      'A subtraction whose operands a condition of the function compared first (`if (next <= old) revert(); … next - old`).',
    ],
    vulnerable: `pragma solidity 0.5.12;

contract Levels {
    uint8 public level;

    function lower() public {
        uint8 current = level;
        uint8 step = 0;
        step = step - 10;
        level = step + current;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Levels {
    uint8 public level;

    function lower() public {
        uint8 step = 0;
        step = step - 10;
        level = step;
    }
}
`,
  },
};
