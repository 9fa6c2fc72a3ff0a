/** Block numbers committed for a later `blockhash` are not entropy; a stored timestamp that feeds a draw is. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { RANDOMNESS_EXAMPLES } from './randomness.examples.ts';
import * as rules from './randomness.ts';

describe('block numbers stored for a later blockhash', () => {
  const src = (stored: string): string => `pragma solidity ^0.4.24;
contract Guess { mapping(address => uint) at; mapping(address => bytes32) guessOf;
  function lock(bytes32 g) public payable { require(msg.value == 1 ether); guessOf[msg.sender] = g; at[msg.sender] = ${stored}; }
  function settle() public { require(block.number > at[msg.sender]);
    bytes32 answer = blockhash(at[msg.sender]);
    at[msg.sender] = 0;
    if (answer == guessOf[msg.sender]) msg.sender.transfer(2 ether); } }`;

  it('committing to the current block number is not itself an entropy source (the blockhash read is reported)', async () => {
    const flow = await findingsOf('sol.randomness.block-value-flow', src('block.number + 1'));
    expect(flow).toEqual([]);
    const reads = await findingsOf('sol.randomness.block-values', src('block.number + 1'));
    expect(reads.map((f) => f.location.startLine)).toEqual([5]);
  });

  it('storing a timestamp that later feeds the draw is reported where it is stored', async () => {
    const flow = await findingsOf('sol.randomness.block-value-flow', src('block.timestamp'));
    expect(flow.map((f) => f.location.startLine)).toEqual([3]);
  });
});

describe('a hash of block values read as a uint256', () => {
  const src = (use: string): string => `pragma solidity 0.8.20;
contract Subscriptions { uint64 nonce; mapping(uint256 => address) owners; event Created(uint256 id);
  function create() external returns (uint256 id) {
    id = uint256(keccak256(abi.encodePacked(msg.sender, blockhash(block.number - 1), nonce)));
    nonce++;
    ${use}
  } }`;

  it('as an identifier (a mapping key, an event field, the answer) is Low', async () => {
    const found = await findingsOf(
      'sol.randomness.block-values',
      src('owners[id] = msg.sender; emit Created(id);'),
    );
    expect(found.map((f) => f.severity)).toEqual(['low']);
  });

  it('reduced to pick an outcome is a draw: High', async () => {
    const found = await findingsOf(
      'sol.randomness.block-values',
      src('if (id % 2 == 0) owners[0] = msg.sender;'),
    );
    expect(found.map((f) => f.severity)).toEqual(['high']);
  });

  it('handed back by a helper that does nothing else with it, it is a draw: High', async () => {
    const helper = `pragma solidity 0.8.20;
contract Lottery { address[] players;
  function random() internal view returns (uint256) {
    return uint256(keccak256(abi.encodePacked(block.prevrandao, block.timestamp, players.length)));
  }
  function pick() external view returns (address) { return players[random() % players.length]; } }`;
    const found = await findingsOf('sol.randomness.block-values', helper);
    expect(found.map((f) => f.severity)).toContain('high');
  });

  it('a narrower cast draws bits from it: High', async () => {
    const found = await findingsOf(
      'sol.randomness.block-values',
      src('owners[id] = msg.sender;')
        .replace('id = uint256(keccak256', 'id = uint8(uint256(keccak256')
        .replace('nonce)));', 'nonce))));'),
    );
    expect(found.map((f) => f.severity)).toEqual(['high']);
  });
});

describeRuleExamples(rules, RANDOMNESS_EXAMPLES);
