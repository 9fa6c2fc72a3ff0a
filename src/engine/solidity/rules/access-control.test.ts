/**
 * Caller checks as the access-control rules see them: through modifiers that call internal
 * predicates, and on the variable a check actually reads (not a shadowing redeclaration).
 */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { ACCESS_CONTROL_EXAMPLES } from './access-control.examples.ts';
import * as rules from './access-control.ts';

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

describe('delegatecall helpers of a library', () => {
  const lib = (caller: string): string => `pragma solidity 0.8.20;
library Address {
  function functionDelegateCall(address target, bytes memory data) internal returns (bytes memory) {
    (bool ok, bytes memory result) = target.delegatecall(data);
    require(ok);
    return result;
  }
}
${caller}`;

  it('a helper no function of its file calls forwards what its users pass: not reported in the library', async () => {
    expect(await findingsOf('sol.delegatecall.controlled', lib(''))).toEqual([]);
    // Nor through an overload of the library that only passes its own parameter on.
    const overload = lib('').replace(
      'library Address {',
      `library Address {
  function functionDelegateCall(address target) internal returns (bytes memory) { return functionDelegateCall(target, ""); }`,
    );
    expect(await findingsOf('sol.delegatecall.controlled', overload)).toEqual([]);
  });

  it("a caller in the file that passes its own caller's target is reported", async () => {
    const found = await findingsOf(
      'sol.delegatecall.controlled',
      lib(`contract Router {
  function run(address target, bytes calldata data) external { Address.functionDelegateCall(target, data); }
}`),
    );
    expect(found.map((f) => f.function)).toEqual(['functionDelegateCall']);
  });

  it('a file-level `using for` binds the library too', async () => {
    const src = lib(`using Address for address;
contract Router {
  function run(address target, bytes memory data) external { target.functionDelegateCall(data); }
}`);
    expect((await findingsOf('sol.delegatecall.controlled', src)).map((f) => f.function)).toEqual([
      'functionDelegateCall',
    ]);
  });

  it('a caller that passes a stored implementation, through `using for`, is not', async () => {
    const src = lib(`contract Proxy {
  using Address for address;
  address immutable implementation;
  constructor(address impl) { implementation = impl; }
  function run(bytes calldata data) external { implementation.functionDelegateCall(data); }
}`);
    expect(await findingsOf('sol.delegatecall.controlled', src)).toEqual([]);
    const open = src.replace(
      'implementation.functionDelegateCall(data)',
      'msg.sender.functionDelegateCall(data)',
    );
    expect((await findingsOf('sol.delegatecall.controlled', open)).map((f) => f.function)).toEqual([
      'functionDelegateCall',
    ]);
  });
});

describe('tx.origin against the zero address', () => {
  const src = (condition: string): string => `pragma solidity 0.8.20;
contract Registry { address owner; error OnlySimulatedBackend();
  function checkUpkeep() external view returns (bool) {
    if (${condition}) revert OnlySimulatedBackend();
    return true;
  } }`;

  it('tells a simulation from a transaction: no authorization', async () => {
    expect(await findingsOf('sol.access.tx-origin', src('tx.origin != address(0)'))).toEqual([]);
    expect(
      await findingsOf(
        'sol.access.tx-origin',
        src('tx.origin != address(0) && tx.origin != address(0x1111111111111111111111111111111111111111)'),
      ),
    ).toEqual([]);
  });

  it('a stored account in its place, or beside it, is authorization', async () => {
    expect(await findingsOf('sol.access.tx-origin', src('tx.origin != owner'))).toHaveLength(1);
    expect(
      await findingsOf('sol.access.tx-origin', src('tx.origin != owner && tx.origin != address(0)')),
    ).toHaveLength(1);
  });
});

describe('a privileged write behind a test of the variable itself', () => {
  const src = (check: string): string => `pragma solidity 0.8.20;
contract Vault { address owner;
  function withdraw() external { require(msg.sender == owner); payable(owner).transfer(address(this).balance); }
  function setOwner(address newOwner) external { ${check} owner = newOwner; } }`;

  it('is guarded when the test is that it is unset', async () => {
    expect(
      await findingsOf('sol.access.unprotected-privileged-write', src('require(owner == address(0));')),
    ).toEqual([]);
    expect(
      await findingsOf('sol.access.unprotected-privileged-write', src('if (owner != address(0)) revert();')),
    ).toEqual([]);
  });

  it('is not when the test only names it', async () => {
    const found = await findingsOf(
      'sol.access.unprotected-privileged-write',
      src('require(newOwner != owner);'),
    );
    expect(found.map((f) => f.function)).toEqual(['setOwner']);
  });
});

describe('an ether withdrawal and the conditions around it', () => {
  const src = (body: string): string => `pragma solidity 0.8.20;
contract Pot { uint256 deadline;
  function sweep() external { ${body} } }`;

  it("checking the payment's own success gates nothing", async () => {
    const found = await findingsOf(
      'sol.access.unprotected-ether-withdrawal',
      src('(bool ok, ) = msg.sender.call{value: address(this).balance}(""); require(ok);'),
    );
    expect(found.map((f) => f.function)).toEqual(['sweep']);
  });

  it('a condition before the payment, or beside it, gates it', async () => {
    const before = src(
      'require(block.timestamp > deadline); payable(msg.sender).transfer(address(this).balance);',
    );
    expect(await findingsOf('sol.access.unprotected-ether-withdrawal', before)).toEqual([]);
    const beside = src(
      'require(block.timestamp > deadline && payable(msg.sender).send(address(this).balance));',
    );
    expect(await findingsOf('sol.access.unprotected-ether-withdrawal', beside)).toEqual([]);
  });
});

describe('a caller check in a helper handed a stored record', () => {
  const src = (record: string): string => `pragma solidity 0.8.20;
contract Registry { struct Upkeep { address admin; uint256 balance; }
  mapping(uint256 => Upkeep) s_upkeep; mapping(uint256 => address) s_proposedAdmin;
  function requireAdmin(Upkeep memory upkeep) internal view { if (msg.sender != upkeep.admin) revert(); }
  function transferUpkeepAdmin(uint256 id, address proposed, Upkeep memory given) external {
    requireAdmin(${record});
    s_proposedAdmin[id] = proposed;
  }
  function acceptUpkeepAdmin(uint256 id) external {
    require(s_proposedAdmin[id] == msg.sender);
    s_upkeep[id].admin = msg.sender;
  } }`;

  it('checks the caller against the record the function read', async () => {
    expect(await findingsOf('sol.access.unprotected-privileged-write', src('s_upkeep[id]'))).toEqual([]);
  });

  it('not against a record the caller passed', async () => {
    const found = await findingsOf('sol.access.unprotected-privileged-write', src('given'));
    expect(found.map((f) => f.function)).toEqual(['transferUpkeepAdmin']);
  });
});

describeRuleExamples(rules, ACCESS_CONTROL_EXAMPLES);
