/** Examples and safe idioms of the gas rules (docs/engine-rules.md; gas.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const GAS_EXAMPLES: RuleExamples = {
  'sol.gas.storage-length-in-loop': {
    safeIdioms: [
      'The length read once into a local before the loop.',
      'Loops over memory or calldata arrays.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Sum {
    uint256[] values;
    uint256 total;

    function sum() external {
        for (uint256 i = 0; i < values.length; i++) {
            total += values[i];
        }
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Sum {
    uint256[] values;
    uint256 total;

    function sum() external {
        uint256 n = values.length;
        for (uint256 i = 0; i < n; i++) {
            total += values[i];
        }
    }
}
`,
  },
  'sol.gas.could-be-constant': {
    safeIdioms: [
      'A variable declared `constant`.',
      'A variable some function writes, or one initialized with anything but a literal.',
      'A variable redeclared by a contract of the file that derives from this one.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Fees {
    uint256 fee = 100;

    function cost(uint256 n) external view returns (uint256) {
        return n * fee;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Fees {
    uint256 constant FEE = 100;

    function cost(uint256 n) external pure returns (uint256) {
        return n * FEE;
    }
}
`,
  },
};
