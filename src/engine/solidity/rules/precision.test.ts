/**
 * Shapes that look like a vulnerability to a purely syntactic rule and are not one, each beside
 * the variant that is: shadowed owner variables, locks taken in the body, internal functions
 * whose address parameter only stored state fills, and block numbers committed for a later
 * `blockhash`.
 */
import { describe, expect, it } from 'vitest';
import { findingsOf } from '../../test-helpers.ts';

describe('privileged writes follow the variable a check reads', () => {
  const shadowed = (redeclared: boolean): string => `pragma solidity ^0.4.18;
contract Ownable { address owner = msg.sender;
  modifier onlyOwner { if (owner == msg.sender) _; } }
contract Vault is Ownable { ${redeclared ? 'address owner = msg.sender;' : ''}
  function init() public { owner = msg.sender; }
  function sweep() public onlyOwner { msg.sender.transfer(this.balance); } }`;

  it('a write to a derived redeclaration of `owner` grants nothing: the modifier reads the base variable', async () => {
    expect(await findingsOf('sol.access.unprotected-privileged-write', shadowed(true))).toEqual([]);
  });

  it('the same write without the redeclaration takes over the owner', async () => {
    const found = await findingsOf('sol.access.unprotected-privileged-write', shadowed(false));
    expect(found.map((f) => f.function)).toEqual(['init']);
  });
});

describe('re-entrancy through a lock taken in the body', () => {
  const src = (locked: boolean): string => `pragma solidity ^0.4.24;
contract Desk { bool busy; mapping(address => uint) fees;
  function refund() public payable {
    ${locked ? 'if (busy) throw;' : ''}
    busy = true;
    if (!msg.sender.call.value(msg.value)()) throw;
    busy = false;
  }
  function cancel() public {
    ${locked ? 'if (busy) throw;' : ''}
    uint f = fees[msg.sender];
    busy = true;
    if (!msg.sender.call.value(f)()) throw;
    busy = false;
    fees[msg.sender] = 0;
  } }`;

  it('a flag tested and set before the call is a lock: releasing it is no stale state', async () => {
    expect(await findingsOf('sol.reentrancy.state-after-call', src(true))).toEqual([]);
  });

  it('setting the flag without testing it locks nothing', async () => {
    const found = await findingsOf('sol.reentrancy.state-after-call', src(false));
    expect(found.map((f) => f.function).sort()).toEqual(['cancel', 'refund']);
  });
});

describe('address parameters of internal functions are chosen by their callers', () => {
  const src = (fromCaller: boolean): string => `pragma solidity ^0.4.24;
interface Token { function transferFrom(address a, address b, uint v) external returns (bool); }
contract Auction { mapping(uint => address) tokenOf; mapping(uint => address) sellerOf; mapping(uint => uint) priceOf;
  function buy(uint id${fromCaller ? ', address token' : ''}) external {
    address t = ${fromCaller ? 'token' : 'tokenOf[id]'};
    settle(t, id);
    delete tokenOf[id];
  }
  function settle(address token, uint id) internal {
    require(Token(token).transferFrom(msg.sender, sellerOf[id], priceOf[id]));
    priceOf[id] = 0;
  } }`;

  it('a token address read from storage by every caller is not one the caller picks', async () => {
    expect(await findingsOf('sol.reentrancy.state-after-call', src(false))).toEqual([]);
  });

  it('a token address passed in by the caller can re-enter', async () => {
    const found = await findingsOf('sol.reentrancy.state-after-call', src(true));
    expect(found.length).toBeGreaterThan(0);
  });
});

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
