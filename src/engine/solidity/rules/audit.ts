/** The `audit` profile: inter-procedural and cross-contract checks steered by the threat model. */
import { unprotectedCallTarget } from './access-control.ts';
import { crossFunctionReentrancy } from './reentrancy.ts';
import type { SolidityRule } from './rule.ts';

export const auditRules: SolidityRule[] = [crossFunctionReentrancy, unprotectedCallTarget];
