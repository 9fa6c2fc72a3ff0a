/**
 * The `standard` profile: control- and data-flow checks on the per-function CFG with def-use
 * chains, in the order their findings are reported.
 */
import {
  arbitrarySend,
  delegatecallControlled,
  unprotectedMint,
  unprotectedOwnerWrite,
} from './access-control.ts';
import { localWrap, uncheckedOverflow } from './arithmetic.ts';
import { balanceNotDebited, invertedBalanceCheck, tautology } from './balance-logic.ts';
import { arrayReset, callInLoop, pushPaymentRevert, unboundedLoop } from './denial-of-service.ts';
import { approveRace, hashGuess, recipientRace, rewardTod } from './front-running.ts';
import { couldBeConstant, lengthInLoop } from './gas.ts';
import { fixedPayout } from './payouts.ts';
import { randomnessFlow } from './randomness.ts';
import { reentrancyGasLimited, stateAfterCall } from './reentrancy.ts';
import type { SolidityRule } from './rule.ts';
import { ecrecoverZero, signatureReplay } from './signatures.ts';
import { arrayLengthWrite, shadowing, uninitializedPointer } from './storage.ts';
import { timestampDependence } from './time.ts';
import { ineffectiveCheck, uncheckedErc20 } from './unchecked-calls.ts';

export const standardRules: SolidityRule[] = [
  stateAfterCall,
  unprotectedOwnerWrite,
  arbitrarySend,
  balanceNotDebited,
  invertedBalanceCheck,
  delegatecallControlled,
  tautology,
  arrayLengthWrite,
  uncheckedOverflow,
  randomnessFlow,
  timestampDependence,
  callInLoop,
  pushPaymentRevert,
  unboundedLoop,
  arrayReset,
  approveRace,
  hashGuess,
  rewardTod,
  uninitializedPointer,
  shadowing,
  uncheckedErc20,
  signatureReplay,
  ecrecoverZero,
  unprotectedMint,
  lengthInLoop,
  couldBeConstant,
  reentrancyGasLimited,
  fixedPayout,
  recipientRace,
  ineffectiveCheck,
  localWrap,
];
