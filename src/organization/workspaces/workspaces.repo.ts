import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';
import { workspaces } from '../../db/schema/index.ts';
import { ISO_MICROS_FORMAT } from '../../platform/pagination/list-params.ts';

export type WorkspaceRow = typeof workspaces.$inferSelect;

/** What the workspace listing shows, and the created_at key of its cursor. */
const workspaceListColumns = {
  id: workspaces.id,
  name: workspaces.name,
  prefix: workspaces.prefix,
  repository: workspaces.repository,
  active: workspaces.active,
  createdAt: workspaces.createdAt,
  createdAtKey: sql<string>`to_char(${workspaces.createdAt} at time zone 'UTC', ${ISO_MICROS_FORMAT})`,
};
export type WorkspaceListRow = {
  id: string;
  name: string;
  prefix: string;
  repository: string | null;
  active: boolean;
  createdAt: Date;
  createdAtKey: string;
};

/** SQL of workspaces. Every query is scoped by the organization (company). */
export function workspacesRepo(db: Db) {
  return {
    async findById(companyId: string, id: string): Promise<WorkspaceRow | undefined> {
      const [row] = await db
        .select()
        .from(workspaces)
        .where(and(eq(workspaces.companyId, companyId), eq(workspaces.id, id)));
      return row;
    },

    /**
     * One page of the organization's workspaces, newest first: reads `limit + 1` rows after the
     * keyset position `after` (created_at as microsecond text, id).
     */
    async listForCompany(
      companyId: string,
      options: { after?: { at: string; id: string }; limit: number },
    ): Promise<WorkspaceListRow[]> {
      return db
        .select(workspaceListColumns)
        .from(workspaces)
        .where(
          and(
            eq(workspaces.companyId, companyId),
            options.after
              ? sql`(${workspaces.createdAt}, ${workspaces.id}) < (${options.after.at}::timestamptz, ${options.after.id}::uuid)`
              : undefined,
          ),
        )
        .orderBy(desc(workspaces.createdAt), desc(workspaces.id))
        .limit(options.limit + 1);
    },

    /** The oldest active workspace of the organization with this name and prefix. */
    async findActiveByName(
      companyId: string,
      name: string,
      prefix: string,
    ): Promise<WorkspaceRow | undefined> {
      const [row] = await db
        .select()
        .from(workspaces)
        .where(
          and(
            eq(workspaces.companyId, companyId),
            eq(workspaces.name, name),
            eq(workspaces.prefix, prefix),
            eq(workspaces.active, true),
          ),
        )
        .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
        .limit(1);
      return row;
    },

    /** Active workspaces linked to a sourcehost repository, optionally only those with one prefix. */
    async listActiveLinked(companyId: string, repository: string, prefix?: string): Promise<WorkspaceRow[]> {
      return db
        .select()
        .from(workspaces)
        .where(
          and(
            eq(workspaces.companyId, companyId),
            eq(workspaces.repository, repository),
            eq(workspaces.active, true),
            prefix === undefined ? undefined : eq(workspaces.prefix, prefix),
          ),
        )
        .orderBy(asc(workspaces.createdAt), asc(workspaces.id));
    },

    async insert(values: { companyId: string; name: string; prefix: string; repository: string | null }) {
      const [row] = await db.insert(workspaces).values(values).returning();
      return row!;
    },

    /**
     * Serializes creation of one logical workspace (organization + key) until the transaction
     * ends: two concurrent "find or create" calls would otherwise both miss and both insert.
     * A transaction-scoped advisory lock needs no
     * unique index that would also forbid deliberate duplicates made by other paths.
     */
    async lockKey(companyId: string, key: string): Promise<void> {
      await db.execute(
        sql`select pg_advisory_xact_lock(hashtextextended(${`workspace:${companyId}:${key}`}, 0))`,
      );
    },
  };
}
