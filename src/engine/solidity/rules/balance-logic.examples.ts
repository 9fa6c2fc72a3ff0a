/** Examples and safe idioms of the balance-logic rules (docs/engine-rules.md; balance-logic.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const BALANCE_LOGIC_EXAMPLES: RuleExamples = {
  'sol.logic.strict-balance-equality': {
    safeIdioms: [
      'Comparing the balance with `>=`, `>`, `<=` or `<`.',
      'An equality on a state variable that counts the deposits the contract accepted, instead of `address(this).balance`.',
      'A comparison with a balance snapshot the same call took (`uint before = address(this).balance; … if (address(this).balance == before)`): it measures what changed meanwhile.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Goal {
    function reached() external view returns (bool) {
        if (address(this).balance == 10 ether) {
            return true;
        }
        return false;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Goal {
    function reached() external view returns (bool) {
        if (address(this).balance >= 10 ether) {
            return true;
        }
        return false;
    }
}
`,
  },
  'sol.logic.balance-not-debited': {
    impactRationale:
      'The caller withdraws the same balance again and again, draining the deposits of everyone else.',
    safeIdioms: [
      'The function, or an internal function it calls, writes the mapping it pays from (`balances[msg.sender] = 0` before paying).',
      'Payouts whose amount is not read directly from a state mapping indexed by `msg.sender`.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Deposits {
    mapping(address => uint256) balances;

    function deposit() public payable {
        balances[msg.sender] += msg.value;
    }

    function refund() public {
        msg.sender.transfer(balances[msg.sender]);
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Deposits {
    mapping(address => uint256) balances;

    function deposit() public payable {
        balances[msg.sender] += msg.value;
    }

    function refund() public {
        uint256 amount = balances[msg.sender];
        balances[msg.sender] = 0;
        msg.sender.transfer(amount);
    }
}
`,
  },
  'sol.logic.inverted-balance-check': {
    impactRationale:
      'The check admits exactly the amounts it should refuse, so the subtraction underflows or overdraws.',
    safeIdioms: [
      'A check in the right direction before the subtraction (`require(balances[msg.sender] >= amount)`).',
      'An `if` that leaves the function (`revert`, `throw`, `return`) when the balance is too small (`if (balances[msg.sender] < amount) revert();`).',
      'A comparison whose operands are not the amount and the balance the function then subtracts it from.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Bank {
    mapping(address => uint256) balances;

    function withdraw(uint256 amount) public {
        require(amount >= balances[msg.sender]);
        balances[msg.sender] -= amount;
        msg.sender.transfer(amount);
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Bank {
    mapping(address => uint256) balances;

    function withdraw(uint256 amount) public {
        if (balances[msg.sender] < amount) revert();
        balances[msg.sender] -= amount;
        msg.sender.transfer(amount);
    }
}
`,
  },
  'sol.logic.tautological-guard': {
    safeIdioms: [
      'A comparison with zero that can fail: `> 0`, `!= 0`, `== 0`.',
      'Comparisons on signed integers.',
      'Comparisons whose operand contains a subtraction (`a - b >= 0`): the arithmetic rules report those as underflows.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Codes {
    uint256[] codes;

    function pop() public {
        require(0 <= codes.length);
        codes.length--;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Codes {
    uint256[] codes;

    function pop() public {
        require(codes.length > 0);
        codes.length--;
    }
}
`,
  },
};
