/** Roles that may file a finding (the server's `finding.create` rule decides; this only hides the form). */
const FILING_ROLES = new Set(['reviewer', 'judge', 'triager', 'admin']);

/** Whether a role may file findings on a repository. */
export function canFile(role: string | null | undefined): boolean {
  return role !== null && role !== undefined && FILING_ROLES.has(role);
}
