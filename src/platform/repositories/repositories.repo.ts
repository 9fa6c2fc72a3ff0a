import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, isNotNull, isNull, notInArray, sql } from 'drizzle-orm';
import { readableRepositoriesCondition } from '../../access/access.repo.ts';
import type { FindingAccess } from '../../access/policy.ts';
import type { Db } from '../../db/client.ts';
import {
  assetGroups,
  assets,
  companies,
  findingCounts,
  findings,
  repositories,
  repositoryEvents,
  repositoryMembers,
  type repositoryRoles,
  safeHarbors,
  users,
} from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import type { JsonObject } from '../../json.ts';
import type { AssetGroup, AssetGroupInput, SafeHarbor, SafeHarborInput } from './repositories.schemas.ts';

export type RepositoryRow = typeof repositories.$inferSelect;
export type MemberRow = typeof repositoryMembers.$inferSelect;
export type RepositoryRole = (typeof repositoryRoles)[number];

/** Finding statuses that count as accepted for a reviewer's rank. */
export const ACCEPTED_STATUSES = ['confirmed', 'acknowledged', 'fixed'] as const;

/** Per-caller figures of a repository: rank among reviewers, rewards, and published findings. */
export interface RepositoryStats {
  totalFindings: number;
  reward: string;
  rank: number;
  rankTotal: number;
}

function invalidAssetGroups(message: string): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid body field 'assetGroups': ${message}.`,
    details: { field: 'assetGroups' },
  });
}

/** SQL of repositories, their asset groups, safe harbor, members and change log. */
export function repositoriesRepo(db: Db) {
  return {
    async findById(repositoryId: string): Promise<RepositoryRow | null> {
      const [row] = await db.select().from(repositories).where(eq(repositories.id, repositoryId));
      return row ?? null;
    },

    /** Locks the repository row: updates of one repository are serialized, so each event diffs the state before it. */
    async lockById(repositoryId: string): Promise<RepositoryRow | null> {
      const [row] = await db
        .select()
        .from(repositories)
        .where(eq(repositories.id, repositoryId))
        .for('update');
      return row ?? null;
    },

    /** The company's repositories that the user may see (`repository.read`), newest first. */
    async listCompanyRepositories(companyId: string, access: FindingAccess): Promise<RepositoryRow[]> {
      return db
        .select()
        .from(repositories)
        .where(and(eq(repositories.companyId, companyId), readableRepositoriesCondition(access)))
        .orderBy(desc(repositories.createdAt), desc(repositories.id));
    },

    /** Company rows by id. */
    async findCompanies(companyIds: string[]) {
      if (companyIds.length === 0) return new Map<string, typeof companies.$inferSelect>();
      const rows = await db
        .select()
        .from(companies)
        .where(inArray(companies.id, [...new Set(companyIds)]));
      return new Map(rows.map((r) => [r.id, r]));
    },

    /** The asset groups (with sub-groups and assets) and safe harbor of each repository. */
    async loadStructures(repositoryIds: string[]) {
      const groups = new Map<string, AssetGroup[]>();
      const harbors = new Map<string, SafeHarbor>();
      if (repositoryIds.length === 0) return { groups, harbors };
      const groupRows = await db
        .select()
        .from(assetGroups)
        .where(inArray(assetGroups.repositoryId, repositoryIds))
        .orderBy(asc(assetGroups.position), asc(assetGroups.id));
      const assetRows =
        groupRows.length === 0
          ? []
          : await db
              .select()
              .from(assets)
              .where(
                inArray(
                  assets.assetGroupId,
                  groupRows.map((g) => g.id),
                ),
              )
              .orderBy(asc(assets.name), asc(assets.id));
      const assetsByGroup = new Map<string, AssetGroup['assets']>();
      for (const a of assetRows) {
        const list = assetsByGroup.get(a.assetGroupId) ?? [];
        list.push({ id: a.id, name: a.name, description: a.description, reference: a.reference });
        assetsByGroup.set(a.assetGroupId, list);
      }
      const byId = new Map<string, AssetGroup>();
      for (const g of groupRows.filter((r) => r.parentId === null)) {
        const group: AssetGroup = {
          id: g.id,
          name: g.name,
          description: g.description,
          outOfScope: g.outOfScope,
          rewards: g.rewards,
          assets: assetsByGroup.get(g.id) ?? [],
          subGroups: [],
        };
        byId.set(g.id, group);
        const list = groups.get(g.repositoryId) ?? [];
        list.push(group);
        groups.set(g.repositoryId, list);
      }
      for (const s of groupRows.filter((r) => r.parentId !== null)) {
        byId.get(s.parentId!)?.subGroups.push({
          id: s.id,
          name: s.name,
          description: s.description,
          assets: assetsByGroup.get(s.id) ?? [],
        });
      }
      const harborRows = await db
        .select()
        .from(safeHarbors)
        .where(inArray(safeHarbors.repositoryId, repositoryIds));
      for (const h of harborRows) {
        harbors.set(h.repositoryId, {
          id: h.id,
          description: h.description,
          reward: h.reward,
          cap: h.cap,
          returnAddresses: h.returnAddresses,
          assets: h.assets,
        });
      }
      return { groups, harbors };
    },

    /**
     * Per-caller figures of each repository. `totalFindings` counts published findings. `reward`
     * sums the rewards of the caller's published findings. Reviewers (active `reviewer` members)
     * are ranked by accepted findings (published; confirmed, acknowledged or fixed), then by
     * reputation; equal scores share a rank (1, 1, 3 …). A caller who is not a reviewer has rank 0.
     */
    async loadStats(repositoryIds: string[], viewerId: string | null): Promise<Map<string, RepositoryStats>> {
      const stats = new Map<string, RepositoryStats>(
        repositoryIds.map((id) => [id, { totalFindings: 0, reward: '0', rank: 0, rankTotal: 0 }]),
      );
      if (repositoryIds.length === 0) return stats;
      // finding_counts keeps the published findings of each repository by status and severity
      // (maintained by triggers), so a list of repositories sums a few rows instead of counting findings.
      const totals = await db
        .select({
          repositoryId: findingCounts.repositoryId,
          count: sql<number>`sum(${findingCounts.n})::int`,
        })
        .from(findingCounts)
        .where(inArray(findingCounts.repositoryId, repositoryIds))
        .groupBy(findingCounts.repositoryId);
      for (const t of totals) {
        const entry = stats.get(t.repositoryId);
        if (entry) entry.totalFindings = t.count;
      }
      if (viewerId) {
        const rewards = await db
          .select({
            repositoryId: findings.repositoryId,
            reward: sql<string>`coalesce(sum(${findings.reward}), 0)::text`,
          })
          .from(findings)
          .where(
            and(
              inArray(findings.repositoryId, repositoryIds),
              eq(findings.published, true),
              eq(findings.createdBy, viewerId),
              isNotNull(findings.reward),
            ),
          )
          .groupBy(findings.repositoryId);
        for (const r of rewards) stats.get(r.repositoryId!)!.reward = r.reward;
      }
      const accepted = sql<number>`count(${findings.id})::int`;
      const reviewers = await db
        .select({
          repositoryId: repositoryMembers.repositoryId,
          userId: repositoryMembers.userId,
          reputation: users.reputation,
          accepted,
        })
        .from(repositoryMembers)
        .innerJoin(users, eq(users.id, repositoryMembers.userId))
        .leftJoin(
          findings,
          and(
            eq(findings.repositoryId, repositoryMembers.repositoryId),
            eq(findings.createdBy, repositoryMembers.userId),
            eq(findings.published, true),
            inArray(findings.status, [...ACCEPTED_STATUSES]),
          ),
        )
        .where(
          and(
            inArray(repositoryMembers.repositoryId, repositoryIds),
            eq(repositoryMembers.role, 'reviewer'),
            isNull(repositoryMembers.deletedAt),
          ),
        )
        .groupBy(repositoryMembers.repositoryId, repositoryMembers.userId, users.reputation);
      for (const id of repositoryIds) {
        const ranked = reviewers.filter((r) => r.repositoryId === id);
        const s = stats.get(id)!;
        s.rankTotal = ranked.length;
        const me = viewerId ? ranked.find((r) => r.userId === viewerId) : undefined;
        if (me) {
          s.rank =
            1 +
            ranked.filter(
              (r) => r.accepted > me.accepted || (r.accepted === me.accepted && r.reputation > me.reputation),
            ).length;
        }
      }
      return stats;
    },

    /** The viewer's active role in each repository. */
    async loadRoles(repositoryIds: string[], viewerId: string | null): Promise<Map<string, RepositoryRole>> {
      if (repositoryIds.length === 0 || !viewerId) return new Map();
      const rows = await db
        .select({ repositoryId: repositoryMembers.repositoryId, role: repositoryMembers.role })
        .from(repositoryMembers)
        .where(
          and(
            inArray(repositoryMembers.repositoryId, repositoryIds),
            eq(repositoryMembers.userId, viewerId),
            isNull(repositoryMembers.deletedAt),
          ),
        );
      return new Map(rows.map((r) => [r.repositoryId, r.role]));
    },

    async insert(values: typeof repositories.$inferInsert): Promise<RepositoryRow> {
      const [row] = await db.insert(repositories).values(values).returning();
      return row!;
    },

    async update(
      repositoryId: string,
      values: Partial<typeof repositories.$inferInsert>,
    ): Promise<RepositoryRow> {
      const [row] = await db
        .update(repositories)
        .set(values)
        .where(eq(repositories.id, repositoryId))
        .returning();
      return row!;
    },

    /**
     * Makes the repository's asset groups what `input` says. Groups, sub-groups and assets with an
     * id are kept (and changed, and may move); those without are created; the ones not named are
     * removed. Ids that are not this repository's → 400. Positions follow the input order.
     */
    async replaceAssetGroups(repositoryId: string, input: AssetGroupInput[]): Promise<void> {
      const existingGroups = await db
        .select({ id: assetGroups.id })
        .from(assetGroups)
        .where(eq(assetGroups.repositoryId, repositoryId));
      const groupIds = new Set(existingGroups.map((g) => g.id));
      const existingAssets =
        groupIds.size === 0
          ? []
          : await db
              .select({ id: assets.id })
              .from(assets)
              .where(inArray(assets.assetGroupId, [...groupIds]));
      const assetIds = new Set(existingAssets.map((a) => a.id));

      const seen = new Set<string>();
      const claim = (id: string | undefined, known: Set<string>, what: string): string => {
        if (id === undefined) return randomUUID();
        if (!known.has(id)) throw invalidAssetGroups(`${what} ${id} is not one of this repository's`);
        if (seen.has(id)) throw invalidAssetGroups(`${what} ${id} appears twice`);
        seen.add(id);
        return id;
      };

      type GroupWrite = typeof assetGroups.$inferInsert & { id: string; existing: boolean };
      type AssetWrite = typeof assets.$inferInsert & { id: string; existing: boolean };
      const groupWrites: GroupWrite[] = [];
      const assetWrites: AssetWrite[] = [];
      const addAssets = (groupId: string, list: AssetGroupInput['assets']) => {
        for (const a of list ?? []) {
          const existing = a.id !== undefined;
          const id = claim(a.id, assetIds, 'asset');
          assetWrites.push({
            id,
            existing,
            assetGroupId: groupId,
            name: a.name,
            description: a.description ?? '',
            reference: a.reference ?? '',
          });
        }
      };
      input.forEach((g, position) => {
        const existing = g.id !== undefined;
        const id = claim(g.id, groupIds, 'asset group');
        groupWrites.push({
          id,
          existing,
          repositoryId,
          parentId: null,
          name: g.name,
          description: g.description ?? '',
          outOfScope: g.outOfScope ?? false,
          rewards: g.rewards ?? [],
          position,
        });
        addAssets(id, g.assets);
        (g.subGroups ?? []).forEach((s, subPosition) => {
          const subExisting = s.id !== undefined;
          const subId = claim(s.id, groupIds, 'asset group');
          groupWrites.push({
            id: subId,
            existing: subExisting,
            repositoryId,
            parentId: id,
            name: s.name,
            description: s.description ?? '',
            outOfScope: false,
            rewards: [],
            position: subPosition,
          });
          addAssets(subId, s.assets);
        });
      });

      // Write kept and new rows before deleting the rest: an asset may move out of a removed group.
      for (const { existing, ...g } of groupWrites) {
        if (existing) await db.update(assetGroups).set(g).where(eq(assetGroups.id, g.id));
        else await db.insert(assetGroups).values(g);
      }
      for (const { existing, ...a } of assetWrites) {
        if (existing) await db.update(assets).set(a).where(eq(assets.id, a.id));
        else await db.insert(assets).values(a);
      }
      const keptAssets = assetWrites.map((a) => a.id);
      const keptGroups = groupWrites.map((g) => g.id);
      if (assetIds.size > 0) {
        await db
          .delete(assets)
          .where(
            and(
              inArray(assets.id, [...assetIds]),
              keptAssets.length > 0 ? notInArray(assets.id, keptAssets) : undefined,
            ),
          );
      }
      await db
        .delete(assetGroups)
        .where(
          and(
            eq(assetGroups.repositoryId, repositoryId),
            keptGroups.length > 0 ? notInArray(assetGroups.id, keptGroups) : undefined,
          ),
        );
    },

    /** Sets the safe harbor (keeping its id and the ids of listed addresses and assets), or removes it. */
    async replaceSafeHarbor(repositoryId: string, input: SafeHarborInput | null): Promise<void> {
      if (input === null) {
        await db.delete(safeHarbors).where(eq(safeHarbors.repositoryId, repositoryId));
        return;
      }
      const values = {
        description: input.description ?? '',
        reward: input.reward ?? '0',
        cap: input.cap ?? '0',
        returnAddresses: (input.returnAddresses ?? []).map((r) => ({
          id: r.id ?? randomUUID(),
          address: r.address,
        })),
        assets: (input.assets ?? []).map((a) => ({
          id: a.id ?? randomUUID(),
          name: a.name,
          description: a.description ?? '',
        })),
      };
      await db
        .insert(safeHarbors)
        .values({ repositoryId, ...values })
        .onConflictDoUpdate({ target: safeHarbors.repositoryId, set: values });
    },

    async insertEvent(event: {
      repositoryId: string;
      oldValue: JsonObject;
      newValue: JsonObject;
      updatedBy: string;
    }) {
      await db.insert(repositoryEvents).values(event);
    },

    /** The change log, newest first (ties by id, so the order is stable). */
    async listEvents(repositoryId: string) {
      return db
        .select()
        .from(repositoryEvents)
        .where(eq(repositoryEvents.repositoryId, repositoryId))
        .orderBy(desc(repositoryEvents.updatedAt), desc(repositoryEvents.id));
    },

    async findMember(repositoryId: string, userId: string): Promise<MemberRow | null> {
      const [row] = await db
        .select()
        .from(repositoryMembers)
        .where(and(eq(repositoryMembers.repositoryId, repositoryId), eq(repositoryMembers.userId, userId)));
      return row ?? null;
    },

    /** Adds or changes a membership; a removed member is restored. */
    async upsertMember(values: {
      repositoryId: string;
      userId: string;
      role: RepositoryRole;
      teamId: string | null;
      pingsLeft: number;
      joinedAt: Date;
    }): Promise<MemberRow> {
      const [row] = await db
        .insert(repositoryMembers)
        .values({ ...values, deletedAt: null })
        .onConflictDoUpdate({
          target: [repositoryMembers.repositoryId, repositoryMembers.userId],
          set: { role: values.role, teamId: values.teamId, pingsLeft: values.pingsLeft, deletedAt: null },
        })
        .returning();
      return row!;
    },

    async markMemberRemoved(repositoryId: string, userId: string, at: Date): Promise<MemberRow> {
      const [row] = await db
        .update(repositoryMembers)
        .set({ deletedAt: at })
        .where(and(eq(repositoryMembers.repositoryId, repositoryId), eq(repositoryMembers.userId, userId)))
        .returning();
      return row!;
    },

    /** Members with their users, active first then removed, by username. */
    async listMembers(repositoryId: string) {
      return db
        .select({ member: repositoryMembers, user: users })
        .from(repositoryMembers)
        .innerJoin(users, eq(users.id, repositoryMembers.userId))
        .where(eq(repositoryMembers.repositoryId, repositoryId))
        .orderBy(sql`${repositoryMembers.deletedAt} is not null`, asc(sql`lower(${users.username})`));
    },
  };
}
