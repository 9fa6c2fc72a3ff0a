/**
 * The Solidity rule catalogue. Rules live in one file per category; the profiles (`lite.ts`,
 * `standard.ts`, `audit.ts`) list them in the order their findings are reported.
 */
import type { RuleMeta, ScanType } from '../../types.ts';
import { auditRules } from './audit.ts';
import { liteRules } from './lite.ts';
import type { SolidityRule } from './rule.ts';
import { standardRules } from './standard.ts';

/** Each profile's own rules; a rule's `meta.scanType` names the profile that lists it. */
export const profiles: Readonly<Record<ScanType, readonly SolidityRule[]>> = {
  lite: liteRules,
  standard: standardRules,
  audit: auditRules,
};

export const solidityRules: SolidityRule[] = [...liteRules, ...standardRules, ...auditRules];

// Each scan type runs its own rules and those of the types below it: lite ⊂ standard ⊂ audit.
const RUN: Record<ScanType, readonly SolidityRule[]> = {
  lite: liteRules,
  standard: [...liteRules, ...standardRules],
  audit: solidityRules,
};

/** Rules that run for a scan type: each type runs its own rules and those of the types below it. */
export function rulesFor(type: ScanType): readonly SolidityRule[] {
  return RUN[type];
}

export function solidityRuleMetas(): RuleMeta[] {
  return solidityRules.map((r) => r.meta);
}
