/**
 * Severity and confidence of the payout and local-arithmetic rules: each states how sure it is and
 * how bad the match is, from what the analysis proves about the contract.
 */
import { describe, expect, it } from 'vitest';
import { findingsOf } from '../../test-helpers.ts';
import { typeRange } from './arithmetic.ts';

describe('sol.payout.fixed-amount-anyone', () => {
  it('is High where the contract holds ether booked for others, Medium otherwise', async () => {
    const bank = `pragma solidity 0.5.12;
contract Bank { mapping(address => uint) balances;
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function gift() public { msg.sender.transfer(1 ether); } }`;
    const tip = `pragma solidity 0.5.12;
contract Tip { function gift() public payable { msg.sender.transfer(1 ether); } }`;
    const [b] = await findingsOf('sol.payout.fixed-amount-anyone', bank);
    const [t] = await findingsOf('sol.payout.fixed-amount-anyone', tip);
    expect(b).toMatchObject({ severity: 'high', confidence: 'high', swc: 'SWC-105' });
    expect(t).toMatchObject({ severity: 'medium', confidence: 'high' });
  });

  it('is silent when a modifier or an internal function guards the payout', async () => {
    const src = `pragma solidity 0.5.12;
contract G { address owner; mapping(address => bool) done;
  modifier onlyOwner() { require(msg.sender == owner); _; }
  function once() internal { require(!done[msg.sender]); done[msg.sender] = true; }
  function a() public onlyOwner { msg.sender.transfer(1 ether); }
  function b() public { once(); msg.sender.transfer(1 ether); } }`;
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toEqual([]);
  });

  it('treats a local only ever assigned a literal as a fixed amount', async () => {
    const src = `pragma solidity 0.5.12;
contract L { function f() public { uint amount = 10; msg.sender.transfer(amount); } }`;
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toHaveLength(1);
  });
});

describe('sol.reentrancy.state-after-send', () => {
  it('is Low: the gas stipend prevents re-entry; call.value stays with the High rule', async () => {
    const src = `pragma solidity 0.5.12;
contract R { uint counter;
  function f() public { require(counter <= 5); if (!msg.sender.send(1 ether)) revert(); counter += 1; }
  function g() public { require(counter <= 5); (bool ok, ) = msg.sender.call.value(1 ether)(""); require(ok); counter += 1; } }`;
    const low = await findingsOf('sol.reentrancy.state-after-send', src);
    expect(low).toHaveLength(1);
    expect(low[0]).toMatchObject({ severity: 'low', function: 'f' });
    const high = await findingsOf('sol.reentrancy.state-after-call', src);
    expect(high.map((v) => [v.function, v.severity])).toEqual([['g', 'high']]);
  });

  it('is silent under a reentrancy lock', async () => {
    const src = `pragma solidity 0.5.12;
contract R { uint counter; bool locked;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  function f() public nonReentrant { require(counter <= 5); msg.sender.transfer(1 ether); counter += 1; } }`;
    expect(await findingsOf('sol.reentrancy.state-after-send', src)).toEqual([]);
  });
});

describe('sol.frontrun.recipient-race', () => {
  it('is Medium when the recipient is chosen by a revealed answer, Low for a plain race', async () => {
    const revealed = `pragma solidity 0.5.12;
contract T { address payable winner;
  function play(bytes32 g) public { if (keccak256(abi.encode(g)) == keccak256(abi.encode("x"))) winner = msg.sender; }
  function reward() public payable { winner.transfer(msg.value); } }`;
    const plain = `pragma solidity 0.5.12;
contract T { address payable last;
  function join() public { last = msg.sender; }
  function reward() public payable { last.transfer(msg.value); } }`;
    expect((await findingsOf('sol.frontrun.recipient-race', revealed))[0]?.severity).toBe('medium');
    expect((await findingsOf('sol.frontrun.recipient-race', plain))[0]?.severity).toBe('low');
  });
});

describe('sol.unchecked-call.ineffective-check', () => {
  it('reports an empty failure branch and a result OR-ed with a tautology', async () => {
    const src = `pragma solidity 0.5.12;
contract U {
  function a(address payable to) public { if (!to.send(1 ether)) { } else { } }
  function b(address payable to) public { if (!to.send(1 ether) || 1 == 1) { revert(); } }
  function c(address payable to) public { if (!to.send(1 ether)) { revert(); } } }`;
    const found = await findingsOf('sol.unchecked-call.ineffective-check', src);
    expect(found.map((v) => [v.function, v.severity])).toEqual([
      ['a', 'medium'],
      ['b', 'low'],
    ]);
  });
});

describe('sol.arithmetic.local-wrap', () => {
  it('knows integer widths', () => {
    expect(typeRange('uint8')).toMatchObject({ lo: 0n, hi: 255n, bits: 8 });
    expect(typeRange('int16')).toMatchObject({ lo: -32768n, hi: 32767n });
    expect(typeRange('uint')).toMatchObject({ bits: 256 });
    expect(typeRange('address')).toBeUndefined();
  });

  it('a certain wrap of a dead local is Low with high confidence; a used one is Medium', async () => {
    const src = `pragma solidity 0.5.12;
contract A { uint8 public level;
  function dead() public { uint8 v = 0; v = v - 10; }
  function used() public { uint8 v = 0; v = v - 10; level = v; } }`;
    const found = await findingsOf('sol.arithmetic.local-wrap', src);
    expect(found.map((v) => [v.function, v.severity, v.confidence])).toEqual([
      ['dead', 'low', 'high'],
      ['used', 'medium', 'high'],
    ]);
  });

  it('a narrow accumulator that cannot wrap as written is informational', async () => {
    const src = `pragma solidity 0.5.12;
contract A { function f(uint8 p) public { uint8 v = 0; v = v + p; } }`;
    const [f] = await findingsOf('sol.arithmetic.local-wrap', src);
    expect(f).toMatchObject({ severity: 'informational', confidence: 'low' });
  });

  it('respects checked arithmetic from 0.8 and flags unchecked blocks', async () => {
    const checked = `pragma solidity 0.8.20;
contract A { function f() public pure returns (uint8) { uint8 v = 0; v = v - 10; return v; } }`;
    const unchecked = `pragma solidity 0.8.20;
contract A { function f() public pure returns (uint8) { uint8 v = 0; unchecked { v = v - 10; } return v; } }`;
    expect(await findingsOf('sol.arithmetic.local-wrap', checked)).toEqual([]);
    expect(await findingsOf('sol.arithmetic.local-wrap', unchecked)).toHaveLength(1);
  });

  it('proves a bounded sum safe: 200 + 55 fits uint8', async () => {
    const src = `pragma solidity 0.5.12;
contract A { uint8 public s; function f() public { uint8 v = 200; v = v + 55; s = v; } }`;
    expect(await findingsOf('sol.arithmetic.local-wrap', src)).toEqual([]);
  });
});

describe('sol.dos.failing-push-payment', () => {
  it('sees the stored leader through a payable() conversion', async () => {
    const src = `pragma solidity 0.8.20;
contract Auction { address leader; uint topBid;
  function bid() external payable { require(msg.value > topBid);
    payable(leader).transfer(topBid);
    leader = msg.sender; topBid = msg.value; } }`;
    const found = await findingsOf('sol.dos.failing-push-payment', src);
    expect(found.map((v) => v.location.startLine)).toEqual([4]);
  });
});

describe('inter-procedural caller checks', () => {
  it('a modifier that requires an internal predicate comparing msg.sender guards the function', async () => {
    const src = `pragma solidity 0.5.12;
contract O { address private _owner; address public relayer;
  function isOwner() public view returns (bool) { return msg.sender == _owner; }
  modifier onlyOwner() { require(isOwner()); _; }
  function setRelayer(address r) external onlyOwner { relayer = r; }
  function gift() external onlyOwner { msg.sender.transfer(1 ether); } }`;
    expect(await findingsOf('sol.access.unprotected-privileged-write', src)).toEqual([]);
    expect(await findingsOf('sol.payout.fixed-amount-anyone', src)).toEqual([]);
  });
});
