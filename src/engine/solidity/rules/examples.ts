/**
 * The examples of every Solidity rule, by rule id: the union of the `<category>.examples.ts`
 * files kept beside the rule files (docs/engine-rules.md renders them).
 */
import type { RuleExamples } from '../../types.ts';
import { ACCESS_CONTROL_EXAMPLES } from './access-control.examples.ts';
import { ARITHMETIC_EXAMPLES } from './arithmetic.examples.ts';
import { BALANCE_LOGIC_EXAMPLES } from './balance-logic.examples.ts';
import { COMPILER_EXAMPLES } from './compiler.examples.ts';
import { DENIAL_OF_SERVICE_EXAMPLES } from './denial-of-service.examples.ts';
import { FRONT_RUNNING_EXAMPLES } from './front-running.examples.ts';
import { GAS_EXAMPLES } from './gas.examples.ts';
import { PAYOUTS_EXAMPLES } from './payouts.examples.ts';
import { RANDOMNESS_EXAMPLES } from './randomness.examples.ts';
import { REENTRANCY_EXAMPLES } from './reentrancy.examples.ts';
import { SIGNATURES_EXAMPLES } from './signatures.examples.ts';
import { STORAGE_EXAMPLES } from './storage.examples.ts';
import { TIME_EXAMPLES } from './time.examples.ts';
import { UNCHECKED_CALLS_EXAMPLES } from './unchecked-calls.examples.ts';

export const SOLIDITY_RULE_EXAMPLES: RuleExamples = {
  ...ACCESS_CONTROL_EXAMPLES,
  ...ARITHMETIC_EXAMPLES,
  ...BALANCE_LOGIC_EXAMPLES,
  ...COMPILER_EXAMPLES,
  ...DENIAL_OF_SERVICE_EXAMPLES,
  ...FRONT_RUNNING_EXAMPLES,
  ...GAS_EXAMPLES,
  ...PAYOUTS_EXAMPLES,
  ...RANDOMNESS_EXAMPLES,
  ...REENTRANCY_EXAMPLES,
  ...SIGNATURES_EXAMPLES,
  ...STORAGE_EXAMPLES,
  ...TIME_EXAMPLES,
  ...UNCHECKED_CALLS_EXAMPLES,
};
