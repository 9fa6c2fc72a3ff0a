/**
 * Re-entrancy rules beside the shapes that look like re-entrancy and are not: the gas stipend of
 * `send`/`transfer`, locks taken in the body, and internal functions whose address parameter only
 * stored state fills.
 */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { REENTRANCY_EXAMPLES } from './reentrancy.examples.ts';
import * as rules from './reentrancy.ts';

/** The functions `sol.reentrancy.state-after-call` reports in `src`, each with its severity. */
async function stateAfterCall(src: string): Promise<Array<[string | undefined, string]>> {
  return (await findingsOf('sol.reentrancy.state-after-call', src)).map((v) => [v.function, v.severity]);
}

describe('sol.reentrancy.state-after-send', () => {
  it('is informational: the gas stipend prevents re-entry; call.value stays with the High rule', async () => {
    const src = `pragma solidity 0.5.12;
contract R { uint counter;
  function f() public { require(counter <= 5); if (!msg.sender.send(1 ether)) revert(); counter += 1; }
  function g() public { require(counter <= 5); (bool ok, ) = msg.sender.call.value(1 ether)(""); require(ok); counter += 1; } }`;
    const low = await findingsOf('sol.reentrancy.state-after-send', src);
    expect(low).toHaveLength(1);
    expect(low[0]).toMatchObject({ severity: 'informational', function: 'f' });
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

describeRuleExamples(rules, REENTRANCY_EXAMPLES);

describe('internal calls to views', () => {
  // `release` reads what is owed through a helper that asks the token (its interface is in a
  // package the scan does not hold), then records it and pays.
  const src = (mutability: string): string => `pragma solidity 0.8.20;
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
contract Vesting { mapping(address => uint256) released;
  function releasable(address token) public ${mutability} returns (uint256) {
    return IERC20(token).balanceOf(address(this)) - released[token];
  }
  function release(address token) external {
    uint256 amount = releasable(token);
    released[token] += amount;
    IERC20(token).transfer(msg.sender, amount);
  } }`;

  it('are no reentrancy point: every call a view makes is a STATICCALL', async () => {
    expect(await findingsOf('sol.reentrancy.state-after-call', src('view'))).toEqual([]);
  });

  it('are one when the helper may change state', async () => {
    expect(await stateAfterCall(src(''))).toEqual([['release', 'high']]);
  });
});

describe('a locked function and the functions that act on what it writes after its call', () => {
  const src = (guard: string): string => `pragma solidity 0.8.20;
interface IMigration { function onMigration(bytes calldata data) external payable; }
contract Coordinator { address owner; bool locked; uint256 fee; mapping(uint256 => uint256) balances;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  modifier onlyOwner() { require(msg.sender == owner); _; }
  function migrate(uint256 id, address next) external nonReentrant {
    IMigration(next).onMigration(abi.encode(balances[id]));
    fee = fee + 1;
  }
  function setFee(uint256 f) external ${guard} { fee = fee + f; } }`;

  it('an unlocked function anyone calls acts on the stale state: High', async () => {
    expect(await stateAfterCall(src(''))).toEqual([['migrate', 'high']]);
  });

  it('one only a role reaches needs the callee to hold the role: Low', async () => {
    expect(await stateAfterCall(src('onlyOwner'))).toEqual([['migrate', 'low']]);
    const [found] = await findingsOf('sol.reentrancy.state-after-call', src('onlyOwner'));
    expect(found?.description).toContain('only role-restricted functions (`setFee()`)');
  });
});

describe('entry points restricted by a role map', () => {
  // `transmit` runs upkeeps for the transmitters the owner appoints, then books what they used.
  const src = (grant: string): string => `pragma solidity 0.8.20;
contract Registry { struct Transmitter { bool active; uint96 balance; }
  address owner; mapping(address => Transmitter) s_transmitters; mapping(uint256 => uint256) spent;
  error OnlyActiveTransmitters();
  function setTransmitter(address t) external { ${grant} s_transmitters[t].active = true; }
  function join() external { ${grant} s_transmitters[msg.sender].active = true; }
  function transmit(uint256 id, address target, bytes calldata data) external {
    if (!s_transmitters[msg.sender].active) revert OnlyActiveTransmitters();
    (bool ok, ) = target.call(data);
    spent[id] += ok ? 1 : 0;
  } }`;

  it('only accounts the owner appoints reach it: Low', async () => {
    expect(await stateAfterCall(src('require(msg.sender == owner);'))).toEqual([['transmit', 'low']]);
    // Unless the check lets others through too (after a time, anyone).
    const open = src('require(msg.sender == owner);').replace(
      'if (!s_transmitters[msg.sender].active)',
      'if (!s_transmitters[msg.sender].active && block.timestamp < 100)',
    );
    expect(await stateAfterCall(open)).toEqual([['transmit', 'medium']]);
  });

  it('a map anyone can enter is no role, even past a check that they are not in it yet', async () => {
    expect(await stateAfterCall(src(''))).toEqual([['transmit', 'medium']]);
    expect(await stateAfterCall(src('require(!s_transmitters[msg.sender].active);'))).toEqual([
      ['transmit', 'medium'],
    ]);
    expect(await stateAfterCall(src('require(msg.sender == tx.origin);'))).toEqual([['transmit', 'medium']]);
  });
});

describe('modifiers named like a lock', () => {
  const src = (modifier: string): string => `pragma solidity 0.8.20;
contract Bank { mapping(address => uint256) balances; uint256 openBlock;
  modifier ${modifier}() { require(block.number > openBlock); _; }
  function deposit() external payable ${modifier} { balances[msg.sender] += msg.value; }
  function withdraw() external ${modifier} {
    (bool ok, ) = msg.sender.call{value: balances[msg.sender]}("");
    require(ok);
    balances[msg.sender] = 0;
  } }`;

  it('a word of the name that contains "lock" is no lock', async () => {
    expect(await stateAfterCall(src('afterBlock'))).toEqual([['withdraw', 'high']]);
    expect(await stateAfterCall(src('timelocked'))).toEqual([['withdraw', 'high']]);
    expect(await stateAfterCall(src('reentrantOK'))).toEqual([['withdraw', 'high']]);
  });

  it('"lock" as a word of the name is one', async () => {
    expect(await stateAfterCall(src('lockTheSwap'))).toEqual([]);
  });
});

describe('a callee stored by an earlier transaction', () => {
  const src = (guard: string): string => `pragma solidity 0.8.20;
interface IHook { function hook() external; }
contract Registry { address owner; address target; uint256 count;
  function setTarget(address t) external { ${guard} target = t; }
  function fire() external { IHook(target).hook(); count += 1; } }`;

  it('is the choice of whoever set it: anyone, when the setter checks nobody', async () => {
    expect(await stateAfterCall(src(''))).toEqual([['fire', 'medium']]);
  });

  it('only the owner, when the setter checks the caller: no callee anyone chooses', async () => {
    expect(await stateAfterCall(src('require(msg.sender == owner);'))).toEqual([]);
  });
});
