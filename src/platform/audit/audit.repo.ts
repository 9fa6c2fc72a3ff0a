import { and, asc, type Column, desc, eq, gte, inArray, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.ts';
import { auditLog, users } from '../../db/schema/index.ts';
import { isoMillis } from '../../db/sql.ts';
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
      const conditions: SQL[] = [eq(auditLog.companyId, query.companyId)];
      if (query.targetUserIds) conditions.push(inArrayOrFalse(auditLog.targetUserId, query.targetUserIds));
      if (query.performingUserIds)
        conditions.push(inArrayOrFalse(auditLog.performedBy, query.performingUserIds));
      if (query.actions) conditions.push(inArrayOrFalse(auditLog.action, query.actions));
      if (query.since) conditions.push(gte(auditLog.createdAt, query.since));
      if (query.after) {
        // Row-value comparison on the index order (company_id, created_at, id): strictly after the cursor.
        const after = sql`(${auditLog.createdAt}, ${auditLog.id}) ${sql.raw(query.order === 'desc' ? '<' : '>')} (${query.after.createdAt}::timestamptz, ${query.after.id}::uuid)`;
        conditions.push(after);
      }
      const direction = query.order === 'desc' ? desc : asc;
      return db
        .select({
          id: auditLog.id,
          createdAt: isoMillis<string>(auditLog.createdAt),
          createdAtKey: sql<string>`to_char(${auditLog.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
          sourcehostAccountName: auditLog.sourcehostAccountName,
          action: auditLog.action,
          details: auditLog.details,
          target: {
            userId: targetUsers.id,
            name: targetUsers.name,
            username: targetUsers.username,
            avatar: targetUsers.avatar,
            disabledAt: isoMillis(targetUsers.disabledAt),
          },
          performer: {
            userId: performingUsers.id,
            name: performingUsers.name,
            username: performingUsers.username,
            avatar: performingUsers.avatar,
            disabledAt: isoMillis(performingUsers.disabledAt),
          },
        })
        .from(auditLog)
        .leftJoin(targetUsers, eq(targetUsers.id, auditLog.targetUserId))
        .leftJoin(performingUsers, eq(performingUsers.id, auditLog.performedBy))
        .where(and(...conditions))
        .orderBy(direction(auditLog.createdAt), direction(auditLog.id))
        .limit(query.limit + 1);
    },
  };
}

/** The target and the performer of an entry, each joined for its short user summary (`ShortUserSummary`). */
const targetUsers = alias(users, 'target_user');
const performingUsers = alias(users, 'performing_user');
function inArrayOrFalse<T extends string>(column: Column, values: readonly T[]): SQL {
  return values.length === 0 ? sql`false` : inArray(column, [...values]);
}
