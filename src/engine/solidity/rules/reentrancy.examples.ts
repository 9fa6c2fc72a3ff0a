/** Examples and safe idioms of the reentrancy rules (docs/engine-rules.md; reentrancy.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const REENTRANCY_EXAMPLES: RuleExamples = {
  'sol.reentrancy.state-after-call': {
    impactRationale:
      'High when the call sends value or goes through an internal function; Medium for a call without value; Low (low confidence) when the callee is one only privileged functions choose or only accounts holding a role reach the function; in a locked function, High when an unlocked function anyone may call acts on the stale state, and Low when only a view reports it (read-only reentrancy) or only role-restricted functions act on it. Confidence high when the function read the state before the call.',
    safeIdioms: [
      'Checks-effects-interactions: every state write before the call.',
      'A lock modifier on the function, when no unlocked public function acts on the state written after the call: one named as a lock (`nonReentrant`, `reentrancyGuard`, or `lock`, `locked` or `mutex` as a word of its name: `lockTheSwap`, not `timelocked` or `afterBlock`) or any modifier, in any file of the project, that tests a state flag and sets it before the body (transient-storage locks with `tload`/`tstore` included).',
      'An internal function reached only through entry points that hold such a lock.',
      'A lock the function takes itself: a state flag it tests and sets to `true` (or a non-zero literal) before the call, or a field of a packed slot it tests (also through a local copy) and sets to a literal (`slot0.unlocked = false`); a public function that tests the same flag as a lock modifier takes that lock.',
      'Calls to `view`/`pure` functions and to the getters of public state variables, declared anywhere in the project, and internal calls to `view`/`pure` functions whatever they call: from 0.5 on every call a view makes is a STATICCALL, which cannot change state.',
      'A callee no unprivileged caller chooses: an immutable or a stored address only constructors and role-restricted functions set, or a parameter first looked up in a registry only such functions write (`require(sources[src] > 0)`). Reported Low.',
      'A function restricted to a role: by a modifier (`onlyOwner`, `auth`, `onlyRole`, wherever declared), or in its body by the caller compared with a stored account or looked up in a map that only such functions write (`if (!s_transmitters[msg.sender].active) revert …;`): re-entry needs the account that chose the callee to attack itself. Reported Low.',
      'Calls that cannot hand control to other code: `transfer`/`send` (see `sol.reentrancy.state-after-send`), low-level calls with a gas stipend of at most 2300, and high-level calls on `this` or on contracts the caller does not choose, in this transaction or an earlier one (a stored address that a public function without a caller check sets is a callee anyone chooses).',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Bank {
    mapping(address => uint256) balances;

    function deposit() external payable {
        balances[msg.sender] += msg.value;
    }

    function withdraw() external {
        uint256 amount = balances[msg.sender];
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok);
        balances[msg.sender] = 0;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Bank {
    mapping(address => uint256) balances;

    function deposit() external payable {
        balances[msg.sender] += msg.value;
    }

    function withdraw() external {
        uint256 amount = balances[msg.sender];
        balances[msg.sender] = 0;
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok);
    }
}
`,
  },
  'sol.reentrancy.state-after-send': {
    impactRationale:
      'Informational: the 2,300-gas stipend of `send`/`transfer` prevents re-entry today, and most contracts that pay this way are safe; the order becomes exploitable if the payment is switched to `call` or gas costs change.',
    safeIdioms: [
      'Checks-effects-interactions: the state the checks read is written before the payment.',
      'A lock modifier (`nonReentrant`, `mutex`, `lock`, …) on the function.',
      'Writes in the branch taken when `send` fails (restoring what was debited).',
      'State written after the payment that the function did not read before it.',
    ],
    vulnerable: `pragma solidity 0.5.12;

contract Credits {
    mapping(address => uint256) credit;

    function withdraw() public {
        require(credit[msg.sender] > 0);
        msg.sender.transfer(credit[msg.sender]);
        credit[msg.sender] = 0;
    }
}
`,
    safe: `pragma solidity 0.5.12;

contract Credits {
    mapping(address => uint256) credit;

    function withdraw() public {
        uint256 amount = credit[msg.sender];
        require(amount > 0);
        credit[msg.sender] = 0;
        if (!msg.sender.send(amount)) {
            credit[msg.sender] = amount;
        }
    }
}
`,
  },
  'sol.reentrancy.cross-function': {
    safeIdioms: [
      'Checks-effects-interactions in the calling function: no state written after the call.',
      'One lock modifier (`nonReentrant`, `lock`, `mutex`) on the calling function, or on every other function that acts on the shared state.',
      'Other functions that only read the state (views), or that have a caller check.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Bank {
    mapping(address => uint256) balances;

    function transfer(address to, uint256 amount) external {
        if (balances[msg.sender] >= amount) {
            balances[to] += amount;
            balances[msg.sender] -= amount;
        }
    }

    function withdraw() external {
        uint256 amount = balances[msg.sender];
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok);
        balances[msg.sender] = 0;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Bank {
    mapping(address => uint256) balances;

    function transfer(address to, uint256 amount) external {
        if (balances[msg.sender] >= amount) {
            balances[to] += amount;
            balances[msg.sender] -= amount;
        }
    }

    function withdraw() external {
        uint256 amount = balances[msg.sender];
        balances[msg.sender] = 0;
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok);
    }
}
`,
  },
};
