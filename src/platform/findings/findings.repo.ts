import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import { visibleFindingsCondition } from '../../access/access.repo.ts';
import type { FindingAccess, PingCandidate } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import {
  assetGroups,
  companyMembers,
  findingLabels,
  findingRelatedFiles,
  findings,
  labels,
  platformPermissions,
  repositories,
  repositoryMembers,
  users,
} from '../../db/schema/index.ts';
import type { Label } from '../labels/labels.schemas.ts';

/** Maps a label row to its API shape. */
export function toLabel(row: typeof labels.$inferSelect): Label {
  return {
    id: row.id,
    name: row.name,
    isSystem: row.isSystem,
    reviewerRead: row.reviewerRead,
    reviewerUse: row.reviewerUse,
    description: row.description,
    archivedAt: row.archivedAt?.toISOString() ?? null,
  };
}

/**
 * Allocates the next finding number of a repository. The `UPDATE … RETURNING` takes the
 * repository row lock until the transaction ends, so concurrent creators queue here and a rolled
 * back creation gives its number back: numbers have neither gaps nor duplicates.
 */
export async function allocateFindingNumber(db: Db, repositoryId: string): Promise<number> {
  const [row] = await db
    .update(repositories)
    .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
    .where(eq(repositories.id, repositoryId))
    .returning({ number: repositories.findingSeq });
  if (!row) throw new Error(`repository ${repositoryId} vanished while allocating a finding number`);
  return row.number;
}

export type FindingRow = typeof findings.$inferSelect;
export type LabelRow = typeof labels.$inferSelect;

/** A finding of a repository named by id or by its per-repository number. */
export type FindingRef = { id: string } | { number: number };

/** The columns a change of a finding may set (besides its last update time). */
export type FindingChange = Partial<
  Pick<
    typeof findings.$inferInsert,
    'status' | 'severity' | 'assignedTo' | 'duplicateOf' | 'duplicateGroupDescription'
  >
>;

/** SQL of the finding writes: filing, status, severity, assignee, labels, duplicates. */
export function findingsRepo(db: Db) {
  return {
    /** The finding of the repository the user may see, locked for the transaction when asked. */
    async findVisible(
      access: FindingAccess,
      repositoryId: string,
      ref: FindingRef,
      lock = false,
    ): Promise<FindingRow | null> {
      const byRef = 'id' in ref ? eq(findings.id, ref.id) : eq(findings.number, ref.number);
      const query = db
        .select()
        .from(findings)
        .where(and(eq(findings.repositoryId, repositoryId), byRef, visibleFindingsCondition(access)));
      const [row] = lock ? await query.for('update') : await query;
      return row ?? null;
    },

    /** The labels among `ids` usable on the repository: its own and its company's shared ones. */
    async usableLabels(repositoryId: string, companyId: string, ids: string[]): Promise<LabelRow[]> {
      if (ids.length === 0) return [];
      return db
        .select()
        .from(labels)
        .where(
          and(
            inArray(labels.id, ids),
            or(
              eq(labels.repositoryId, repositoryId),
              and(isNull(labels.repositoryId), eq(labels.companyId, companyId)),
            ),
          ),
        );
    },

    async labelsByIds(ids: string[]): Promise<LabelRow[]> {
      if (ids.length === 0) return [];
      return db.select().from(labels).where(inArray(labels.id, ids));
    },

    async assetGroupInRepository(assetGroupId: string, repositoryId: string): Promise<boolean> {
      const [group] = await db
        .select({ id: assetGroups.id })
        .from(assetGroups)
        .where(and(eq(assetGroups.id, assetGroupId), eq(assetGroups.repositoryId, repositoryId)));
      return group !== undefined;
    },

    /** The team the user is a repository member through, or null. */
    async memberTeam(repositoryId: string, userId: string): Promise<string | null> {
      const [row] = await db
        .select({ teamId: repositoryMembers.teamId })
        .from(repositoryMembers)
        .where(and(eq(repositoryMembers.repositoryId, repositoryId), eq(repositoryMembers.userId, userId)));
      return row?.teamId ?? null;
    },

    /** Inserts a finding with its related files and labels; returns its id. */
    async insert(
      values: typeof findings.$inferInsert,
      relatedFiles: Array<Omit<typeof findingRelatedFiles.$inferInsert, 'findingId'>>,
      labelIds: string[],
    ): Promise<string> {
      const [row] = await db.insert(findings).values(values).returning({ id: findings.id });
      const id = row!.id;
      if (relatedFiles.length > 0) {
        await db.insert(findingRelatedFiles).values(relatedFiles.map((file) => ({ ...file, findingId: id })));
      }
      if (labelIds.length > 0) {
        await db.insert(findingLabels).values(labelIds.map((labelId) => ({ findingId: id, labelId })));
      }
      return id;
    },

    /**
     * Writes one change of a finding — its new values (none for a change of its labels) and its
     * last update time — in one statement. Every change of a finding's state goes through here.
     */
    async writeChange(findingId: string, values: FindingChange = {}): Promise<void> {
      await db
        .update(findings)
        .set({ ...values, lastUpdatedAt: sql`now()` })
        .where(eq(findings.id, findingId));
    },

    /** Moves the duplicates of one finding to another root (and marks them updated). */
    async moveDuplicates(fromRootId: string, toRootId: string): Promise<void> {
      await db
        .update(findings)
        .set({ duplicateOf: toRootId, lastUpdatedAt: sql`now()` })
        .where(eq(findings.duplicateOf, fromRootId));
    },

    /**
     * The user of that username (case-insensitive), and whether they are an active member of the
     * repository or a user of its company; null when there is no such user.
     */
    async assignee(
      repositoryId: string,
      companyId: string,
      username: string,
    ): Promise<{ id: string; member: boolean } | null> {
      const [user] = await db
        .select({
          id: users.id,
          member: sql<boolean>`exists (select 1 from ${repositoryMembers} where ${repositoryMembers.userId} = ${users.id}
            and ${repositoryMembers.repositoryId} = ${repositoryId} and ${repositoryMembers.deletedAt} is null)
            or exists (select 1 from ${companyMembers} where ${companyMembers.userId} = ${users.id}
            and ${companyMembers.companyId} = ${companyId} and ${companyMembers.disabledAt} is null)`,
        })
        .from(users)
        .where(sql`lower(${users.username}) = lower(${username})`);
      return user ?? null;
    },

    /**
     * The people around a finding: active members of its repository and joined, enabled users of
     * its company (one username only when `username` is given), with what the access policy needs
     * to decide whether each sees the finding (`candidateSeesFinding`). Platform-wide readers who
     * are neither are not part of it: they are not assigned nor named in a repository's comments.
     */
    async audience(
      repository: { id: string; companyId: string; showAllFindings: boolean },
      finding: { createdBy: string | null },
      username?: string,
    ): Promise<Array<PingCandidate & { username: string; name: string }>> {
      const isCompanyUser = sql<boolean>`exists (select 1 from ${companyMembers}
        where ${companyMembers.userId} = ${users.id} and ${companyMembers.companyId} = ${repository.companyId}
          and ${companyMembers.joinedAt} is not null and ${companyMembers.disabledAt} is null)`;
      const rows = await db
        .select({
          userId: users.id,
          username: users.username,
          name: users.name,
          companyUser: isCompanyUser,
          repositoryRole: repositoryMembers.role,
          platformAdmin: sql<boolean>`exists (select 1 from ${platformPermissions} where ${platformPermissions.userId} = ${users.id} and ${platformPermissions.permission} = 'admin')`,
          readAll: sql<boolean>`exists (select 1 from ${platformPermissions} where ${platformPermissions.userId} = ${users.id} and ${platformPermissions.permission} in ('admin', 'read_all_companies'))`,
          active: sql<boolean>`(${users.disabledAt} is null and ${users.deletedAt} is null)`,
        })
        .from(users)
        .leftJoin(
          repositoryMembers,
          and(
            eq(repositoryMembers.userId, users.id),
            eq(repositoryMembers.repositoryId, repository.id),
            isNull(repositoryMembers.deletedAt),
          ),
        )
        .where(
          and(
            or(sql`${repositoryMembers.userId} is not null`, isCompanyUser),
            username === undefined ? undefined : sql`lower(${users.username}) = lower(${username})`,
          ),
        )
        .orderBy(sql`lower(${users.username})`);
      return rows.map((r) => ({
        ...r,
        showAllFindings: repository.showAllFindings,
        isFindingAuthor: finding.createdBy === r.userId,
      }));
    },

    /** Adds labels (present ones are skipped); the number added. */
    async addLabels(findingId: string, labelIds: string[]): Promise<number> {
      if (labelIds.length === 0) return 0;
      const inserted = await db
        .insert(findingLabels)
        .values(labelIds.map((labelId) => ({ findingId, labelId })))
        .onConflictDoNothing()
        .returning();
      return inserted.length;
    },

    /** Removes labels; the number removed. */
    async removeLabels(findingId: string, labelIds: string[]): Promise<number> {
      if (labelIds.length === 0) return 0;
      const deleted = await db
        .delete(findingLabels)
        .where(and(eq(findingLabels.findingId, findingId), inArray(findingLabels.labelId, labelIds)))
        .returning();
      return deleted.length;
    },
  };
}
