/** Examples and safe idioms of the compiler rules (docs/engine-rules.md; compiler.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const COMPILER_EXAMPLES: RuleExamples = {
  'sol.deprecated.construct': {
    safeIdioms: [
      'The current equivalents: `revert()` for `throw`, `selfdestruct` for `suicide`, `keccak256` for `sha3`, `blockhash()` for `block.blockhash`, `gasleft()` for `msg.gas`, `delegatecall` for `callcode`.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Checks {
    function check(uint256 a) public pure {
        if (a == 0) throw;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Checks {
    function check(uint256 a) public pure {
        require(a != 0);
    }
}
`,
  },
  'sol.pragma.floating': {
    safeIdioms: ['A pragma that names one compiler version (`pragma solidity 0.8.24;`).'],
    vulnerable: `pragma solidity ^0.8.0;

contract Token {}
`,
    safe: `pragma solidity 0.8.24;

contract Token {}
`,
  },
  'sol.pragma.outdated': {
    safeIdioms: ['A pragma whose lowest admitted version is 0.8.0 or later.'],
    vulnerable: `pragma solidity 0.4.24;

contract Token {}
`,
    safe: `pragma solidity 0.8.24;

contract Token {}
`,
  },
};
