/**
 * Generated Solidity sources that stress the analysis: each is valid Solidity whose size or shape
 * makes a pass that grows faster than the file take long. Used by the budget tests.
 */

/** `depth` nested `if` statements, each defining and reading locals. */
export function deeplyNested(depth: number): string {
  let body = '';
  for (let i = 0; i < depth; i++)
    body += `${'  '.repeat(i + 2)}uint v${i} = a + ${i};\n${'  '.repeat(i + 2)}if (v${i} > ${i}) {\n`;
  body += `${'  '.repeat(depth + 2)}balances[msg.sender] = a;\n`;
  for (let i = depth - 1; i >= 0; i--) body += `${'  '.repeat(i + 2)}}\n`;
  return `pragma solidity ^0.8.0;\ncontract Nested {\n  mapping(address => uint) balances;\n  function f(uint a) public {\n${body}  }\n}\n`;
}

/** One contract with `count` functions, each calling the next (a long internal call chain). */
export function manyFunctions(count: number): string {
  const fns: string[] = [];
  for (let i = 0; i < count; i++) {
    const next =
      i + 1 < count
        ? `    f${i + 1}(x + 1);\n`
        : '    (bool ok, ) = msg.sender.call{value: x}("");\n    require(ok);\n';
    fns.push(`  function f${i}(uint x) ${i === 0 ? 'public' : 'internal'} {\n    total += x;\n${next}  }\n`);
  }
  return `pragma solidity ^0.8.0;\ncontract Many {\n  uint total;\n${fns.join('')}}\n`;
}

/** About `lines` lines: many contracts of ordinary functions with state, loops and calls. */
export function hugeContract(lines: number): string {
  const out = ['pragma solidity ^0.8.0;'];
  let c = 0;
  while (out.length < lines) {
    out.push(`contract C${c} {`, '  mapping(address => uint) balances;', '  address owner;');
    for (let f = 0; f < 40 && out.length < lines; f++) {
      out.push(
        `  function w${f}(uint amount, address to) public {`,
        '    require(balances[msg.sender] >= amount);',
        '    uint fee = amount / 100;',
        '    for (uint i = 0; i < amount; i++) { fee += i; }',
        '    (bool ok, ) = to.call{value: amount - fee}("");',
        '    require(ok);',
        '    balances[msg.sender] -= amount;',
        '  }',
      );
    }
    out.push('}');
    c++;
  }
  return `${out.join('\n')}\n`;
}

/** A function whose body is one inline assembly block of `lines` instructions. */
export function longAssembly(lines: number): string {
  const ops: string[] = [];
  for (let i = 0; i < lines; i++)
    ops.push(`      let x${i} := add(mload(${i * 32}), ${i})\n      mstore(${i * 32}, x${i})`);
  return `pragma solidity ^0.8.0;\ncontract Asm {\n  function f() public view returns (uint r) {\n    assembly {\n${ops.join('\n')}\n      r := x0\n    }\n  }\n}\n`;
}

/** An `else if` chain of `branches` branches, each assigning many locals (the crowdsale shape). */
export function elseIfChain(branches: number, locals: number): string {
  const decls: string[] = [];
  for (let l = 0; l < locals; l++) decls.push(`    uint l${l} = msg.value + ${l};`);
  const chain: string[] = [];
  for (let b = 0; b < branches; b++) {
    const assigns: string[] = [];
    for (let l = 0; l < locals; l++) assigns.push(`      l${l} = l${(l + 1) % locals} * ${b + 2} + rate;`);
    chain.push(
      `${b === 0 ? '    if' : ' else if'} (now < start + ${b + 1} days) {\n${assigns.join('\n')}\n    }`,
    );
  }
  const sum = Array.from({ length: locals }, (_, l) => `l${l}`).join(' + ');
  return `pragma solidity ^0.4.24;\ncontract Crowdsale {\n  uint start;\n  uint rate;\n  mapping(address => uint) tokens;\n  function buy() public payable {\n${decls.join('\n')}\n${chain.join('')}\n    tokens[msg.sender] += ${sum};\n    msg.sender.transfer(${sum});\n  }\n}\n`;
}

/** A function with more than `defs` local definitions (several bit-set words of reaching definitions). */
export function manyLocalDefs(defs: number): string {
  const out: string[] = ['    uint acc = msg.value;'];
  for (let i = 0; i < defs; i++) {
    out.push(`    uint d${i} = acc + ${i};`, `    if (d${i} > ${i}) { acc = d${i}; } else { acc += 1; }`);
  }
  return `pragma solidity ^0.8.0;\ncontract Defs {\n  mapping(address => uint) balances;\n  function f() public payable {\n${out.join('\n')}\n    balances[msg.sender] = acc;\n    payable(msg.sender).transfer(acc);\n  }\n}\n`;
}

/**
 * A loop that passes `msg.value` through a chain of `length` locals, last to first: a value
 * reaches `a0` only after `length` trips around the loop.
 */
export function loopChain(length: number): string {
  const decls = Array.from({ length }, (_, i) => `    uint a${i};`).join('\n');
  const body = Array.from({ length }, (_, i) =>
    i + 1 < length ? `      a${i} = a${i + 1} + 1;` : `      a${i} = msg.value;`,
  ).join('\n');
  return `pragma solidity ^0.8.0;\ncontract Chain {\n  mapping(address => uint) paid;\n  function f(uint k) public payable {\n${decls}\n    for (uint j = 0; j < k; j++) {\n${body}\n    }\n    paid[msg.sender] = a0;\n  }\n}\n`;
}
