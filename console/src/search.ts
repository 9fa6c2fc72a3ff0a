/** Keys of the all-findings `s` search syntax (DESIGN §7), offered by the search box's completion. */
export const SEARCH_KEYS = [
  'status',
  'severity',
  'label',
  'created_by',
  'assigned_to',
  'repository',
  'path',
  'is',
] as const;

export const STATUSES = [
  'new',
  'in_review',
  'disputed',
  'rejected',
  'spam',
  'duplicate',
  'confirmed',
  'acknowledged',
  'fixed',
  'withdrawn',
] as const;
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'informational', 'gas_optimization'] as const;
export const ORDERS = [
  'number_desc',
  'number_asc',
  'status_asc',
  'status_desc',
  'severity_asc',
  'severity_desc',
  'reputation_asc',
  'reputation_desc',
  'username_asc',
  'username_desc',
  'created_at_asc',
  'created_at_desc',
  'last_updated_at_asc',
  'last_updated_at_desc',
  'reward_asc',
  'reward_desc',
  'last_comment_desc',
  'last_comment_asc',
] as const;
export const ROLES = ['client', 'reviewer', 'judge', 'triager', 'admin'] as const;
export const FILTER_FOR = ['client_recommended', 'with_duplicates', 'require_review'] as const;

/** Values offered after `key:`; dynamic lists (labels, users, repositories) come from the caller. */
export function completions(
  input: string,
  caret: number,
  dynamic: Partial<Record<string, string[]>>,
): {
  start: number;
  options: string[];
} {
  const before = input.slice(0, caret);
  const start = before.search(/\S*$/);
  const token = before.slice(start);
  const colon = token.indexOf(':');
  if (colon < 0) {
    const options = SEARCH_KEYS.map((k) => `${k}:`).filter((k) => k.startsWith(token.toLowerCase()));
    return { start, options: token.length === 0 ? options : options.filter((o) => o !== token) };
  }
  const key = token.slice(0, colon);
  const typed = token.slice(colon + 1);
  const lastComma = typed.lastIndexOf(',');
  const prefix = typed.slice(0, lastComma + 1);
  const partial = typed.slice(lastComma + 1).toLowerCase();
  const values: readonly string[] =
    key === 'status'
      ? STATUSES
      : key === 'severity'
        ? SEVERITIES
        : key === 'is'
          ? ['unread', 'duplicate']
          : (dynamic[key] ?? []);
  const options = values
    .filter((v) => v.toLowerCase().startsWith(partial) && v.toLowerCase() !== partial)
    .slice(0, 12)
    .map((v) => `${key}:${prefix}${/\s/.test(v) ? `"${v}"` : v}`);
  return { start, options };
}
