import { type SQL, sql } from 'drizzle-orm';
import { visibleLastCommentAt } from '../../access/access.repo.ts';
import type { FindingAccess } from '../../access/policy.ts';
import { findingSortKeys, findings } from '../../db/schema/index.ts';
import type { Binder } from '../../db/sql.ts';
import { badStringReason, isUuid } from '../../strings.ts';
import { type CursorCodec, invalidCursor, isEpochMicrosText, isInt4Text } from '../pagination/cursor.ts';
import type { FindingOrder } from './findings.schemas.ts';

/**
 * The orders of the all-findings listing: the sort key of each order and the keyset cursor that
 * continues after a row of it.
 */

export type KeyType = 'int' | 'bigint' | 'text' | 'numeric' | 'timestamptz';
export interface SortKey {
  expression: SQL;
  type: KeyType;
  nullable: boolean;
}

/**
 * The key an order sorts by. Status, severity, the reward, the author's reputation and name are the
 * expressions of the `findings_visible_company_*` indexes (`findingSortKeys`), never null, so a
 * company's page reads `limit` index entries from the cursor on instead of sorting the company.
 */
export function sortKeyOf(order: FindingOrder, access: FindingAccess, b: Binder): SortKey {
  const field = order.replace(/_(asc|desc)$/, '');
  const direction = order.endsWith('_desc') ? 'desc' : 'asc';
  switch (field) {
    case 'number':
      return { expression: sql`${findings.number}`, type: 'int', nullable: false };
    case 'status':
      return { expression: findingSortKeys.statusRank(findings.status), type: 'int', nullable: false };
    case 'severity':
      return { expression: findingSortKeys.severityRank(findings.severity), type: 'int', nullable: false };
    case 'reputation':
      return {
        expression: findingSortKeys.authorReputation(findings.authorReputation, direction),
        type: 'bigint',
        nullable: false,
      };
    case 'username':
      return {
        expression: findingSortKeys.authorName(findings.authorName, direction),
        type: 'text',
        nullable: false,
      };
    case 'created_at':
      return { expression: sql`${findings.createdAt}`, type: 'timestamptz', nullable: false };
    case 'last_updated_at':
      return { expression: sql`${findings.lastUpdatedAt}`, type: 'timestamptz', nullable: false };
    case 'reward':
      return {
        expression: findingSortKeys.reward(findings.reward, direction),
        type: 'numeric',
        nullable: false,
      };
    default:
      // The user's own lastCommentAt: only comments they may read move a finding (access policy).
      return { expression: visibleLastCommentAt(access, b), type: 'timestamptz', nullable: true };
  }
}

/**
 * The sort key as text for the cursor. Timestamps travel as integer microseconds since the epoch,
 * because a JavaScript Date would drop the microseconds and make the next page repeat rows.
 */
export function cursorText(key: SortKey): SQL<string | null> {
  if (key.type === 'timestamptz')
    return sql<string | null>`(extract(epoch from ${key.expression}) * 1000000)::bigint::text`;
  return sql<string | null>`(${key.expression})::text`;
}

/** Whether a cursor key fits its column type and range (checked before it reaches SQL). */
const KEY_CHECK: Record<KeyType, (text: string) => boolean> = {
  int: isInt4Text,
  // A reputation, or the sentinel of an author-less finding: one past the range of an integer.
  bigint: (text) => /^-?[0-9]{1,10}$/.test(text) && Math.abs(Number(text)) <= 2 ** 31 + 1,
  // An amount, or the sentinel of a finding without a reward.
  numeric: (text) =>
    /^-?[0-9]{1,40}(\.[0-9]{1,40})?$/.test(text) || text === 'Infinity' || text === '-Infinity',
  timestamptz: isEpochMicrosText,
  text: (text) => text.length <= 1000 && badStringReason(text) === null,
};

function cursorValue(key: SortKey, text: string, b: Binder): SQL {
  switch (key.type) {
    case 'int':
      return b.bind(Number(text), 'int');
    case 'bigint':
      return b.bind(text, 'bigint');
    case 'numeric':
      return b.bind(text, 'numeric');
    case 'timestamptz':
      return sql`('epoch'::timestamptz + ${b.bind(text, 'bigint')} * interval '1 microsecond')`;
    default:
      return b.bind(text, 'text');
  }
}

/** Decodes `next` into the keyset condition of this ordering (null: from the start). */
export function cursorCondition(
  key: SortKey,
  direction: 'asc' | 'desc',
  next: string,
  filterHash: string,
  cursors: CursorCodec,
  b: Binder,
): SQL | null {
  const keys = cursors.decode(next, filterHash);
  if (keys.length === 0) return null;
  const [keyText, id] = keys;
  if (keys.length !== 2 || typeof id !== 'string' || !isUuid(id)) throw invalidCursor();
  if (keyText === null) {
    if (!key.nullable) throw invalidCursor();
    return afterCursor(key, direction, null, id, b);
  }
  if (typeof keyText !== 'string' || !KEY_CHECK[key.type](keyText)) throw invalidCursor();
  return afterCursor(key, direction, keyText, id, b);
}

/**
 * Rows after the cursor in `ORDER BY key <dir> NULLS LAST, id <dir>`. Nulls sort last in both
 * directions, so after a non-null key come the remaining non-null keys and then every null key;
 * after a null key come only null keys with a later id.
 */
function afterCursor(
  key: SortKey,
  direction: 'asc' | 'desc',
  keyText: string | null,
  id: string,
  b: Binder,
): SQL {
  const cmp = direction === 'asc' ? sql`>` : sql`<`;
  if (b.choose(keyText === null))
    return sql`(${key.expression} is null and ${findings.id} ${cmp} ${b.bind(id, 'uuid')})`;
  const row = sql`(${key.expression}, ${findings.id}) ${cmp} (${cursorValue(key, keyText as string, b)}, ${b.bind(id, 'uuid')})`;
  return key.nullable ? sql`(${row} or ${key.expression} is null)` : row;
}
