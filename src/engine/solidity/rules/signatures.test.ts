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

  it('an unimplemented hook outside the signed message records nothing of it', async () => {
    const hook = src('block.chainid')
      .replace(
        'function _getAndIncrementNonce(uint256 tokenId) internal virtual returns (uint256);',
        'function _afterPermit(uint256 tokenId) internal virtual;',
      )
      .replace('approvals[tokenId] = spender;', 'approvals[tokenId] = spender; _afterPermit(tokenId);');
    expect(await findingsOf('sol.access.signature-replay', hook)).toHaveLength(1);
  });
});

describe('a report id recorded by a function the contract calls on itself', () => {
  // `report` checks the signers, then routes through `this.route`, which refuses an id it has
  // seen (read through a memory copy of the record) and records it.
  const src = (check: string): string => `pragma solidity 0.8.20;
contract Forwarder { struct Transmission { address transmitter; bool success; }
  mapping(bytes32 => Transmission) s_transmissions; mapping(address => bool) s_signers;
  error AlreadyAttempted(bytes32 id);
  function route(bytes32 id, address receiver, bytes calldata data) public returns (bool ok) {
    Transmission memory transmission = s_transmissions[id];
    ${check}
    s_transmissions[id].transmitter = msg.sender;
    (ok, ) = receiver.call(data);
  }
  function report(address receiver, bytes calldata data, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 digest = keccak256(abi.encode(receiver, data));
    require(s_signers[ecrecover(digest, v, r, s)]);
    this.route(digest, receiver, data);
  } }`;

  it('consumes the id: not reported', async () => {
    const check = 'if (transmission.transmitter != address(0)) revert AlreadyAttempted(id);';
    expect(await findingsOf('sol.access.signature-replay', src(check))).toEqual([]);
  });

  it('without the check the report replays', async () => {
    expect((await findingsOf('sol.access.signature-replay', src(''))).map((f) => f.function)).toEqual([
      'report',
    ]);
  });
});

describe('what counts as a consumed nonce', () => {
  const src = (record: string): string => `pragma solidity 0.8.20;
contract Claims { address signer; mapping(address => uint256) credited; uint256 nonce;
  function claim(uint256 amount, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 digest = keccak256(abi.encode(msg.sender, amount, nonce));
    require(ecrecover(digest, v, r, s) == signer);
    ${record}
  } }`;

  it('a counter stepped by one', async () => {
    expect(
      await findingsOf('sol.access.signature-replay', src('nonce++; credited[msg.sender] += amount;')),
    ).toEqual([]);
    expect(
      await findingsOf('sol.access.signature-replay', src('nonce += 1; credited[msg.sender] += amount;')),
    ).toEqual([]);
  });

  it('not an amount added to a balance', async () => {
    expect(
      await findingsOf('sol.access.signature-replay', src('credited[msg.sender] += amount;')),
    ).toHaveLength(1);
  });

  it('nor a balance read into a local and capped', async () => {
    const capped =
      'uint256 c = credited[msg.sender]; require(c + amount <= 100); credited[msg.sender] = c + amount;';
    expect(await findingsOf('sol.access.signature-replay', src(capped))).toHaveLength(1);
  });
});

describeRuleExamples(rules, SIGNATURES_EXAMPLES);
