/** Identity of the engine in reports. */
export const ENGINE_NAME = 'vigil-engine';
export const ENGINE_VERSION = '0.1.0';
export const ENGINE_INFORMATION_URI = 'https://vigil.invalid/docs/engine-rules';

/** Where a rule is documented (the rule catalogue, anchored by id). */
export function ruleHelpUri(ruleId: string): string {
  return `${ENGINE_INFORMATION_URI}#${ruleId.replace(/[^a-z0-9-]+/gi, '-').toLowerCase()}`;
}
