import { describe, expect, it } from 'vitest';
import { scanTree } from '../index.ts';
import { memoryTree, scanSource } from '../test-helpers.ts';
import type { EngineVulnerability } from '../types.ts';
import { SolFile } from './model.ts';
import { parseSolidity } from './parser.ts';
import { foundryRemappings, ProjectIndex, parseRemappings } from './project.ts';

async function solFile(path: string, source: string): Promise<SolFile> {
  const p = await parseSolidity(source);
  return new SolFile(path, source, p.root, p.errors);
}

/** Medium-and-above findings of a scan of `files`, as `rule@file:line`. */
async function alarms(files: Record<string, string>): Promise<string[]> {
  const r = await scanTree(memoryTree(files), { type: 'standard' });
  return r.vulnerabilities
    .filter(serious)
    .map((v) => `${v.ruleId}@${v.location.file}:${v.location.startLine}`);
}

function serious(v: EngineVulnerability): boolean {
  return v.severity === 'critical' || v.severity === 'high' || v.severity === 'medium';
}

describe('ProjectIndex', () => {
  it('linearises contracts as Solidity does (C3), across files', async () => {
    const a = await solFile('A.sol', 'contract A {}');
    const bc = await solFile('BC.sol', 'import "./A.sol"; contract B is A {} contract C is A {}');
    const d = await solFile('D.sol', 'import "./BC.sol"; contract D is B, C {}');
    const project = new ProjectIndex([a, bc, d]);
    const D = d.contracts[0]!;
    expect(project.linearize(D).map((c) => c.name)).toEqual(['D', 'C', 'B', 'A']);
  });

  it('resolves relative imports, remappings, node_modules and Foundry lib/ packages', async () => {
    const remappings = [
      ...parseRemappings('@oz/=lib/openzeppelin-contracts/contracts/\n# a comment\n'),
      ...foundryRemappings('[profile.default]\nremappings = ["solmate/=lib/solmate/src/"]\n'),
    ];
    const files = await Promise.all([
      solFile('src/Vault.sol', 'contract Vault {}'),
      solFile('src/sub/Uses.sol', 'import "../Vault.sol";'),
      solFile('lib/openzeppelin-contracts/contracts/access/Ownable.sol', 'contract Ownable {}'),
      solFile('lib/solmate/src/tokens/ERC20.sol', 'contract ERC20 {}'),
      solFile('node_modules/@uniswap/v2-core/contracts/Pair.sol', 'contract Pair {}'),
      solFile('lib/forge-std/src/Test.sol', 'contract Test {}'),
    ]);
    const project = new ProjectIndex(files, remappings);
    const from = 'src/sub/Uses.sol';
    expect(project.resolve(from, '../Vault.sol')?.path).toBe('src/Vault.sol');
    expect(project.resolve(from, '@oz/access/Ownable.sol')?.path).toBe(
      'lib/openzeppelin-contracts/contracts/access/Ownable.sol',
    );
    expect(project.resolve(from, 'solmate/tokens/ERC20.sol')?.path).toBe('lib/solmate/src/tokens/ERC20.sol');
    expect(project.resolve(from, '@uniswap/v2-core/contracts/Pair.sol')?.path).toBe(
      'node_modules/@uniswap/v2-core/contracts/Pair.sol',
    );
    expect(project.resolve(from, 'forge-std/Test.sol')?.path).toBe('lib/forge-std/src/Test.sol');
    expect(project.resolve(from, 'missing/Thing.sol')).toBeUndefined();
  });

  it('names what a file imports, with aliases, and not what it does not import when names collide', async () => {
    const a1 = await solFile('a/Token.sol', 'contract Token { uint public x; }');
    const a2 = await solFile('b/Token.sol', 'contract Token { uint public y; }');
    const user = await solFile('a/User.sol', 'import {Token as T} from "./Token.sol"; contract User is T {}');
    const project = new ProjectIndex([a1, a2, user]);
    const v = project.visible(user);
    expect(v.contractsByName.get('T')?.file.path).toBe('a/Token.sol');
    expect(v.contractsByName.get('Token')?.file.path).toBe('a/Token.sol');
    expect(project.linearize(user.contracts[0]!).map((c) => c.file.path)).toEqual([
      'a/User.sol',
      'a/Token.sol',
    ]);
  });
});

const OWNABLE = `pragma solidity ^0.8.20;
abstract contract Context { function _msgSender() internal view virtual returns (address) { return msg.sender; } }
abstract contract Ownable is Context {
  address private _owner;
  error Unauthorized(address account);
  constructor() { _owner = _msgSender(); }
  modifier fromTreasurer() { _checkOwner(); _; }
  function owner() public view returns (address) { return _owner; }
  function _checkOwner() internal view { if (owner() != _msgSender()) revert Unauthorized(_msgSender()); }
}`;

describe('the project model in the rules', () => {
  const vault = `pragma solidity ^0.8.20;
import "@oz/access/Ownable.sol";
contract Vault is Ownable {
  address public treasury;
  function setTreasury(address t) external fromTreasurer { treasury = t; }
  function sweep(address payable to) external fromTreasurer { to.transfer(address(this).balance); }
  receive() external payable {}
}`;

  it('knows a modifier declared in another file (through a remapping, with _msgSender())', async () => {
    const found = await alarms({
      'remappings.txt': '@oz/=lib/oz/\n',
      'lib/oz/access/Ownable.sol': OWNABLE,
      'src/Vault.sol': vault,
    });
    expect(found).toEqual([]);
    // The same file alone: the modifier is unknown, so the owner-only functions look open.
    const alone = (await scanSource(vault, 'standard', 'src/Vault.sol')).filter(serious);
    expect(alone.length).toBeGreaterThan(0);
  });

  it('sees a nonce consumed by a helper of a base contract in another file', async () => {
    const nonces = `pragma solidity ^0.8.20;
abstract contract Nonces {
  mapping(address => uint256) private _nonces;
  function _useNonce(address owner) internal returns (uint256) { unchecked { return _nonces[owner]++; } }
}`;
    const token = `pragma solidity ^0.8.20;
import "./Nonces.sol";
contract Token is Nonces {
  mapping(address => mapping(address => uint256)) public allowance;
  function permit(address owner, address spender, uint256 value, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 digest = keccak256(abi.encode(owner, spender, value, _useNonce(owner)));
    address signer = ecrecover(digest, v, r, s);
    require(signer != address(0) && signer == owner, "bad signature");
    allowance[owner][spender] = value;
  }
}`;
    const found = await alarms({ 'src/Nonces.sol': nonces, 'src/Token.sol': token });
    expect(found).toEqual([]);
    const alone = await scanSource(token, 'standard', 'src/Token.sol');
    expect(alone.map((v) => v.ruleId)).toContain('sol.access.signature-replay');
  });

  it('recognises a transient-storage reentrancy lock declared in another file, whatever its name', async () => {
    const guard = `pragma solidity ^0.8.24;
abstract contract Guarded {
  modifier guarded() {
    assembly { if tload(0) { revert(0, 0) } tstore(0, 1) }
    _;
    assembly { tstore(0, 0) }
  }
}`;
    const bank = `pragma solidity ^0.8.24;
import "./Guarded.sol";
contract Bank is Guarded {
  mapping(address => uint256) public balances;
  function deposit() external payable guarded { balances[msg.sender] += msg.value; }
  function withdraw() external guarded {
    uint256 amount = balances[msg.sender];
    (bool ok, ) = msg.sender.call{value: amount}("");
    require(ok);
    balances[msg.sender] = 0;
  }
}`;
    const found = await alarms({ 'src/Guarded.sol': guard, 'src/Bank.sol': bank });
    expect(found).toEqual([]);
    const alone = (await scanSource(bank, 'standard', 'src/Bank.sol')).map((v) => v.ruleId);
    expect(alone).toContain('sol.reentrancy.state-after-call');
  });

  it('knows a file-level struct with a library attached is no contract to call', async () => {
    const lib = `pragma solidity ^0.8.20;
struct Order { address maker; uint256 amount; }
library OrderLib { function hash(Order calldata o) internal pure returns (bytes32) { return keccak256(abi.encode(o)); } }`;
    const book = `pragma solidity ^0.8.20;
import "./OrderLib.sol";
contract Book {
  using OrderLib for Order;
  mapping(bytes32 => bool) public filled;
  uint256 public volume;
  function fill(Order calldata order) external {
    bytes32 h = order.hash();
    require(!filled[h]);
    filled[h] = true;
    volume += order.amount;
  }
}`;
    expect(await alarms({ 'src/OrderLib.sol': lib, 'src/Book.sol': book })).toEqual([]);
  });

  it('reports a finding in a base contract at the base file, once', async () => {
    const base = `pragma solidity ^0.8.20;
contract Base {
  mapping(address => uint256) public balances;
  function withdraw() public {
    (bool ok, ) = msg.sender.call{value: balances[msg.sender]}("");
    require(ok);
    balances[msg.sender] = 0;
  }
}`;
    const child = `pragma solidity ^0.8.20;
import "./Base.sol";
contract Child is Base { function deposit() external payable { balances[msg.sender] += msg.value; } }`;
    const found = await alarms({ 'src/Base.sol': base, 'src/Child.sol': child });
    expect(found.filter((f) => f.startsWith('sol.reentrancy.state-after-call'))).toEqual([
      'sol.reentrancy.state-after-call@src/Base.sol:5',
    ]);
  });
});

describe('modern idioms', () => {
  it('judges delegatecall by where its target comes from', async () => {
    const src = `pragma solidity ^0.8.20;
contract Proxy {
  address public implementation;
  address public admin;
  constructor(address impl) { implementation = impl; admin = msg.sender; }
  function upgrade(address impl) external { require(msg.sender == admin); implementation = impl; }
  function _delegate(address impl) internal {
    (bool ok, bytes memory ret) = impl.delegatecall(msg.data);
    require(ok, string(ret));
  }
  fallback() external payable { _delegate(implementation); }
  function multicall(bytes[] calldata data) external {
    for (uint256 i = 0; i < data.length; i++) { (bool ok, ) = address(this).delegatecall(data[i]); require(ok); }
  }
  function simulate(address target, bytes calldata data) external {
    (bool ok, bytes memory ret) = target.delegatecall(data);
    revert(string(abi.encode(ok, ret)));
  }
  function exec(address target, bytes calldata data) external {
    (bool ok, ) = target.delegatecall(data);
    require(ok);
  }
}`;
    const found = (await scanSource(src)).filter((v) => v.ruleId === 'sol.delegatecall.controlled');
    expect(found.map((v) => v.function)).toEqual(['exec']);
  });

  it('reads unchecked blocks of 0.8 as the author meant them', async () => {
    const src = `pragma solidity ^0.8.20;
interface IPrice { function price(uint256 i) external view returns (uint256); }
contract Renewal {
  IPrice public immutable prices;
  mapping(address => uint48) public nonce;
  mapping(address => uint256) public credit;
  constructor(IPrice p) { prices = p; }
  function total(uint256 n) external view returns (uint256 sum) {
    for (uint256 i = 0; i < n; i++) { unchecked { sum += prices.price(i); } }
  }
  function invalidate(uint48 next) external {
    uint48 old = nonce[msg.sender];
    if (next <= old) revert();
    unchecked { uint48 delta = next - old; if (delta > type(uint16).max) revert(); }
    nonce[msg.sender] = next;
  }
  function add(uint256 amount) external { unchecked { credit[msg.sender] += amount; } }
}`;
    const found = (await scanSource(src)).filter((v) => v.category === 'arithmetic' && serious(v));
    expect(found.map((v) => v.function)).toEqual(['add']);
  });

  it('takes a block hash that is only returned for what it is, and x % 2**32 for a truncation', async () => {
    const src = `pragma solidity ^0.8.20;
library BlockHashes { function at(uint256 n) internal view returns (bytes32) { return blockhash(n); } }
contract Oracle {
  uint32 public last;
  function stamp() external { last = uint32(block.timestamp % 2**32); }
  function hashOf(uint256 n) external view returns (bytes32) { return BlockHashes.at(n); }
  function lottery() external view returns (uint256) { return uint256(blockhash(block.number - 1)) % 10; }
}`;
    const found = (await scanSource(src)).filter((v) => v.category === 'bad_randomness' && serious(v));
    expect(found.map((v) => v.function)).toEqual(['lottery']);
  });
});

describe('caller checks written in assembly', () => {
  it('counts a Yul check of caller() that reverts, as Solady writes Ownable', async () => {
    const src = `pragma solidity ^0.8.20;
contract Owned {
  address public treasury;
  function _checkOwner() internal view {
    assembly { if iszero(eq(caller(), sload(0))) { mstore(0x00, 0x82b42900) revert(0x1c, 0x04) } }
  }
  modifier onlyOwner() { _checkOwner(); _; }
  function setTreasury(address t) external onlyOwner { treasury = t; }
  function sweep(address payable to) external onlyOwner { to.transfer(address(this).balance); }
  receive() external payable {}
}`;
    expect((await scanSource(src)).filter(serious)).toEqual([]);
    const open = src.replace('if iszero(eq(caller(), sload(0)))', 'if iszero(sload(1))');
    expect((await scanSource(open)).filter(serious).length).toBeGreaterThan(0);
  });
});

describe('idioms of long-deployed protocols', () => {
  it('recognises a lock kept in a field of a packed slot, shared by a modifier and an inline check', async () => {
    const src = `pragma solidity 0.7.6;
interface ICallback { function callback(uint256 amount) external; }
contract Pool {
  struct Slot0 { uint160 price; bool unlocked; }
  Slot0 public slot0;
  uint256 public fees;
  uint256 public reserve;
  modifier lock() { require(slot0.unlocked, 'LOK'); slot0.unlocked = false; _; slot0.unlocked = true; }
  function flash(uint256 amount) external lock {
    ICallback(msg.sender).callback(amount);
    fees += amount / 100;
  }
  function swap(uint256 amount) external {
    Slot0 memory start = slot0;
    require(start.unlocked, 'LOK');
    slot0.unlocked = false;
    reserve -= amount / 2;
    ICallback(msg.sender).callback(amount);
    fees += 1;
    slot0.unlocked = true;
  }
}`;
    const found = (await scanSource(src)).filter((v) => v.category === 'reentrancy' && serious(v));
    expect(found).toEqual([]);
    const unlocked = src.replace("require(start.unlocked, 'LOK');", '');
    const again = (await scanSource(unlocked)).filter((v) => v.category === 'reentrancy' && serious(v));
    expect(again.map((v) => v.function)).toContain('swap');
  });

  it('takes a public state variable read through an interface for a view (a STATICCALL)', async () => {
    const src = `pragma solidity ^0.8.20;
contract Market { uint256 public totalSupply; uint256 public borrowIndex; }
contract Controller {
  mapping(address => uint256) public index;
  function accrue(address market) external {
    uint256 supply = Market(market).totalSupply();
    index[market] = supply + Market(market).borrowIndex();
  }
}`;
    expect((await scanSource(src)).filter((v) => v.category === 'reentrancy' && serious(v))).toEqual([]);
  });

  it('sees a vote recorded through a storage pointer and a nonce advanced through a local', async () => {
    const src = `pragma solidity ^0.8.20;
contract Governor {
  struct Receipt { bool hasVoted; uint96 votes; }
  mapping(uint256 => mapping(address => Receipt)) public receipts;
  mapping(address => uint256) public nonces;
  mapping(address => mapping(address => uint256)) public allowance;
  uint256 public forVotes;
  function castVoteBySig(uint256 id, uint8 v, bytes32 r, bytes32 s) external {
    address voter = ecrecover(keccak256(abi.encode(id)), v, r, s);
    require(voter != address(0));
    Receipt storage receipt = receipts[id][voter];
    require(receipt.hasVoted == false, 'voted');
    forVotes += 1;
    receipt.hasVoted = true;
  }
  function permit(address owner, address spender, uint256 value, uint8 v, bytes32 r, bytes32 s) external {
    uint256 current = nonces[owner];
    require(owner == ecrecover(keccak256(abi.encode(spender, value, current)), v, r, s));
    nonces[owner] = current + 1;
    allowance[owner][spender] = value;
  }
}`;
    expect((await scanSource(src)).filter((v) => v.ruleId === 'sol.access.signature-replay')).toEqual([]);
  });

  it('takes a proxy whose admin replaces the implementation for what it is, not a library it never can', async () => {
    const proxy = `pragma solidity ^0.8.20;
contract Delegator {
  address public admin;
  address public implementation;
  constructor(address impl) { admin = msg.sender; implementation = impl; }
  function setImplementation(address impl) external { require(msg.sender == admin); implementation = impl; }
  fallback() external payable {
    (bool ok, ) = implementation.delegatecall(msg.data);
    require(ok);
  }
}`;
    expect((await scanSource(proxy)).filter((v) => v.ruleId === 'sol.delegatecall.controlled')).toEqual([]);
    const library = proxy.replace(
      'function setImplementation(address impl) external { require(msg.sender == admin); implementation = impl; }',
      '',
    );
    expect((await scanSource(library)).map((v) => v.ruleId)).toContain('sol.delegatecall.controlled');
  });

  it('lowers an ignored transfer result of a token the contract fixes in code', async () => {
    const src = `pragma solidity ^0.8.20;
interface IERC20 { function transfer(address to, uint256 v) external returns (bool); function balanceOf(address) external view returns (uint256); }
contract Drip {
  IERC20 public immutable token;
  mapping(address => uint256) public paid;
  constructor(IERC20 t) { token = t; }
  function compAddress() public pure returns (address) { return 0xc00e94Cb662C3520282E6f5717214004A7f26888; }
  function drip(address to, uint256 v) external { IERC20 t = token; paid[to] += v; t.transfer(to, v); }
  function grant(address to, uint256 v) external { paid[to] += v; IERC20(compAddress()).transfer(to, v); }
  function pay(IERC20 any, address to, uint256 v) external { paid[to] += v; any.transfer(to, v); }
}`;
    const found = (await scanSource(src)).filter((v) => v.ruleId === 'sol.erc20.unchecked-transfer');
    // An immutable set at construction holds whatever token the deployer passed: still Medium.
    expect(found.map((v) => [v.function, v.severity])).toEqual([
      ['drip', 'medium'],
      ['grant', 'low'],
      ['pay', 'medium'],
    ]);
  });
});

describe('what the refinements must not hide', () => {
  const serious_ = async (src: string, rule: string): Promise<string[]> =>
    (await scanSource(src)).filter((v) => v.ruleId === rule && serious(v)).map((v) => v.function ?? '');

  it('keeps a reentrancy lock from passing for a run-once latch', async () => {
    const src = `pragma solidity ^0.8.20;
contract Exec {
  uint256 private locked = 1;
  modifier nonReentrant() { require(locked == 1); locked = 2; _; locked = 1; }
  function execute(address t, bytes calldata d) external nonReentrant { (bool ok, ) = t.delegatecall(d); require(ok); }
}`;
    expect(await serious_(src, 'sol.delegatecall.controlled')).toEqual(['execute']);
  });

  it('does not take a zero-address check of the caller for a caller check', async () => {
    const src = `pragma solidity ^0.8.20;
contract C {
  address public owner;
  function _touch(address who) internal pure { require(who != address(0)); }
  function setOwner(address o) external { _touch(msg.sender); owner = o; }
  function kill() external { _touch(msg.sender); selfdestruct(payable(msg.sender)); }
}`;
    const rules = (await scanSource(src)).filter(serious).map((v) => v.ruleId);
    expect(rules).toContain('sol.access.unprotected-selfdestruct');
  });

  it('reports a delegatecall inside a library helper', async () => {
    const src = `pragma solidity ^0.8.20;
library Exec { function run(address t, bytes memory d) internal { (bool ok, ) = t.delegatecall(d); require(ok); } }
contract Wallet { function execute(address t, bytes calldata d) external { Exec.run(t, d); } }`;
    expect(await serious_(src, 'sol.delegatecall.controlled')).toEqual(['run']);
  });

  it('does not take a field of a mapping entry, or a call counter, for a lock', async () => {
    const field = `pragma solidity ^0.8.20;
contract Bank {
  struct Account { uint256 balance; bool withdrawing; }
  mapping(address => Account) public accounts;
  function withdraw() external {
    require(accounts[msg.sender].balance > 0);
    accounts[msg.sender].withdrawing = true;
    (bool ok, ) = msg.sender.call{value: accounts[msg.sender].balance}("");
    require(ok);
    accounts[msg.sender].balance = 0;
  }
}`;
    expect(await serious_(field, 'sol.reentrancy.state-after-call')).toEqual(['withdraw']);
    const counted = `pragma solidity ^0.8.20;
contract Bank {
  uint256 public calls;
  mapping(address => uint256) public balances;
  modifier counted() { require(calls < 1000000); calls += 1; _; }
  function withdraw() external counted {
    (bool ok, ) = msg.sender.call{value: balances[msg.sender]}("");
    require(ok);
    balances[msg.sender] = 0;
  }
}`;
    expect(await serious_(counted, 'sol.reentrancy.state-after-call')).toEqual(['withdraw']);
  });

  it('takes neither tx.origin nor an account the function replaces for a role', async () => {
    const proxy = `pragma solidity ^0.8.20;
contract P {
  address public implementation;
  function upgradeTo(address i) external { require(msg.sender == tx.origin); implementation = i; }
  fallback() external payable { (bool ok, ) = implementation.delegatecall(msg.data); require(ok); }
}`;
    expect(await serious_(proxy, 'sol.delegatecall.controlled')).toEqual(['fallback']);
    const auction = `pragma solidity ^0.8.20;
contract Auction {
  address public highestBidder;
  mapping(address => uint256) public pending;
  function bid() external payable { pending[highestBidder] += msg.value; highestBidder = msg.sender; }
  function withdraw() external {
    require(msg.sender != highestBidder);
    (bool ok, ) = msg.sender.call{value: pending[msg.sender]}("");
    require(ok);
    pending[msg.sender] = 0;
  }
}`;
    expect(await serious_(auction, 'sol.reentrancy.state-after-call')).toEqual(['withdraw']);
  });

  it('keeps a product of caller numbers High in a SafeMath contract, and a signed price replayable', async () => {
    const bec = `pragma solidity ^0.4.24;
library SafeMath { function add(uint a, uint b) internal pure returns (uint) { uint c = a + b; require(c >= a); return c; }
  function sub(uint a, uint b) internal pure returns (uint) { require(b <= a); return a - b; } }
contract Token {
  using SafeMath for uint256;
  mapping(address => uint256) public balances;
  function batchTransfer(address[] _receivers, uint256 _value) public returns (bool) {
    uint cnt = _receivers.length;
    uint256 amount = uint256(cnt) * _value;
    require(_value > 0 && balances[msg.sender] >= amount);
    balances[msg.sender] = balances[msg.sender].sub(amount);
    for (uint i = 0; i < cnt; i++) balances[_receivers[i]] = balances[_receivers[i]].add(_value);
    return true;
  }
}`;
    const found = (await scanSource(bec)).filter((v) => v.category === 'arithmetic' && v.severity === 'high');
    expect(found.map((v) => v.function)).toContain('batchTransfer');
    const oracle = `pragma solidity ^0.8.20;
contract Oracle {
  address public signer;
  uint256 public price;
  function setPrice(uint256 _price, uint8 v, bytes32 r, bytes32 s) external {
    require(ecrecover(keccak256(abi.encode(_price)), v, r, s) == signer && signer != address(0));
    require(_price > 0);
    price = _price;
  }
}`;
    expect(await serious_(oracle, 'sol.access.signature-replay')).toEqual(['setPrice']);
  });
});
