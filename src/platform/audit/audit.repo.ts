import { and, asc, desc, eq, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { auditLog, users } from '../../db/schema/index.ts';
import { isoMillis, keptStatements, plainRows } from '../../db/sql.ts';
import type { AuditAction } from '../../organization/audit/audit.repo.ts';
import { ISO_MICROS_FORMAT } from '../pagination/list-params.ts';

/** Filters of a company audit-log page; user lists are ids, already resolved. */
export interface AuditLogQuery {
  companyId: string;
  targetUserIds?: string[];
  performingUserIds?: string[];
  actions?: AuditAction[];
  since?: Date;
  order: 'asc' | 'desc';
  /** Keyset position: the created_at (microsecond text) and id of the last row returned. */
  after?: { createdAt: string; id: string };
  limit: number;
}

/** The target and the performer of an entry, each joined for its short user summary (`ShortUserSummary`). */
const targetUsers = alias(users, 'target_user');
const performingUsers = alias(users, 'performing_user');

const auditEntryColumns = {
  id: auditLog.id,
  createdAt: isoMillis<string>(auditLog.createdAt),
  createdAtKey: sql<string>`to_char(${auditLog.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
  sourcehostAccountName: auditLog.sourcehostAccountName,
  action: auditLog.action,
  details: auditLog.details,
  targetUserId: targetUsers.id,
  targetName: targetUsers.name,
  targetUsername: targetUsers.username,
  targetAvatar: targetUsers.avatar,
  targetDisabledAt: isoMillis(targetUsers.disabledAt),
  performerUserId: performingUsers.id,
  performerName: performingUsers.name,
  performerUsername: performingUsers.username,
  performerAvatar: performingUsers.avatar,
  performerDisabledAt: isoMillis(performingUsers.disabledAt),
};

/** A joined user's short summary, or null when the entry names none (or the user is gone). */
function userSummary(
  userId: string | null,
  name: string | null,
  username: string | null,
  avatar: string | null,
  disabledAt: string | null,
) {
  return userId === null || name === null || username === null
    ? null
    : { userId, name, username, avatar, disabledAt };
}

/** Which optional parts a page's statement has: each combination is built once. */
function variantOf(query: AuditLogQuery): string {
  return [
    query.order,
    query.targetUserIds ? 't' : '',
    query.performingUserIds ? 'p' : '',
    query.actions ? 'a' : '',
    query.since ? 's' : '',
    query.after ? 'c' : '',
  ].join('');
}

/**
 * A page's statement for the optional parts `query` has, with placeholders for every value (lists
 * as one array each), built once per database handle and variant and run by {@link plainRows}.
 */
function buildPage(db: Db, query: AuditLogQuery) {
  const conditions: SQL[] = [eq(auditLog.companyId, sql.placeholder('companyId'))];
  if (query.targetUserIds)
    conditions.push(sql`${auditLog.targetUserId} = any(${sql.placeholder('targets')}::uuid[])`);
  if (query.performingUserIds)
    conditions.push(sql`${auditLog.performedBy} = any(${sql.placeholder('performers')}::uuid[])`);
  if (query.actions) conditions.push(sql`${auditLog.action} = any(${sql.placeholder('actions')}::text[])`);
  if (query.since) conditions.push(sql`${auditLog.createdAt} >= ${sql.placeholder('since')}::timestamptz`);
  if (query.after) {
    // Row-value comparison on the index order (company_id, created_at, id): strictly after the cursor.
    conditions.push(
      sql`(${auditLog.createdAt}, ${auditLog.id}) ${sql.raw(query.order === 'desc' ? '<' : '>')} (${sql.placeholder('afterCreatedAt')}::timestamptz, ${sql.placeholder('afterId')}::uuid)`,
    );
  }
  const direction = query.order === 'desc' ? desc : asc;
  return db
    .select(auditEntryColumns)
    .from(auditLog)
    .leftJoin(targetUsers, eq(targetUsers.id, auditLog.targetUserId))
    .leftJoin(performingUsers, eq(performingUsers.id, auditLog.performedBy))
    .where(and(...conditions))
    .orderBy(direction(auditLog.createdAt), direction(auditLog.id))
    .limit(sql.placeholder('limit'));
}
const builtPages = keptStatements<ReturnType<typeof buildPage>>();

/** SQL of the company audit log. */
export function auditRepo(db: Db) {
  return {
    /**
     * One page of entries in (created_at, id) order, ascending or descending, with the short
     * summaries of their target and performing users (null when there is none or it is gone);
     * `createdAtKey` is the exact timestamp as text (microseconds), for the next cursor. Reads `limit + 1` rows
     * so that the caller knows whether more follow.
     */
    async listEntries(query: AuditLogQuery) {
      const page = builtPages(db, variantOf(query), () => buildPage(db, query));
      const rows = await plainRows(db, auditEntryColumns, page, {
        companyId: query.companyId,
        targets: query.targetUserIds,
        performers: query.performingUserIds,
        actions: query.actions,
        since: query.since?.toISOString(),
        afterCreatedAt: query.after?.createdAt,
        afterId: query.after?.id,
        limit: query.limit + 1,
      });
      return rows.map((r) => ({
        id: r.id,
        createdAt: r.createdAt,
        createdAtKey: r.createdAtKey,
        sourcehostAccountName: r.sourcehostAccountName,
        action: r.action,
        details: r.details,
        target: userSummary(
          r.targetUserId,
          r.targetName,
          r.targetUsername,
          r.targetAvatar,
          r.targetDisabledAt,
        ),
        performer: userSummary(
          r.performerUserId,
          r.performerName,
          r.performerUsername,
          r.performerAvatar,
          r.performerDisabledAt,
        ),
      }));
    },
  };
}
