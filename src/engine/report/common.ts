/** Identity of the engine in reports. */
export const ENGINE_NAME = 'vigil-engine';
export const ENGINE_VERSION = '0.1.0';
/** Where a Vigil server documents the rules when no other address is given. */
export const DEFAULT_RULES_URL = 'http://localhost:3000/docs/rules';

/** Where a rule is documented: its page under the server's `/docs/rules`. */
export function ruleHelpUri(ruleId: string, rulesUrl: string = DEFAULT_RULES_URL): string {
  return `${rulesUrl.replace(/\/+$/, '')}/${encodeURIComponent(ruleId)}`;
}

/** Severity names as the reports and the scanner API spell them (GitLab SAST). */
export const REPORT_SEVERITY = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  informational: 'Info',
  gas_optimization: 'Info',
} as const;
