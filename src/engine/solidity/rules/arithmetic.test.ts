/** Wrapping arithmetic on locals and narrow types: interval reasoning, severity and confidence. */
import { describe, expect, it } from 'vitest';
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { findingsOf } from '../../test-helpers.ts';
import { ARITHMETIC_EXAMPLES } from './arithmetic.examples.ts';
import * as rules from './arithmetic.ts';
import { typeRange } from './arithmetic.ts';

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

describe('a name in capitals', () => {
  const src = (declare: string, operand: string): string => `pragma solidity 0.6.12;
contract Vault { mapping(address => uint256) balance; ${declare}
  function deposit(uint256 AMOUNT) external { balance[msg.sender] += ${operand}; } }`;

  it('is no constant when it names a parameter', async () => {
    expect(await findingsOf('sol.arithmetic.unchecked-overflow', src('', 'AMOUNT'))).toHaveLength(1);
  });

  it('is one when it is declared constant, or out of sight', async () => {
    expect(
      await findingsOf('sol.arithmetic.unchecked-overflow', src('uint256 constant FEE = 1;', 'FEE')),
    ).toEqual([]);
    expect(await findingsOf('sol.arithmetic.unchecked-overflow', src('', 'FEE'))).toEqual([]);
  });
});

describeRuleExamples(rules, ARITHMETIC_EXAMPLES);
