import { requireCompany } from '../../access/access.service.ts';
import { requireCompanyOverseer } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import { type AuditAction, auditActions } from '../../organization/audit/audit.repo.ts';
import { isUuid } from '../../strings.ts';
import { type CursorCodec, hashFilters, timeAndIdAfter } from '../pagination/cursor.ts';
import { invalidParam, splitListParam } from '../pagination/list-params.ts';
import { usersRepo } from '../users/users.repo.ts';
import { auditRepo } from './audit.repo.ts';
import type { AuditLogEntry, AuditLogQuery } from './audit.schemas.ts';

/** The audit log's page size when `limit` is not given. */
const DEFAULT_LIMIT = 5;

const USER_REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,38}$/;

/** The user references of a parameter, checked, lower-cased and sorted (for the filter hash). */
function parseUserRefs(name: string, values: string[] | undefined): string[] | undefined {
  const refs = splitListParam(name, values);
  if (!refs) return undefined;
  const bad = refs.find((r) => !isUuid(r) && !USER_REF_PATTERN.test(r));
  if (bad !== undefined) throw invalidParam(name, `"${bad}" is neither a user id nor a username`);
  return refs.map((r) => r.toLowerCase()).sort();
}

function parseActions(values: string[] | undefined): AuditAction[] | undefined {
  const actions = splitListParam('actions', values);
  if (!actions) return undefined;
  const bad = actions.find((a) => !(auditActions as readonly string[]).includes(a));
  if (bad !== undefined)
    throw invalidParam('actions', `unknown action "${bad}" (allowed: ${auditActions.join(', ')})`);
  return (actions as AuditAction[]).sort();
}

/** One page of a company's audit log. */
export interface AuditLogPage {
  items: AuditLogEntry[];
  nextValue: string | null;
}

/** The company audit log: company managers and `read_all_companies` admins. */
export function createAuditService(deps: { database: Database; cursors: CursorCodec }) {
  const { database } = deps;

  return {
    /**
     * One page of the audit log, newest first unless `order_by=created_at_asc`; ties of
     * `createdAt` are broken by id in the same direction, so a keyset cursor never skips or
     * repeats entries, even while new ones are written between pages.
     */
    async listAuditLog(actor: Actor, companyId: string, query: AuditLogQuery): Promise<AuditLogPage> {
      requireCompanyOverseer(actor, companyId);
      return readPage(companyId, query);
    },
  };

  async function readPage(companyId: string, query: AuditLogQuery): Promise<AuditLogPage> {
    const targetRefs = parseUserRefs('target_users', query.target_users);
    const performingRefs = parseUserRefs('performing_users', query.performing_users);
    const actions = parseActions(query.actions);
    // The schema has checked the date-time format.
    const since = query.since ? new Date(query.since) : undefined;
    const order = query.order_by === 'created_at_asc' ? 'asc' : 'desc';
    const filterHash = hashFilters({
      companyId,
      targetRefs,
      performingRefs,
      actions,
      since: since?.toISOString(),
      order,
    });
    const position = timeAndIdAfter(deps.cursors, query.next, filterHash);
    const after = position && { createdAt: position.at, id: position.id };

    const users = usersRepo(database.db);
    const rows = await auditRepo(database.db).listEntries({
      companyId,
      targetUserIds: targetRefs && (await users.resolveUserRefs(targetRefs)),
      performingUserIds: performingRefs && (await users.resolveUserRefs(performingRefs)),
      actions,
      since,
      order,
      after,
      limit: query.limit ?? DEFAULT_LIMIT,
    });
    const page = deps.cursors.pageOf(rows, {
      limit: query.limit ?? DEFAULT_LIMIT,
      filterHash,
      given: query.next,
      keyOf: (r) => [r.createdAtKey, r.id],
    });
    // Entries exist only while their company does (the foreign key cascades): only an empty
    // first page needs the company looked up, for its 404.
    if (rows.length === 0) await requireCompany(database.db, companyId);
    return {
      items: page.items.map((entry) => ({
        type: 'company_audit_log' as const,
        id: entry.id,
        target: entry.target,
        createdBy: entry.performer,
        createdAt: entry.createdAt,
        sourcehost_account_name: entry.sourcehostAccountName,
        action: entry.action,
        details: entry.details,
      })),
      nextValue: page.nextValue,
    };
  }
}

export type AuditService = ReturnType<typeof createAuditService>;
