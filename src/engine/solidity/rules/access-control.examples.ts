/** Examples and safe idioms of the access-control rules (docs/engine-rules.md; access-control.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

/** What every rule of this file accepts as a caller check (`FileAnalysis.checksCaller`). */
const CALLER_CHECK =
  'A caller check on the function: a modifier, `require` or `if` that compares `msg.sender` (or `tx.origin`) with stored state or looks it up in a role map, also through an internal predicate such as `isOwner()` or a helper handed a record the function read from storage (`requireAdmin(s_upkeep[id])` comparing `msg.sender` with `upkeep.admin`); a modifier from outside the file counts when its name says so (`only…`, `auth`, `owner`, `admin`, `role`, `govern`, `restricted`).';

export const ACCESS_CONTROL_EXAMPLES: RuleExamples = {
  'sol.access.tx-origin': {
    safeIdioms: [
      'Authorization that compares `msg.sender`.',
      '`tx.origin == msg.sender` (or `!=`): the check that the caller is an externally owned account, which is no authorization.',
      'A condition that compares `tx.origin` with `address(0)` and otherwise only with fixed addresses (`if (tx.origin != address(0)) revert OnlySimulatedBackend();`): no account signs as the zero address, so the condition tells an off-chain `eth_call` simulation from a transaction. Beside a stored account (`tx.origin != owner && tx.origin != address(0)`) it is still authorization.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Wallet {
    address owner;

    constructor() {
        owner = msg.sender;
    }

    function pay(address payable to, uint256 amount) external {
        require(tx.origin == owner);
        to.transfer(amount);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Wallet {
    address owner;

    constructor() {
        owner = msg.sender;
    }

    function pay(address payable to, uint256 amount) external {
        require(msg.sender == owner);
        require(tx.origin == msg.sender);
        to.transfer(amount);
    }
}
`,
  },
  'sol.access.unprotected-selfdestruct': {
    impactRationale: 'Anyone can destroy the contract and take every wei it holds.',
    safeIdioms: [
      CALLER_CHECK,
      'A caller check on every public function that reaches the `selfdestruct` through internal calls.',
      '`selfdestruct` in a constructor.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Vault {
    function close() external {
        selfdestruct(payable(msg.sender));
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Vault {
    address owner;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    function close() external onlyOwner {
        selfdestruct(payable(msg.sender));
    }
}
`,
  },
  'sol.visibility.default-public': {
    safeIdioms: [
      'An explicit visibility (`external`, `public`, `internal`, `private`).',
      'A `view` or `pure` function without one: it changes no state.',
      'Functions of interfaces and libraries, and functions without a body.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Config {
    uint256 fee;

    function setFee(uint256 newFee) {
        fee = newFee;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Config {
    uint256 fee;

    function setFee(uint256 newFee) internal {
        fee = newFee;
    }
}
`,
  },
  'sol.access.unprotected-privileged-write': {
    impactRationale: 'Whoever takes the role controls everything the role guards.',
    safeIdioms: [
      CALLER_CHECK,
      'A constructor.',
      'A function that can run only once: it (or its modifier) tests a state flag and sets it to a literal (`require(!initialized); initialized = true;`), or it carries an `initializer`/`reinitializer` modifier defined outside the file (OpenZeppelin `Initializable`).',
      'A write guarded by a condition that tests the variable against its zero value before setting it (`require(owner == address(0))`, `require(!set[a])`, `if (initialized) revert …`); a condition that merely names it (`require(newOwner != owner)`) lets anyone in and is no guard.',
      'A payable function that checks `msg.value`: a role bought with a minimum payment is a sale.',
      'Writes inside loops, and writes to variables that gate no caller: only addresses compared with `msg.sender`/`tx.origin`, role maps (to `bool` or `address`) looked up with it, and owner-like address variables count; numeric mappings (balances) are per-user data.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Implementation {
    address public owner;

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    function initialize(address newOwner) external {
        owner = newOwner;
    }

    function sweep() external onlyOwner {
        payable(owner).transfer(address(this).balance);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Implementation {
    address public owner;
    bool private initialized;

    modifier initializer() {
        require(!initialized, "initialized");
        initialized = true;
        _;
    }

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    function initialize(address newOwner) external initializer {
        owner = newOwner;
    }

    function sweep() external onlyOwner {
        payable(owner).transfer(address(this).balance);
    }
}
`,
  },
  'sol.access.unprotected-ether-withdrawal': {
    impactRationale: 'Anyone can drain the ether the contract holds.',
    safeIdioms: [
      CALLER_CHECK,
      "A condition tested before the payment (a deadline, a game rule, a balance check), or beside it in the same condition (`now > deadline && msg.sender.send(…)`): gated payouts are judged by other rules. A check of the payment's own success (`require(ok)` after it) gates nothing.",
      "Paying `msg.value` (the caller's own ether) or zero.",
      'Bookkeeping: the function reads state indexed by `msg.sender` or by the recipient (what they are owed).',
      'A recipient that is neither the caller nor a parameter, or an amount that is neither the whole balance nor a parameter.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Box {
    function donate() external payable {}

    function withdraw() external {
        payable(msg.sender).transfer(address(this).balance);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Box {
    address owner;

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    function donate() external payable {}

    function withdraw() external onlyOwner {
        payable(msg.sender).transfer(address(this).balance);
    }
}
`,
  },
  'sol.delegatecall.controlled': {
    impactRationale:
      "Caller-chosen code runs on this contract's storage: it can rewrite the owner or destroy the contract. A delegatecall anyone can trigger to a fixed target with fixed data is reported Medium.",
    safeIdioms: [
      `${CALLER_CHECK} With one, the target and the data are the privileged side's choice.`,
      'Delegatecalls in `view` or `pure` functions.',
      'A delegatecall to `address(this)` (a multicall): the caller could call those functions directly.',
      'A delegatecall after which every path reverts (a simulation): nothing it wrote persists.',
      "An internal helper (`_delegate(impl)`) whose callers pass a stored implementation rather than their caller's input; a contract's helper no entry point of its file reaches is judged where it is called, and a library's internal helper no function of its file calls (`Address.functionDelegateCall(target, data)`) forwards whatever the code using it passes, which its file does not show.",
      'An upgradeable proxy: the target is a state variable that only role-restricted functions (and constructors) replace. A library address fixed at construction is still reported.',
      'Constructors and initializers that can run only once.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Forwarder {
    function forward(address callee, bytes calldata data) external {
        (bool ok, ) = callee.delegatecall(data);
        require(ok);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Forwarder {
    address owner;
    address lib;

    function forward(bytes calldata data) external {
        require(msg.sender == owner);
        (bool ok, ) = lib.delegatecall(data);
        require(ok);
    }
}
`,
  },
  'sol.access.unprotected-mint': {
    impactRationale: 'Anyone can mint an unlimited balance and with it take whatever the token buys.',
    safeIdioms: [
      CALLER_CHECK,
      'Something taken in return: a payable function, `msg.value` in the function, or an external call (a `transferFrom` pulling tokens in) in it or in the internal functions it calls.',
      'A function that can run only once (an initializer, see `sol.access.unprotected-privileged-write`).',
      'A supply (a variable named `…supply…`) raised by an amount the caller does not choose.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Token {
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
    }
}
`,
    safe: `pragma solidity 0.8.20;

interface IERC20 {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

contract Token {
    address owner;
    IERC20 asset;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner);
        totalSupply += amount;
        balanceOf[to] += amount;
    }

    function deposit(uint256 amount) external {
        require(asset.transferFrom(msg.sender, address(this), amount));
        totalSupply += amount;
        balanceOf[msg.sender] += amount;
    }
}
`,
  },
  'sol.access.unprotected-call-target': {
    impactRationale:
      'The attacker chooses the code this contract trusts (for a delegatecall, the code that runs on its storage): every asset behind it is lost.',
    safeIdioms: [
      `${CALLER_CHECK} (on the setter).`,
      'A call target set only in the constructor (or declared `immutable`/`constant`).',
      'With a threat model, only the targets on trust boundaries the model records for the contract are considered.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Proxy {
    address public implementation;

    function setImplementation(address newImplementation) external {
        implementation = newImplementation;
    }

    fallback() external payable {
        (bool ok, ) = implementation.delegatecall(msg.data);
        require(ok);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Proxy {
    address public implementation;
    address admin;

    constructor(address firstImplementation) {
        admin = msg.sender;
        implementation = firstImplementation;
    }

    function setImplementation(address newImplementation) external {
        require(msg.sender == admin);
        implementation = newImplementation;
    }

    fallback() external payable {
        (bool ok, ) = implementation.delegatecall(msg.data);
        require(ok);
    }
}
`,
  },
};
