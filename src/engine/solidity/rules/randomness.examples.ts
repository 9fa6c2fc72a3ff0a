/** Examples and safe idioms of the randomness rules (docs/engine-rules.md; randomness.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const RANDOMNESS_EXAMPLES: RuleExamples = {
  'sol.randomness.block-values': {
    impactRationale:
      'Whoever can predict or choose the block values wins every draw. A hash of block values never used as a number (an identifier) and `block.number % n` alone (round arithmetic) are reported Low with confidence low.',
    safeIdioms: [
      'Randomness delivered by an oracle (a VRF callback) or derived from a commit-reveal scheme: hashes and modulo operations of values that are not block values.',
      'Block values compared or stored without being hashed, reduced modulo, or passed to `blockhash`.',
      'A block hash the function never uses as a number (it returns or stores it, as a block-hash library does): reported Low.',
      'A hash of block values read as a `uint256` (`id = uint256(keccak256(abi.encodePacked(msg.sender, blockhash(block.number - 1), nonce)))`) and used as an identifier — a mapping key, an argument — never in arithmetic, a comparison or a shift: reported Low. A narrower cast (`uint8(…)`) draws bits from it, and a helper that only hands it back (`return uint256(keccak256(…))`) leaves the draw to its callers: both count as numbers.',
      'A block value reduced modulo a power of two of a type width, written as a power (`block.timestamp % 2**32`, an exponent of 16 or more and a multiple of 8): a truncation, not a draw. `% 4294967296` and `% 2**8` are still read as draws.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Dice {
    function roll() external view returns (uint256) {
        return uint256(keccak256(abi.encodePacked(block.timestamp))) % 6;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Dice {
    function roll(uint256 revealedSeed) external view returns (uint256) {
        return uint256(keccak256(abi.encodePacked(revealedSeed, msg.sender))) % 6;
    }
}
`,
  },
  'sol.randomness.block-value-flow': {
    safeIdioms: [
      'Seeds that come from an oracle or from a commit-reveal scheme rather than from block values.',
      '`stored = block.number` in one transaction and `blockhash(stored)` in a later one: a commitment to a block whose hash is unknown when stored (the `blockhash` read is judged by `sol.randomness.block-values`).',
      'Block values that reach the sink directly (reported by `sol.randomness.block-values` instead).',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Lottery {
    function draw() public view returns (uint256) {
        uint256 seed = block.difficulty;
        return uint256(keccak256(seed, msg.sender)) % 10;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Lottery {
    function draw(uint256 seed) public view returns (uint256) {
        return uint256(keccak256(seed, msg.sender)) % 10;
    }
}
`,
  },
};
