import { describe, expect, it } from 'vitest';
import { descendants, field } from './ast.ts';
import { Cfg } from './cfg.ts';
import { SolFile } from './model.ts';
import { type AstNode, parseSolidity } from './parser.ts';
import { scanSolidityFile } from './scan-file.ts';

const LEGACY = `pragma solidity ^0.4.0;
contract Old {
  address owner;
  function Old() { owner = msg.sender; }
  function f(uint a) constant returns (bytes32) {
    var x = a + 1;
    if (x == 0) throw;
    return sha3(x);
  }
  function kill() { if (msg.sender == owner) suicide(owner); }
  function () payable {}
}`;

function textOf(src: string, n: AstNode): string {
  return src.slice(n.start, n.end);
}

describe('parseSolidity', () => {
  it('builds the same WASM tree, errors included, through the direct cursor binding and the library cursor', async () => {
    const broken = `${LEGACY}\ncontract Broken { function f( { uint x = ; } mapping(address => uint storage) m; }`;
    for (const src of [LEGACY, broken]) {
      const direct = await parseSolidity(src, { runtime: 'wasm' });
      const library = await parseSolidity(src, { runtime: 'wasm', direct: false });
      const plain = (n: AstNode): unknown => ({ ...n, parent: undefined, children: n.children.map(plain) });
      expect(plain(direct.root)).toEqual(plain(library.root));
      expect(direct.errors).toEqual(library.errors);
    }
    expect(
      (await parseSolidity(`${LEGACY}\ncontract Broken { function f( { uint x = ; } }`)).errors.length,
    ).toBeGreaterThan(0);
  });

  it('parses 0.4 legacy syntax (throw, suicide, sha3, var, constructor-named functions) without errors', async () => {
    const p = await parseSolidity(LEGACY);
    expect(p.errors).toEqual([]);
    const f = new SolFile('Old.sol', LEGACY, p.root, p.errors);
    const fns = f.contracts[0]!.functions;
    expect(fns.map((x) => [x.name, x.kind])).toEqual([
      ['Old', 'constructor'],
      ['f', 'function'],
      ['kill', 'function'],
      ['fallback', 'fallback'],
    ]);
    expect(fns[1]!.mutability).toBe('view');
    expect(fns[1]!.visibility).toBe('public');
    expect(f.pragma?.minVersion).toEqual([0, 4, 0]);
  });

  it('parses 0.8 syntax: call options, unchecked blocks, custom errors, try/catch', async () => {
    const src = `pragma solidity 0.8.24;
error Nope(uint x);
contract New {
  function f(address to) external payable {
    (bool ok, ) = to.call{value: msg.value}("");
    if (!ok) revert Nope(1);
    unchecked { uint y = 1; y++; }
    try New(to).g() returns (uint v) { v; } catch { }
  }
  function g() external pure returns (uint) { return 1; }
}`;
    const p = await parseSolidity(src);
    expect(p.errors).toEqual([]);
  });

  it('binds index access tighter than operators (repairing the grammar’s precedence)', async () => {
    const src =
      'contract A { function f() public { x = a + b[c] * d[e]; y = !m[k]; z = amount <= balances[msg.sender]; } }';
    const p = await parseSolidity(src);
    const rights = descendants(p.root, 'assignment_expression').map((a) => field(a, 'right')!);
    const [sum, not, cmp] = rights;
    expect(sum!.type).toBe('binary_expression');
    expect(sum!.op).toBe('+');
    expect(textOf(src, field(sum!, 'right')!)).toBe('b[c] * d[e]');
    expect(not!.type).toBe('unary_expression');
    expect(textOf(src, field(not!, 'argument')!)).toBe('m[k]');
    expect(cmp!.op).toBe('<=');
    expect(textOf(src, field(cmp!, 'right')!)).toBe('balances[msg.sender]');
    expect(field(cmp!, 'right')!.type).toBe('array_access');
  });

  it('reports a file that does not parse as a scan message and still runs the rules on the rest', async () => {
    const src = `pragma solidity 0.4.24;
contract Broken {
  function a() public { uint x = ; }
  function b(address to) public { to.send(1); }
}`;
    const r = await scanSolidityFile('Broken.sol', src, 'standard');
    expect(r.messages.some((m) => m.level === 'warning' && /syntax errors at line 3/.test(m.value))).toBe(
      true,
    );
    expect(
      r.vulnerabilities.some(
        (v) => v.ruleId === 'sol.unchecked-call.low-level' && v.location.startLine === 4,
      ),
    ).toBe(true);
  });
});

describe('Cfg', () => {
  async function cfgOf(body: string): Promise<{ cfg: Cfg; src: string }> {
    const src = `contract A { uint s; function f(uint p) public { ${body} } }`;
    const p = await parseSolidity(src);
    const fn = descendants(p.root, 'function_definition')[0]!;
    const locals = new Set([
      'p',
      ...descendants(fn, 'variable_declaration').map((d) => textOf(src, field(d, 'name')!)),
    ]);
    return {
      cfg: new Cfg(
        field(fn, 'body'),
        (n) => textOf(src, n),
        (n) => locals.has(n),
        ['p'],
      ),
      src,
    };
  }

  it('follows branches and loops: a write inside a loop body is reachable after a call later in the body', async () => {
    const { cfg, src } = await cfgOf('for (uint i = 0; i < p; i++) { s = i; msg.sender.call(""); }');
    const write = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('s = i'))!;
    const call = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('msg.sender.call'))!;
    expect(cfg.reachableFrom(call.id).has(write.id)).toBe(true);
    expect(write.loops).toHaveLength(1);
  });

  it('does not continue after throw/revert', async () => {
    const { cfg, src } = await cfgOf('if (p == 0) { revert(); } s = 1;');
    const rev = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('revert'))!;
    const write = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('s = 1'))!;
    expect(cfg.reachableFrom(rev.id).has(write.id)).toBe(false);
  });

  it('links definitions to their uses and propagates taint along def-use chains', async () => {
    const { cfg, src } = await cfgOf('uint a = p + 1; uint b = 2; a = b; uint c = a;');
    const useC = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('uint c'))!;
    const reaching = cfg.reachingDefs(useC.id, 'a');
    expect(reaching).toHaveLength(1);
    expect(textOf(src, reaching[0]!.rhs!)).toBe('b');
    const taint = cfg.taint((e) => descendants(e, 'identifier').some((i) => textOf(src, i) === 'p'));
    const first = cfg.nodes.find((n) => n.ast && textOf(src, n.ast).startsWith('uint a'))!;
    expect(taint.isTaintedExpr(field(first.ast!, 'value')!, first.id)).toBe(true);
    // `a` was redefined from the untainted `b` before `c` reads it.
    expect(taint.isTaintedExpr(field(useC.ast!, 'value')!, useC.id)).toBe(false);
  });
});
