/** The `lite` profile: cheap, mostly syntactic checks, in the order their findings are reported. */
import { defaultVisibility, txOrigin, unprotectedSelfdestruct } from './access-control.ts';
import { strictBalanceEquality } from './balance-logic.ts';
import { deprecatedConstruct, floatingPragma, outdatedPragma } from './compiler.ts';
import { weakRandomness } from './randomness.ts';
import type { SolidityRule } from './rule.ts';
import { callNotInvoked, uncheckedCall } from './unchecked-calls.ts';

export const liteRules: SolidityRule[] = [
  txOrigin,
  unprotectedSelfdestruct,
  deprecatedConstruct,
  uncheckedCall,
  callNotInvoked,
  weakRandomness,
  strictBalanceEquality,
  floatingPragma,
  outdatedPragma,
  defaultVisibility,
];
