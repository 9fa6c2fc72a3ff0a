/** Examples and safe idioms of the front-running rules (docs/engine-rules.md; front-running.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const FRONT_RUNNING_EXAMPLES: RuleExamples = {
  'sol.frontrun.erc20-approve': {
    impactRationale:
      'The spender can take at most the old and the new allowance together, and only when the owner changes a non-zero allowance.',
    safeIdioms: [
      'A condition with an `== 0` test in `approve` (`require(value == 0 || allowed[msg.sender][spender] == 0)`).',
      '`increaseAllowance`/`decreaseAllowance`: only a public two-parameter `approve` that assigns `…[msg.sender][…]` is considered.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Token {
    mapping(address => mapping(address => uint256)) allowed;

    function approve(address spender, uint256 value) public returns (bool) {
        allowed[msg.sender][spender] = value;
        return true;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Token {
    mapping(address => mapping(address => uint256)) allowed;

    function approve(address spender, uint256 value) public returns (bool) {
        require(value == 0 || allowed[msg.sender][spender] == 0);
        allowed[msg.sender][spender] = value;
        return true;
    }
}
`,
  },
  'sol.frontrun.revealed-solution': {
    safeIdioms: [
      'Commit-reveal: the answer is committed as a hash first and revealed in a later transaction.',
      'A hash that binds the sender (`keccak256(abi.encodePacked(msg.sender, answer))`): a copied answer fails for another account.',
      'Functions that pay nothing (no `transfer`, `send` or `call` with value).',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Puzzle {
    bytes32 answerHash;

    function solve(string solution) public {
        require(answerHash == keccak256(solution));
        msg.sender.transfer(1000 ether);
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Puzzle {
    bytes32 answerHash;

    function solve(string solution) public {
        require(answerHash == keccak256(msg.sender, solution));
        msg.sender.transfer(1000 ether);
    }
}
`,
  },
  'sol.frontrun.mutable-payout': {
    impactRationale:
      'The claimant is paid a different amount than they expected; whether that loses anything depends on the game, hence confidence low.',
    safeIdioms: [
      'A `constant` (or constructor-only) amount, or an amount read from a per-user mapping.',
      'An amount that only the paying function itself, or unprivileged functions, write.',
      'A caller check on the paying function.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Reward {
    address owner;
    uint256 reward;

    function setReward() public payable {
        require(msg.sender == owner);
        reward = msg.value;
    }

    function claim(uint256 answer) public {
        require(answer < 10);
        msg.sender.transfer(reward);
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Reward {
    uint256 constant reward = 1 ether;

    function claim(uint256 answer) public {
        require(answer < 10);
        msg.sender.transfer(reward);
    }
}
`,
  },
  'sol.frontrun.recipient-race': {
    impactRationale:
      'Low; Medium when the recipient is set by whoever first submits a hashed answer (the answer is visible in the mempool). Confidence low: the order may not matter to the game.',
    safeIdioms: [
      'A recipient set only by a function with a caller check, or by the constructor.',
      'A recipient with an owner-like name (`owner`, `admin`, …).',
      'Paying in the same transaction that earns the payout.',
    ],
    vulnerable: `pragma solidity 0.5.12;

contract Contest {
    address payable winner;

    function play(bytes32 guess) public {
        if (keccak256(abi.encode(guess)) == keccak256(abi.encode("x"))) {
            winner = msg.sender;
        }
    }

    function reward() public payable {
        winner.transfer(msg.value);
    }
}
`,
    safe: `pragma solidity 0.5.12;

contract Contest {
    address payable winner;
    address owner;

    function choose(address payable chosen) public {
        require(msg.sender == owner);
        winner = chosen;
    }

    function reward() public payable {
        winner.transfer(msg.value);
    }
}
`,
  },
};
