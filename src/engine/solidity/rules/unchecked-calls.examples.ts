/** Examples and safe idioms of the unchecked-call rules (docs/engine-rules.md; unchecked-calls.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const UNCHECKED_CALLS_EXAMPLES: RuleExamples = {
  'sol.unchecked-call.low-level': {
    safeIdioms: [
      'The result used: `require(to.send(v))`, `if (!to.send(v)) …`, or `(bool ok, ) = to.call{value: v}(""); require(ok);`.',
      '`transfer` and OpenZeppelin `Address.sendValue`, which revert on failure.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Payer {
    function pay(address payable to) external {
        to.call{value: 1 ether}("");
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Payer {
    function pay(address payable to) external {
        (bool ok, ) = to.call{value: 1 ether}("");
        require(ok);
    }
}
`,
  },
  'sol.unchecked-call.not-invoked': {
    impactRationale: 'The payment silently never happens while the contract carries on as if it had.',
    safeIdioms: [
      'The call invoked: `addr.call.value(v)()`, or `addr.call{value: v}("")` since Solidity 0.7.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Payer {
    function pay(address to, uint256 amount) public {
        to.call.value(amount);
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Payer {
    function pay(address to, uint256 amount) public {
        require(to.call.value(amount)());
    }
}
`,
  },
  'sol.erc20.unchecked-transfer': {
    safeIdioms: [
      'The result checked: `require(token.transfer(to, v))`.',
      'OpenZeppelin `SafeERC20` (`safeTransfer`, `safeTransferFrom`, `forceApprove`).',
      'A function declared in the project without a return value (ERC-721 `transferFrom`), or a receiver whose interface derives from an ERC-721 one: there is nothing to check.',
      'A function restricted to a role that records nothing about the transfer (a recovery of stray tokens): reported Low.',
      'A token the contract fixes in code (a literal address, a constant holding one, a getter returning one): reported Low with low confidence. An immutable or a variable only constructors set holds whatever token the deployer passes and stays Medium.',
    ],
    vulnerable: `pragma solidity 0.8.20;

interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
}

contract Payer {
    IERC20 token;

    function pay(address to) external {
        token.transfer(to, 1);
    }
}
`,
    safe: `pragma solidity 0.8.20;

interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
}

contract Payer {
    IERC20 token;

    function pay(address to) external {
        require(token.transfer(to, 1));
    }
}
`,
  },
  'sol.unchecked-call.ineffective-check': {
    impactRationale:
      'Medium; a result OR-ed with a condition that is always true is reported Low with confidence high.',
    safeIdioms: [
      'A failure branch that does something lasting: writes state, reverts, returns, emits an event or makes a call.',
      'A result combined with other conditions (not tested directly).',
    ],
    vulnerable: `pragma solidity 0.5.12;

contract Payer {
    function pay(address payable to) public {
        uint256 failures;
        if (!to.send(1 ether)) {
            failures += 1;
        }
    }
}
`,
    safe: `pragma solidity 0.5.12;

contract Payer {
    mapping(address => uint256) owed;

    function pay(address payable to) public {
        if (!to.send(1 ether)) {
            owed[to] += 1 ether;
        }
    }
}
`,
  },
};
