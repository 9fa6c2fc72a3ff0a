/** Every rule the engine can report: Solidity rules and secret detectors. */
import { SECRET_RULES } from './secrets/secrets.ts';
import { solidityRuleMetas } from './solidity/rules/index.ts';
import type { RuleMeta, ScanType } from './types.ts';

const ORDER: Record<ScanType, number> = { lite: 0, standard: 1, audit: 2 };

/** Rule metadata (id, title, description, remediation, severity, confidence, SWC, CWE, DASP category). */
export function allRuleMetas(type?: ScanType): RuleMeta[] {
  const all = [...solidityRuleMetas(), ...Object.values(SECRET_RULES)];
  return type ? all.filter((m) => ORDER[m.scanType] <= ORDER[type]) : all;
}
