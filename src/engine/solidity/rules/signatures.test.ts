/** The signatures rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { SIGNATURES_EXAMPLES } from './signatures.examples.ts';
import * as rules from './signatures.ts';

describe('a nonce taken from an unimplemented function', () => {
  const src = (nonce: string): string => `pragma solidity 0.8.20;
abstract contract ERC721Permit {
  mapping(uint256 => address) approvals;
  function ownerOf(uint256 tokenId) public view virtual returns (address);
  function _getAndIncrementNonce(uint256 tokenId) internal virtual returns (uint256);
  function permit(address spender, uint256 tokenId, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 digest = keccak256(abi.encode(spender, tokenId, ${nonce}));
    require(ecrecover(digest, v, r, s) == ownerOf(tokenId));
    approvals[tokenId] = spender;
  } }`;

  it('is decided by the contract that implements it: not reported', async () => {
    expect(await findingsOf('sol.access.signature-replay', src('_getAndIncrementNonce(tokenId)'))).toEqual(
      [],
    );
  });

  it('without it the signature replays', async () => {
    expect(await findingsOf('sol.access.signature-replay', src('block.chainid'))).toHaveLength(1);
  });
});

describeRuleExamples(rules, SIGNATURES_EXAMPLES);
