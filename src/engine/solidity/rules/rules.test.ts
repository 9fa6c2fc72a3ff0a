/**
 * Every Solidity rule fires on a small vulnerable contract (at the line marked `// HIT`) and stays
 * silent on its fixed counterpart.
 */
import { describe, expect, it } from 'vitest';
import { findingsOf } from '../../test-helpers.ts';
import { profiles, rulesFor, solidityRules } from './index.ts';

interface Case {
  rule: string;
  vulnerable: string;
  safe: string;
}

const CASES: Case[] = [
  {
    rule: 'sol.access.tx-origin',
    vulnerable: `pragma solidity 0.8.20;
contract W { address owner; function pay(address to) external { require(tx.origin == owner); // HIT
  payable(to).transfer(1); } }`,
    safe: `pragma solidity 0.8.20;
contract W { address owner; function pay(address to) external { require(msg.sender == owner); require(tx.origin == msg.sender);
  payable(to).transfer(1); } }`,
  },
  {
    rule: 'sol.access.unprotected-selfdestruct',
    vulnerable: `pragma solidity 0.4.24;
contract K { function kill() public { selfdestruct(msg.sender); // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract K { address owner; modifier onlyOwner { require(msg.sender == owner); _; }
  function kill() public onlyOwner { selfdestruct(msg.sender); } }`,
  },
  {
    rule: 'sol.deprecated.construct',
    vulnerable: `pragma solidity ^0.4.0;
contract D { function f(uint a) public { if (a == 0) throw; // HIT
} }`,
    safe: `pragma solidity ^0.4.24;
contract D { function f(uint a) public { require(a != 0); } }`,
  },
  {
    rule: 'sol.unchecked-call.low-level',
    vulnerable: `pragma solidity 0.4.24;
contract U { function pay(address to) public { to.send(1 ether); // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract U { function pay(address to) public { require(to.send(1 ether)); bool ok = to.call.value(1)(); require(ok); } }`,
  },
  {
    rule: 'sol.unchecked-call.not-invoked',
    vulnerable: `pragma solidity 0.4.24;
contract U { function pay(address to, uint v) public { to.call.value(v); // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract U { function pay(address to, uint v) public { require(to.call.value(v)()); } }`,
  },
  {
    rule: 'sol.randomness.block-values',
    vulnerable: `pragma solidity 0.4.24;
contract R { function roll() public view returns (uint) { return uint(keccak256(block.timestamp)) % 6; // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract R { mapping(bytes32 => bool) used; function id(uint n) public pure returns (bytes32) { return keccak256(n); } }`,
  },
  {
    rule: 'sol.logic.strict-balance-equality',
    vulnerable: `pragma solidity 0.8.20;
contract B { function done() external view returns (bool) { if (address(this).balance == 10 ether) { // HIT
 return true; } return false; } }`,
    safe: `pragma solidity 0.8.20;
contract B { function done() external view returns (bool) { if (address(this).balance >= 10 ether) { return true; } return false; } }`,
  },
  {
    rule: 'sol.pragma.floating',
    vulnerable: `pragma solidity ^0.8.0; // HIT
contract P {}`,
    safe: `pragma solidity 0.8.24;
contract P {}`,
  },
  {
    rule: 'sol.pragma.outdated',
    vulnerable: `pragma solidity 0.4.24; // HIT
contract P {}`,
    safe: `pragma solidity 0.8.24;
contract P {}`,
  },
  {
    rule: 'sol.visibility.default-public',
    vulnerable: `pragma solidity 0.4.24;
contract V { uint x; function set(uint a) { // HIT
 x = a; } }`,
    safe: `pragma solidity 0.4.24;
contract V { uint x; function set(uint a) internal { x = a; } }`,
  },
  {
    rule: 'sol.reentrancy.state-after-call',
    vulnerable: `pragma solidity 0.4.24;
contract Bank { mapping(address => uint) balances;
  function withdraw() public {
    uint amount = balances[msg.sender];
    require(msg.sender.call.value(amount)()); // HIT
    balances[msg.sender] = 0;
  } }`,
    safe: `pragma solidity 0.4.24;
contract Bank { mapping(address => uint) balances;
  function withdraw() public {
    uint amount = balances[msg.sender];
    balances[msg.sender] = 0;
    require(msg.sender.call.value(amount)());
  } }`,
  },
  {
    rule: 'sol.access.unprotected-privileged-write',
    vulnerable: `pragma solidity 0.4.24;
contract Wallet { address owner;
  function initWallet() public { // HIT
    owner = msg.sender; }
  function withdraw() public { require(msg.sender == owner); msg.sender.transfer(this.balance); } }`,
    safe: `pragma solidity 0.4.24;
contract Wallet { address owner;
  constructor() public { owner = msg.sender; }
  function setOwner(address o) public { require(msg.sender == owner); owner = o; }
  function withdraw() public { require(msg.sender == owner); msg.sender.transfer(this.balance); } }`,
  },
  {
    rule: 'sol.access.unprotected-ether-withdrawal',
    vulnerable: `pragma solidity 0.4.24;
contract Drain { function sweep(address to) public { to.transfer(this.balance); // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract Drain { address owner; function sweep(address to) public { require(msg.sender == owner); to.transfer(this.balance); } }`,
  },
  {
    rule: 'sol.logic.balance-not-debited',
    vulnerable: `pragma solidity 0.4.24;
contract W { mapping(address => uint) balances;
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function refund() public { msg.sender.transfer(balances[msg.sender]); // HIT
  } }`,
    safe: `pragma solidity 0.4.24;
contract W { mapping(address => uint) balances;
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function refund() public { uint b = balances[msg.sender]; balances[msg.sender] = 0; msg.sender.transfer(b); } }`,
  },
  {
    rule: 'sol.logic.inverted-balance-check',
    vulnerable: `pragma solidity 0.4.24;
contract W { mapping(address => uint) balances;
  function withdraw(uint amount) public {
    require(amount >= balances[msg.sender]); // HIT
    balances[msg.sender] -= amount; msg.sender.transfer(amount); } }`,
    safe: `pragma solidity 0.4.24;
contract W { mapping(address => uint) balances;
  function withdraw(uint amount) public {
    if (balances[msg.sender] < amount) revert();
    balances[msg.sender] -= amount; msg.sender.transfer(amount); } }`,
  },
  {
    rule: 'sol.delegatecall.controlled',
    vulnerable: `pragma solidity 0.4.24;
contract Proxy { function forward(address callee, bytes data) public { require(callee.delegatecall(data)); // HIT
} }`,
    safe: `pragma solidity 0.4.24;
contract Proxy { address owner; address lib;
  function forward(bytes data) public { require(msg.sender == owner); require(lib.delegatecall(data)); } }`,
  },
  {
    rule: 'sol.logic.tautological-guard',
    vulnerable: `pragma solidity 0.4.24;
contract T { uint[] codes; function pop() public { require(0 <= codes.length); // HIT
 codes.length--; } }`,
    safe: `pragma solidity 0.4.24;
contract T { uint[] codes; function pop() public { require(codes.length > 0); codes.length--; } }`,
  },
  {
    rule: 'sol.storage.array-length-manipulation',
    vulnerable: `pragma solidity 0.4.24;
contract M { uint[] map;
  function set(uint key, uint value) public { if (map.length <= key) { map.length = key + 1; }
    map[key] = value; // HIT
  } }`,
    safe: `pragma solidity 0.4.24;
contract M { uint[] map;
  function add(uint value) public { map.push(value); }
  function set(uint key, uint value) public { require(key < map.length); map[key] = value; } }`,
  },
  {
    rule: 'sol.arithmetic.unchecked-overflow',
    vulnerable: `pragma solidity 0.4.24;
contract C { mapping(address => uint) lockTime;
  function increaseLockTime(uint secs) public { lockTime[msg.sender] += secs; // HIT
  } }`,
    safe: `pragma solidity 0.4.24;
contract C { mapping(address => uint) lockTime;
  function increaseLockTime(uint secs) public { require(lockTime[msg.sender] + secs >= lockTime[msg.sender]); lockTime[msg.sender] += secs; } }`,
  },
  {
    rule: 'sol.randomness.block-value-flow',
    vulnerable: `pragma solidity 0.4.24;
contract L { function draw() public view returns (uint) {
    uint seed = block.difficulty; // HIT
    return uint(keccak256(seed, msg.sender)) % 10; } }`,
    safe: `pragma solidity 0.4.24;
contract L { function draw(uint seed) public view returns (uint) { return uint(keccak256(seed, msg.sender)) % 10; } }`,
  },
  {
    rule: 'sol.time.timestamp-dependence',
    vulnerable: `pragma solidity 0.4.25;
contract Roulette { uint pastBlockTime;
  function () public payable { require(now != pastBlockTime); // HIT
    pastBlockTime = now; } }`,
    safe: `pragma solidity 0.4.25;
contract Sale { uint end; function buy() public payable { require(now < end + 30 days); } }`,
  },
  {
    rule: 'sol.dos.external-call-in-loop',
    vulnerable: `pragma solidity 0.4.24;
contract Refund { address[] people; mapping(address => uint) refunds;
  function refundAll() public { for (uint i = 0; i < people.length; i++) {
      require(people[i].send(refunds[people[i]])); // HIT
  } } }`,
    safe: `pragma solidity 0.4.24;
contract Refund { mapping(address => uint) refunds;
  function withdraw() public { uint r = refunds[msg.sender]; refunds[msg.sender] = 0; msg.sender.transfer(r); } }`,
  },
  {
    rule: 'sol.dos.failing-push-payment',
    vulnerable: `pragma solidity 0.4.24;
contract Auction { address frontrunner; uint bid;
  function bidUp() public payable { require(msg.value > bid);
    require(frontrunner.send(bid)); // HIT
    frontrunner = msg.sender; bid = msg.value; } }`,
    safe: `pragma solidity 0.4.24;
contract Auction { address frontrunner; uint bid; mapping(address => uint) owed;
  function bidUp() public payable { require(msg.value > bid); owed[frontrunner] += bid; frontrunner = msg.sender; bid = msg.value; } }`,
  },
  {
    rule: 'sol.dos.unbounded-loop',
    vulnerable: `pragma solidity 0.4.24;
contract Q { address[] list;
  function join() public { list.push(msg.sender); }
  function payAll() public { for (uint i = 0; i < list.length; i++) { // HIT
      list[i].transfer(1); } } }`,
    safe: `pragma solidity 0.4.24;
contract Q { address[10] list;
  function payAll() public { for (uint i = 0; i < 10; i++) { list[i].transfer(1); } } }`,
  },
  {
    rule: 'sol.reentrancy.state-after-send',
    vulnerable: `pragma solidity 0.5.12;
contract R { mapping(address => uint) credit;
  function withdraw() public { require(credit[msg.sender] > 0);
    msg.sender.transfer(credit[msg.sender]); // HIT
    credit[msg.sender] = 0; } }`,
    safe: `pragma solidity 0.5.12;
contract R { mapping(address => uint) credit;
  function withdraw() public { uint amount = credit[msg.sender]; require(amount > 0); credit[msg.sender] = 0;
    if (!msg.sender.send(amount)) { credit[msg.sender] = amount; } } }`,
  },
  {
    rule: 'sol.payout.fixed-amount-anyone',
    vulnerable: `pragma solidity 0.5.12;
contract P { function gift() public { msg.sender.transfer(1 ether); // HIT
} function () external payable {} }`,
    safe: `pragma solidity 0.5.12;
contract P { mapping(address => bool) paid;
  function gift() public { require(!paid[msg.sender]); paid[msg.sender] = true; msg.sender.transfer(1 ether); }
  function () external payable {} }`,
  },
  {
    rule: 'sol.frontrun.recipient-race',
    vulnerable: `pragma solidity 0.5.12;
contract T { address payable winner;
  function play(bytes32 guess) public { if (keccak256(abi.encode(guess)) == keccak256(abi.encode("x"))) { winner = msg.sender; } }
  function reward() public payable { winner.transfer(msg.value); // HIT
  } }`,
    safe: `pragma solidity 0.5.12;
contract T { address payable winner; address owner;
  function choose(address payable w) public { require(msg.sender == owner); winner = w; }
  function reward() public payable { winner.transfer(msg.value); } }`,
  },
  {
    rule: 'sol.unchecked-call.ineffective-check',
    vulnerable: `pragma solidity 0.5.12;
contract U { function pay(address payable to) public { uint failures;
  if (!to.send(1 ether)) { // HIT
    failures += 1; } } }`,
    safe: `pragma solidity 0.5.12;
contract U { mapping(address => uint) owed;
  function pay(address payable to) public { if (!to.send(1 ether)) { owed[to] += 1 ether; } } }`,
  },
  {
    rule: 'sol.arithmetic.local-wrap',
    vulnerable: `pragma solidity 0.5.12;
contract A { uint8 public level;
  function down() public { uint8 v = level; uint8 w = 0; w = w - 10; // HIT
    level = w + v; } }`,
    safe: `pragma solidity 0.8.20;
contract A { uint8 public level;
  function down() public { uint8 w = 0; w = w - 10; level = w; } }`,
  },
  {
    rule: 'sol.dos.storage-array-reset',
    vulnerable: `pragma solidity 0.4.24;
contract G { address[] creditors;
  function lend() public { creditors.push(msg.sender); }
  function reset() public { creditors = new address[](0); // HIT
  } }`,
    safe: `pragma solidity 0.4.24;
contract G { address[] creditors; uint round;
  function lend() public { creditors.push(msg.sender); }
  function reset() public { round++; } }`,
  },
  {
    rule: 'sol.frontrun.erc20-approve',
    vulnerable: `pragma solidity 0.8.20;
contract T { mapping(address => mapping(address => uint)) allowed;
  function approve(address spender, uint value) public returns (bool) { allowed[msg.sender][spender] = value; // HIT
    return true; } }`,
    safe: `pragma solidity 0.8.20;
contract T { mapping(address => mapping(address => uint)) allowed;
  function approve(address spender, uint value) public returns (bool) { require(value == 0 || allowed[msg.sender][spender] == 0); allowed[msg.sender][spender] = value; return true; } }`,
  },
  {
    rule: 'sol.frontrun.revealed-solution',
    vulnerable: `pragma solidity 0.4.24;
contract Puzzle { bytes32 hash;
  function solve(string solution) public { require(hash == keccak256(solution)); // HIT
    msg.sender.transfer(1000 ether); } }`,
    safe: `pragma solidity 0.4.24;
contract Puzzle { bytes32 hash; mapping(address => bytes32) commits;
  function commit(bytes32 c) public { commits[msg.sender] = c; } }`,
  },
  {
    rule: 'sol.frontrun.mutable-payout',
    vulnerable: `pragma solidity 0.4.24;
contract Reward { address owner; uint reward;
  function setReward() public payable { require(msg.sender == owner); reward = msg.value; }
  function claim(uint answer) public { require(answer < 10); msg.sender.transfer(reward); // HIT
  } }`,
    safe: `pragma solidity 0.4.24;
contract Reward { address owner; uint constant reward = 1 ether;
  function claim(uint answer) public { require(answer < 10); msg.sender.transfer(reward); } }`,
  },
  {
    rule: 'sol.storage.uninitialized-pointer',
    vulnerable: `pragma solidity 0.4.24;
contract S { struct Game { address player; uint number; } address owner;
  function play(uint n) public { Game game; // HIT
    game.player = msg.sender; game.number = n; } }`,
    safe: `pragma solidity 0.4.24;
contract S { struct Game { address player; uint number; } Game[] games;
  function play(uint n) public { Game memory game; game.player = msg.sender; game.number = n; games.push(game); } }`,
  },
  {
    rule: 'sol.shadowing.state-variable',
    vulnerable: `pragma solidity 0.4.24;
contract Base { address owner; }
contract Child is Base { address owner; // HIT
}`,
    safe: `pragma solidity 0.4.24;
contract Base { address owner; }
contract Child is Base { address admin; }`,
  },
  {
    rule: 'sol.erc20.unchecked-transfer',
    vulnerable: `pragma solidity 0.8.20;
interface IERC20 { function transfer(address to, uint v) external returns (bool); }
contract Pay { IERC20 token; function pay(address to) external { token.transfer(to, 1); // HIT
} }`,
    safe: `pragma solidity 0.8.20;
interface IERC20 { function transfer(address to, uint v) external returns (bool); }
contract Pay { IERC20 token; function pay(address to) external { require(token.transfer(to, 1)); } }`,
  },
  {
    rule: 'sol.gas.storage-length-in-loop',
    vulnerable: `pragma solidity 0.8.20;
contract G { uint[] xs; uint total; function sum() external { for (uint i = 0; i < xs.length; i++) { // HIT
 total += xs[i]; } } }`,
    safe: `pragma solidity 0.8.20;
contract G { uint[] xs; uint total; function sum() external { uint n = xs.length; for (uint i = 0; i < n; i++) { total += xs[i]; } } }`,
  },
  {
    rule: 'sol.gas.could-be-constant',
    vulnerable: `pragma solidity 0.8.20;
contract G { uint fee = 100; // HIT
  function cost(uint n) external view returns (uint) { return n * fee; } }`,
    safe: `pragma solidity 0.8.20;
contract G { uint fee = 100; function cost(uint n) external view returns (uint) { return n * fee; } function setFee(uint f) external { fee = f; } }`,
  },
  {
    rule: 'sol.reentrancy.cross-function',
    vulnerable: `pragma solidity 0.4.24;
contract Bank { mapping(address => uint) balances;
  function transfer(address to, uint amount) public { if (balances[msg.sender] >= amount) { balances[to] += amount; balances[msg.sender] -= amount; } }
  function withdraw() public { uint amount = balances[msg.sender];
    require(msg.sender.call.value(amount)()); // HIT
    balances[msg.sender] = 0; } }`,
    safe: `pragma solidity 0.4.24;
contract Bank { mapping(address => uint) balances;
  function transfer(address to, uint amount) public { if (balances[msg.sender] >= amount) { balances[to] += amount; balances[msg.sender] -= amount; } }
  function withdraw() public { uint amount = balances[msg.sender]; balances[msg.sender] = 0;
    require(msg.sender.call.value(amount)()); } }`,
  },
  {
    rule: 'sol.access.unprotected-call-target',
    vulnerable: `pragma solidity 0.4.24;
contract P { address lib;
  function setLib(address l) public { // HIT
    lib = l; }
  function () public payable { require(lib.delegatecall(msg.data)); } }`,
    safe: `pragma solidity 0.4.24;
contract P { address lib; address owner;
  function setLib(address l) public { require(msg.sender == owner); lib = l; }
  function () public payable { require(lib.delegatecall(msg.data)); } }`,
  },
  // Modern (0.8) dress of the rules above.
  {
    rule: 'sol.access.unprotected-ether-withdrawal',
    vulnerable: `pragma solidity 0.8.20;
contract Box { function donate() external payable {}
  function withdraw() external { payable(msg.sender).transfer(address(this).balance); // HIT
} }`,
    safe: `pragma solidity 0.8.20;
contract Box { address owner; modifier onlyOwner() { require(msg.sender == owner); _; }
  function donate() external payable {}
  function withdraw() external onlyOwner { payable(msg.sender).transfer(address(this).balance); } }`,
  },
  {
    rule: 'sol.access.unprotected-privileged-write',
    vulnerable: `pragma solidity 0.8.20;
contract Impl { address public owner; modifier onlyOwner() { require(msg.sender == owner); _; }
  function initialize(address o) external { // HIT
    owner = o; }
  function sweep() external onlyOwner { payable(owner).transfer(address(this).balance); } }`,
    safe: `pragma solidity 0.8.20;
contract Impl { address public owner; bool private initialized;
  modifier initializer() { require(!initialized, "done"); initialized = true; _; }
  modifier onlyOwner() { require(msg.sender == owner); _; }
  function initialize(address o) external initializer { owner = o; }
  function sweep() external onlyOwner { payable(owner).transfer(address(this).balance); } }`,
  },
  {
    rule: 'sol.arithmetic.unchecked-overflow',
    vulnerable: `pragma solidity 0.8.20;
contract T { mapping(address => uint) public balanceOf;
  function transfer(address to, uint amount) external { unchecked {
    balanceOf[msg.sender] -= amount; // HIT
    balanceOf[to] += amount; } } }`,
    safe: `pragma solidity 0.8.20;
contract T { mapping(address => uint) public balanceOf;
  function transfer(address to, uint amount) external { uint b = balanceOf[msg.sender]; require(b >= amount);
    unchecked { balanceOf[msg.sender] = b - amount; balanceOf[to] += amount; }
    balanceOf[msg.sender] -= 0; balanceOf[to] += amount * 1; } }`,
  },
  {
    rule: 'sol.reentrancy.state-after-call',
    vulnerable: `pragma solidity 0.8.20;
contract L { mapping(address => uint) public balances; bool locked;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  function transfer(address to, uint v) external { balances[msg.sender] -= v; balances[to] += v; }
  function withdraw() external nonReentrant { uint v = balances[msg.sender];
    (bool ok, ) = msg.sender.call{value: v}(""); // HIT
    require(ok); balances[msg.sender] = 0; } }`,
    safe: `pragma solidity 0.8.20;
contract L { mapping(address => uint) public balances; bool locked;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  function transfer(address to, uint v) external nonReentrant { balances[msg.sender] -= v; balances[to] += v; }
  function withdraw() external nonReentrant { uint v = balances[msg.sender];
    (bool ok, ) = msg.sender.call{value: v}(""); require(ok); balances[msg.sender] = 0; } }`,
  },
  {
    rule: 'sol.reentrancy.state-after-call',
    vulnerable: `pragma solidity 0.8.20;
contract Pool { uint public totalShares; mapping(address => uint) shares; bool locked;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  function remove(uint n) external nonReentrant { uint out = n * address(this).balance / totalShares;
    (bool ok, ) = msg.sender.call{value: out}(""); // HIT
    require(ok); shares[msg.sender] -= n; totalShares -= n; }
  function price() external view returns (uint) { return address(this).balance * 1e18 / totalShares; } }`,
    safe: `pragma solidity 0.8.20;
contract Pool { uint public totalShares; mapping(address => uint) shares; bool locked;
  modifier nonReentrant() { require(!locked); locked = true; _; locked = false; }
  function remove(uint n) external nonReentrant { uint out = n * address(this).balance / totalShares;
    shares[msg.sender] -= n; totalShares -= n;
    (bool ok, ) = msg.sender.call{value: out}(""); require(ok); }
  function price() external view returns (uint) { return address(this).balance * 1e18 / totalShares; } }`,
  },
  {
    rule: 'sol.access.signature-replay',
    vulnerable: `pragma solidity 0.8.20;
contract V { address immutable signer; constructor(address s) { signer = s; }
  function redeem(address payable to, uint amount, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 h = keccak256(abi.encodePacked(to, amount));
    address who = ecrecover(h, v, r, s); // HIT
    require(who != address(0) && who == signer); to.transfer(amount); } }`,
    safe: `pragma solidity 0.8.20;
contract V { address immutable signer; mapping(uint => bool) used; constructor(address s) { signer = s; }
  function redeem(address payable to, uint amount, uint nonce, uint8 v, bytes32 r, bytes32 s) external {
    require(!used[nonce]); bytes32 h = keccak256(abi.encodePacked(to, amount, nonce, block.chainid, address(this)));
    address who = ecrecover(h, v, r, s); require(who != address(0) && who == signer);
    used[nonce] = true; to.transfer(amount); }
  function check(bytes32 h, uint8 v, bytes32 r, bytes32 s) external view returns (bool) { return ecrecover(h, v, r, s) == signer; } }`,
  },
  {
    rule: 'sol.access.ecrecover-zero-address',
    vulnerable: `pragma solidity 0.8.20;
contract P { mapping(address => uint) public nonces; mapping(address => mapping(address => uint)) public allowance;
  function permit(address owner, address spender, uint value, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 d = keccak256(abi.encode(owner, spender, value, nonces[owner]++));
    address rec = ecrecover(d, v, r, s);
    require(rec == owner, "sig"); // HIT
    allowance[owner][spender] = value; } }`,
    safe: `pragma solidity 0.8.20;
contract P { mapping(address => uint) public nonces; mapping(address => mapping(address => uint)) public allowance;
  function permit(address owner, address spender, uint value, uint8 v, bytes32 r, bytes32 s) external {
    bytes32 d = keccak256(abi.encode(owner, spender, value, nonces[owner]++));
    address rec = ecrecover(d, v, r, s);
    require(rec != address(0) && rec == owner, "sig");
    allowance[owner][spender] = value; } }`,
  },
  {
    rule: 'sol.access.unprotected-mint',
    vulnerable: `pragma solidity 0.8.20;
contract T { address owner; uint public totalSupply; mapping(address => uint) public balanceOf;
  function mint(address to, uint amount) external { // HIT
    totalSupply += amount; balanceOf[to] += amount; } }`,
    safe: `pragma solidity 0.8.20;
interface IERC20 { function transferFrom(address, address, uint) external returns (bool); }
contract T { address owner; IERC20 asset; uint public totalSupply; mapping(address => uint) public balanceOf;
  function mint(address to, uint amount) external { require(msg.sender == owner); totalSupply += amount; balanceOf[to] += amount; }
  function deposit(uint amount) external { require(asset.transferFrom(msg.sender, address(this), amount)); totalSupply += amount; balanceOf[msg.sender] += amount; } }`,
  },
  {
    rule: 'sol.dos.unbounded-loop',
    vulnerable: `pragma solidity 0.8.20;
contract D { address manager; address payable[] investors; mapping(address => uint) invested; uint total;
  function invest() external payable { if (invested[msg.sender] == 0) investors.push(payable(msg.sender)); invested[msg.sender] += msg.value; total += msg.value; }
  function distribute() external payable { require(msg.sender == manager);
    for (uint i = 0; i < investors.length; i++) { // HIT
      investors[i].transfer(msg.value * invested[investors[i]] / total); } } }`,
    safe: `pragma solidity 0.8.20;
contract D { address manager; address payable[] investors; mapping(address => uint) level; mapping(address => uint) invested; uint total;
  function invest() external payable { require(level[msg.sender] == 2); investors.push(payable(msg.sender)); invested[msg.sender] += msg.value; total += msg.value; }
  function distribute() external payable { require(msg.sender == manager);
    for (uint i = 0; i < investors.length; i++) { investors[i].transfer(msg.value * invested[investors[i]] / total); } } }`,
  },
  {
    rule: 'sol.dos.storage-array-reset',
    vulnerable: `pragma solidity 0.8.20;
contract G { address payable[] players;
  function enter() external payable { require(msg.value == 1 ether); players.push(payable(msg.sender)); }
  function draw() external { players[0].transfer(address(this).balance); delete players; // HIT
  } }`,
    safe: `pragma solidity 0.8.20;
contract G { address payable[] players;
  function enter() external payable { require(players.length < 50); players.push(payable(msg.sender)); }
  function draw() external { players[0].transfer(address(this).balance); delete players; } }`,
  },
];

function hitLine(source: string): number {
  const idx = source.split('\n').findIndex((l) => l.includes('// HIT'));
  if (idx < 0) throw new Error('no // HIT marker');
  return idx + 1;
}

describe('Solidity rules', () => {
  it('has a positive and a negative case for every rule', () => {
    const covered = new Set(CASES.map((c) => c.rule));
    expect(solidityRules.map((r) => r.meta.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  for (const c of CASES) {
    describe(c.rule, () => {
      it('reports the vulnerable contract at the marked line', async () => {
        const found = await findingsOf(c.rule, c.vulnerable);
        const line = hitLine(c.vulnerable);
        expect(found.map((f) => [f.location.startLine, f.location.endLine])).toContainEqual(
          expect.arrayContaining([expect.any(Number)]),
        );
        expect(found.some((f) => f.location.startLine <= line && line <= f.location.endLine)).toBe(true);
      });

      it('stays silent on the fixed contract', async () => {
        expect(await findingsOf(c.rule, c.safe)).toEqual([]);
      });
    });
  }

  it('every rule has metadata the reports need', () => {
    for (const r of solidityRules) {
      expect(r.meta.id).toMatch(/^sol\.[a-z0-9-]+\.[a-z0-9-]+$/);
      expect(r.meta.title.length).toBeGreaterThan(5);
      expect(r.meta.description.length).toBeGreaterThan(20);
      expect(r.meta.remediation.length).toBeGreaterThan(10);
      if (r.meta.severity !== 'gas_optimization') expect(r.meta.cwe ?? r.meta.swc).toBeDefined();
    }
  });

  it('each profile lists its rules once, under the scan type their metadata names', () => {
    const ids = solidityRules.map((r) => r.meta.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [type, rules] of Object.entries(profiles))
      expect(rules.filter((r) => r.meta.scanType !== type).map((r) => r.meta.id)).toEqual([]);
    expect([...profiles.lite, ...profiles.standard, ...profiles.audit]).toEqual(solidityRules);
  });

  it('runs the rules of a scan type and those below it, in catalogue order', () => {
    const ids = (type: 'lite' | 'standard' | 'audit'): string[] => rulesFor(type).map((r) => r.meta.id);
    expect(ids('lite')).toEqual(profiles.lite.map((r) => r.meta.id));
    expect(ids('standard')).toEqual([...profiles.lite, ...profiles.standard].map((r) => r.meta.id));
    expect(ids('audit')).toEqual(solidityRules.map((r) => r.meta.id));
  });
});
