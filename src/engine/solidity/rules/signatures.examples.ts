/** Examples and safe idioms of the signature rules (docs/engine-rules.md; signatures.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const SIGNATURES_EXAMPLES: RuleExamples = {
  'sol.access.signature-replay': {
    safeIdioms: [
      'A nonce the function consumes: a state counter it steps by one (`nonces[signer]++`, `nonce += 1`; an amount added to a balance is no nonce), or state it writes that its own conditions test (a used-signature or used-nonce map) — in the function, its modifiers or the internal functions it calls, including those of base contracts in other files (`_useNonce(owner)`), and inside a condition (`require(nonce == nonces[owner]++)`).',
      'A record kept by a function the contract calls on itself (`this.route(id, …)` refusing an id it has seen), including a test of a local copy of the record (`Transmission memory t = s_transmissions[id]; if (t.transmitter != address(0)) revert …`).',
      'A flag the function tests and then sets through a storage pointer (`require(!receipt.hasVoted); … receipt.hasVoted = true`), and a counter advanced through a local read from it (`uint n = nonces[o]; … nonces[o] = n + 1`).',
      'Functions that only verify (`view`, or no state change, payment or external call).',
      'A function that calls an internal function its contract leaves unimplemented and that may write state (`_getAndIncrementNonce(tokenId)` declared `virtual` with no body, not `view`): the contract that implements it decides what is recorded, and the rule does not look for that implementation.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Voucher {
    address immutable signer;

    constructor(address s) {
        signer = s;
    }

    function redeem(address payable to, uint256 amount, uint8 v, bytes32 r, bytes32 s) external {
        bytes32 digest = keccak256(abi.encodePacked(to, amount));
        address who = ecrecover(digest, v, r, s);
        require(who != address(0) && who == signer);
        to.transfer(amount);
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Voucher {
    address immutable signer;
    mapping(uint256 => bool) used;

    constructor(address s) {
        signer = s;
    }

    function redeem(address payable to, uint256 amount, uint256 nonce, uint8 v, bytes32 r, bytes32 s) external {
        require(!used[nonce]);
        bytes32 digest = keccak256(abi.encodePacked(to, amount, nonce, block.chainid, address(this)));
        address who = ecrecover(digest, v, r, s);
        require(who != address(0) && who == signer);
        used[nonce] = true;
        to.transfer(amount);
    }
}
`,
  },
  'sol.access.ecrecover-zero-address': {
    safeIdioms: [
      'A condition that compares the recovered address, or the address it is compared with, to zero (`require(recovered != address(0))`).',
      'OpenZeppelin `ECDSA.recover`, which reverts on an invalid signature (only `ecrecover` is considered).',
      'Comparing with a stored signer rather than with an address the caller supplies.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Permit {
    mapping(address => uint256) public nonces;
    mapping(address => mapping(address => uint256)) public allowance;

    function permit(address owner, address spender, uint256 value, uint8 v, bytes32 r, bytes32 s) external {
        bytes32 digest = keccak256(abi.encode(owner, spender, value, nonces[owner]++));
        address recovered = ecrecover(digest, v, r, s);
        require(recovered == owner, "signature");
        allowance[owner][spender] = value;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Permit {
    mapping(address => uint256) public nonces;
    mapping(address => mapping(address => uint256)) public allowance;

    function permit(address owner, address spender, uint256 value, uint8 v, bytes32 r, bytes32 s) external {
        bytes32 digest = keccak256(abi.encode(owner, spender, value, nonces[owner]++));
        address recovered = ecrecover(digest, v, r, s);
        require(recovered != address(0) && recovered == owner, "signature");
        allowance[owner][spender] = value;
    }
}
`,
  },
};
