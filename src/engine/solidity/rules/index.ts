/** The Solidity rule catalogue, by scan type. */
import type { RuleMeta, ScanType } from '../../types.ts';
import { auditRules } from './audit.ts';
import { liteRules } from './lite.ts';
import { payoutRules } from './payouts.ts';
import type { SolidityRule } from './rule.ts';
import { standardRules } from './standard.ts';

const ORDER: Record<ScanType, number> = { lite: 0, standard: 1, audit: 2 };

export const solidityRules: SolidityRule[] = [...liteRules, ...standardRules, ...payoutRules, ...auditRules];

/** Rules that run for a scan type: each type runs its own rules and those of the types below it. */
export function rulesFor(type: ScanType): SolidityRule[] {
  return solidityRules.filter((r) => ORDER[r.meta.scanType] <= ORDER[type]);
}

export function solidityRuleMetas(): RuleMeta[] {
  return solidityRules.map((r) => r.meta);
}
