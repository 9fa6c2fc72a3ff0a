import { loadFindingAccess, requireCompany } from '../../access/access.service.ts';
import { can, type FindingAccess, requireCompanyManager, requireUser } from '../../access/policy.ts';
import type { Actor, UserActor } from '../../auth/actor.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import type { JsonObject } from '../../json.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { toCompanySummary } from '../companies/companies.service.ts';
import { usersRepo } from '../users/users.repo.ts';
import { toShortUserSummary } from '../users/users.views.ts';
import {
  type MemberRow,
  type RepositoryRole,
  type RepositoryRow,
  repositoriesRepo,
} from './repositories.repo.ts';
import type {
  CreateRepositoryRequest,
  PutMemberRequest,
  Repository,
  RepositoryEvent,
  RepositoryMember,
  UpdateRepositoryRequest,
} from './repositories.schemas.ts';

/** What the caller is to one repository. */
interface RepositoryAccess {
  user: UserActor;
  access: FindingAccess;
  repository: RepositoryRow;
  /** The caller's own repository role (not derived from company membership). */
  role: RepositoryRole | null;
}

const DEFAULT_PINGS = 3;

function repositoryNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Repository not found.' });
}

function iso(date: Date | null): string | null {
  return date?.toISOString() ?? null;
}

/** The fields of a repository that its change log tracks, in API naming. */
async function editableState(db: Db, row: RepositoryRow) {
  const { groups, harbors } = await repositoriesRepo(db).loadStructures([row.id]);
  return {
    name: row.name,
    url: row.url,
    currencyCode: row.currencyCode,
    kycRequired: row.kycRequired,
    timeframe: { start: iso(row.timeframeStart), end: iso(row.timeframeEnd) },
    totalRewardPot: row.totalRewardPot,
    submissionFee: row.submissionFee,
    instructions: row.instructions,
    requiredCtfAddress: row.requiredCtfAddress,
    allowedSeverities: row.allowedSeverities,
    isPublic: row.isPublic,
    showAllFindings: row.showAllFindings,
    assetGroups: groups.get(row.id) ?? [],
    safeHarbor: harbors.get(row.id) ?? null,
  };
}

/** Old and new values of the fields that differ; empty objects when nothing changed. */
function diffState<T extends JsonObject>(before: T, after: T) {
  const oldValue: JsonObject = {};
  const newValue: JsonObject = {};
  for (const [key, value] of Object.entries(after)) {
    const previous = before[key] ?? null;
    if (JSON.stringify(previous) !== JSON.stringify(value)) {
      oldValue[key] = previous;
      newValue[key] = value;
    }
  }
  return { oldValue, newValue };
}

/** The timeframe after a change; 400 when it would end before it starts. */
function mergeTimeframe(
  row: Pick<RepositoryRow, 'timeframeStart' | 'timeframeEnd'> | null,
  input: CreateRepositoryRequest['timeframe'],
) {
  const start =
    input?.start !== undefined
      ? input.start === null
        ? null
        : new Date(input.start)
      : (row?.timeframeStart ?? null);
  const end =
    input?.end !== undefined
      ? input.end === null
        ? null
        : new Date(input.end)
      : (row?.timeframeEnd ?? null);
  if (start && end && start.getTime() >= end.getTime()) {
    throw new AppError('VALIDATION_FAILED', {
      message: "Invalid body field 'timeframe': start must be before end.",
      details: { field: 'timeframe' },
    });
  }
  return { timeframeStart: start, timeframeEnd: end };
}

/** The row columns an input sets (the scalar fields; asset groups and safe harbor are written apart). */
function rowValues(input: UpdateRepositoryRequest) {
  const values: Partial<RepositoryRow> = {};
  const keys = [
    'name',
    'url',
    'currencyCode',
    'kycRequired',
    'totalRewardPot',
    'submissionFee',
    'instructions',
    'requiredCtfAddress',
    'allowedSeverities',
    'isPublic',
    'showAllFindings',
  ] as const;
  for (const key of keys) {
    if (input[key] !== undefined) Object.assign(values, { [key]: input[key] });
  }
  return values;
}

function memberState(member: MemberRow | null, username: string) {
  if (!member || member.deletedAt) return null;
  return {
    userId: member.userId,
    username,
    role: member.role,
    teamId: member.teamId,
    pingsLeft: member.pingsLeft,
  };
}

/**
 * Repositories of companies: the listing of joined and joinable repositories, creation, updates
 * (each recorded in the change log with the old and new values of the changed fields),
 * membership, finishing, and the change log itself.
 */
export function createRepositoriesService(deps: { database: Database; now?: () => Date }) {
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  /** The caller's access to a repository; 404 when they may not see it (another company's, not public). */
  async function loadAccess(
    db: Db,
    actor: Actor,
    repositoryId: string,
    lock = false,
  ): Promise<RepositoryAccess> {
    const user = requireUser(actor);
    const repo = repositoriesRepo(db);
    const repository = lock ? await repo.lockById(repositoryId) : await repo.findById(repositoryId);
    if (!repository) throw repositoryNotFound();
    // Read after the lock, so that a locked repository's memberships are those the change sees.
    const access = await loadFindingAccess(db, user);
    if (!can(access, 'repository.read', { repository })) throw repositoryNotFound();
    return { user, access, repository, role: access.memberships.get(repository.id)?.role ?? null };
  }

  function requireManage(access: RepositoryAccess): void {
    if (!can(access.access, 'repository.manage', { repository: access.repository })) {
      throw new AppError('FORBIDDEN', {
        message: 'Only repository admins and company managers may do this.',
      });
    }
  }

  /** Renders rows as Repository items for the viewer, in the given order. */
  async function renderRepositories(db: Db, rows: RepositoryRow[], viewerId: string): Promise<Repository[]> {
    const repo = repositoriesRepo(db);
    const ids = rows.map((r) => r.id);
    // One after another: `db` may be a transaction, one connection.
    const { groups, harbors } = await repo.loadStructures(ids);
    const stats = await repo.loadStats(ids, viewerId);
    const roles = await repo.loadRoles(ids, viewerId);
    const companies = await repo.findCompanies(rows.map((r) => r.companyId));
    return rows.map((row) => {
      const s = stats.get(row.id)!;
      return {
        id: row.id,
        currencyCode: row.currencyCode,
        kycRequired: row.kycRequired,
        totalFindings: s.totalFindings,
        createdAt: row.createdAt.toISOString(),
        name: row.name,
        url: row.url,
        company: toCompanySummary(companies.get(row.companyId)!),
        timeframe: { start: iso(row.timeframeStart), end: iso(row.timeframeEnd) },
        totalRewardPot: row.totalRewardPot,
        submissionFee: row.submissionFee,
        assetGroups: groups.get(row.id) ?? [],
        safeHarbor: harbors.get(row.id) ?? null,
        instructions: row.instructions,
        requiredCtfAddress: row.requiredCtfAddress,
        reward: s.reward,
        rank: s.rank,
        rankTotal: s.rankTotal,
        allowedSeverities: row.allowedSeverities as Repository['allowedSeverities'],
        isPublic: row.isPublic,
        showAllFindings: row.showAllFindings,
        finishedAt: iso(row.finishedAt),
        role: roles.get(row.id) ?? null,
      };
    });
  }

  async function renderOne(db: Db, row: RepositoryRow, viewerId: string): Promise<Repository> {
    const [view] = await renderRepositories(db, [row], viewerId);
    return view!;
  }

  /** Writes a change-log event unless nothing changed. */
  async function recordChange(
    db: Db,
    repositoryId: string,
    userId: string,
    change: ReturnType<typeof diffState>,
  ) {
    if (Object.keys(change.newValue).length === 0) return;
    await repositoriesRepo(db).insertEvent({ repositoryId, ...change, updatedBy: userId });
  }

  async function renderMember(db: Db, member: MemberRow): Promise<RepositoryMember> {
    const user = await usersRepo(db).findUserById(member.userId);
    return {
      repositoryId: member.repositoryId,
      user: toShortUserSummary(user!),
      role: member.role,
      teamId: member.teamId,
      pingsLeft: member.pingsLeft,
      joinedAt: member.joinedAt.toISOString(),
      deletedAt: iso(member.deletedAt),
    };
  }

  return {
    /**
     * The company's repositories that the caller joined or can join (public ones). Company users
     * and cross-company readers see all of them. A caller with nothing to see in the company gets
     * 404, as for any company that is not theirs.
     */
    async listCompanyRepositories(actor: Actor, companyId: string): Promise<Repository[]> {
      const user = requireUser(actor);
      const all = can(user, 'company.read', { companyId });
      const db = database.db;
      const company = await requireCompany(db, companyId);
      const access = await loadFindingAccess(db, user);
      const rows = await repositoriesRepo(db).listCompanyRepositories(company.id, access);
      if (!all && rows.length === 0) throw new AppError('NOT_FOUND', { message: 'Company not found.' });
      return renderRepositories(db, rows, user.userId);
    },

    async getRepository(actor: Actor, repositoryId: string): Promise<Repository> {
      const access = await loadAccess(database.db, actor, repositoryId);
      return renderOne(database.db, access.repository, access.user.userId);
    },

    /** Creates a repository with its asset groups and safe harbor (company managers, platform admins). */
    async createRepository(
      actor: Actor,
      companyId: string,
      input: CreateRepositoryRequest,
    ): Promise<Repository> {
      const user = requireCompanyManager(actor, companyId);
      await requireCompany(database.db, companyId);
      const timeframe = mergeTimeframe(null, input.timeframe);
      return database.transaction(async (tx) => {
        const repo = repositoriesRepo(tx.db);
        const row = await repo.insert({ companyId, ...rowValues(input), name: input.name, ...timeframe });
        if (input.assetGroups) await repo.replaceAssetGroups(row.id, input.assetGroups);
        if (input.safeHarbor) await repo.replaceSafeHarbor(row.id, input.safeHarbor);
        return renderOne(tx.db, row, user.userId);
      });
    },

    /**
     * Changes the given fields (repository admins, company managers, platform admins) and writes
     * one change-log event with the old and new values of the fields that changed — none when
     * nothing did.
     */
    async updateRepository(
      actor: Actor,
      repositoryId: string,
      input: UpdateRepositoryRequest,
    ): Promise<Repository> {
      return database.transaction(async (tx) => {
        const access = await loadAccess(tx.db, actor, repositoryId, true);
        requireManage(access);
        const repo = repositoriesRepo(tx.db);
        const before = await editableState(tx.db, access.repository);
        const values: Partial<RepositoryRow> = { ...rowValues(input) };
        if (input.timeframe) Object.assign(values, mergeTimeframe(access.repository, input.timeframe));
        let row = access.repository;
        if (Object.keys(values).length > 0) row = await repo.update(repositoryId, values);
        if (input.assetGroups) await repo.replaceAssetGroups(repositoryId, input.assetGroups);
        if (input.safeHarbor !== undefined) await repo.replaceSafeHarbor(repositoryId, input.safeHarbor);
        const change = diffState(before, await editableState(tx.db, row));
        if (Object.keys(change.newValue).length > 0) {
          row = await repo.update(repositoryId, { updatedAt: now() });
          await recordChange(tx.db, repositoryId, access.user.userId, change);
        }
        return renderOne(tx.db, row, access.user.userId);
      });
    },

    /** Marks the engagement finished (reports can then be made); repeating it changes nothing. */
    async finishRepository(actor: Actor, repositoryId: string): Promise<Repository> {
      return database.transaction(async (tx) => {
        const access = await loadAccess(tx.db, actor, repositoryId, true);
        requireManage(access);
        let row = access.repository;
        if (!row.finishedAt) {
          const at = now();
          row = await repositoriesRepo(tx.db).update(repositoryId, { finishedAt: at, updatedAt: at });
          await recordChange(tx.db, repositoryId, access.user.userId, {
            oldValue: { finishedAt: null },
            newValue: { finishedAt: at.toISOString() },
          });
        }
        return renderOne(tx.db, row, access.user.userId);
      });
    },

    /** The change log (repository admins and clients, company managers, platform readers), newest first. */
    async listEvents(actor: Actor, repositoryId: string): Promise<RepositoryEvent[]> {
      const access = await loadAccess(database.db, actor, repositoryId);
      if (!can(access.access, 'repository.read_log', { repository: access.repository })) {
        throw new AppError('FORBIDDEN', {
          message: 'Only repository admins and clients may read the change log.',
        });
      }
      const rows = await repositoriesRepo(database.db).listEvents(repositoryId);
      const summaries = await usersRepo(database.db).shortSummaries(rows.map((r) => r.updatedBy));
      return rows.map((r) => ({
        id: r.id,
        oldValue: r.oldValue,
        newValue: r.newValue,
        updatedBy: (r.updatedBy && summaries.get(r.updatedBy)) || null,
        updatedAt: r.updatedAt.toISOString(),
      }));
    },

    /** Members of the repository (those who read its change log, and company users). */
    async listMembers(actor: Actor, repositoryId: string): Promise<RepositoryMember[]> {
      const access = await loadAccess(database.db, actor, repositoryId);
      if (!can(access.access, 'repository.read_log', { repository: access.repository })) {
        throw new AppError('FORBIDDEN', {
          message: 'Only repository admins, clients and company users may list members.',
        });
      }
      const rows = await repositoriesRepo(database.db).listMembers(repositoryId);
      return rows.map(({ member, user }) => ({
        repositoryId: member.repositoryId,
        user: toShortUserSummary(user),
        role: member.role,
        teamId: member.teamId,
        pingsLeft: member.pingsLeft,
        joinedAt: member.joinedAt.toISOString(),
        deletedAt: iso(member.deletedAt),
      }));
    },

    /**
     * Adds a user with a role, or changes a member's role, team or pings (a removed member comes
     * back). Recorded in the change log as `member` old → new; nothing when nothing changed.
     */
    async putMember(
      actor: Actor,
      repositoryId: string,
      userId: string,
      input: PutMemberRequest,
    ): Promise<RepositoryMember> {
      return database.transaction(async (tx) => {
        const access = await loadAccess(tx.db, actor, repositoryId, true);
        requireManage(access);
        const user = await usersRepo(tx.db).findUserById(userId);
        if (!user || user.deletedAt) throw new AppError('NOT_FOUND', { message: 'User not found.' });
        const repo = repositoriesRepo(tx.db);
        const existing = await repo.findMember(repositoryId, userId);
        const active = existing && !existing.deletedAt ? existing : null;
        const member = await repo.upsertMember({
          repositoryId,
          userId,
          role: input.role,
          teamId: input.teamId !== undefined ? input.teamId : (active?.teamId ?? null),
          pingsLeft: input.pingsLeft ?? active?.pingsLeft ?? DEFAULT_PINGS,
          joinedAt: now(),
        });
        await recordChange(
          tx.db,
          repositoryId,
          access.user.userId,
          diffState(
            { member: memberState(existing, user.username) },
            { member: memberState(member, user.username) },
          ),
        );
        if (!active || active.role !== member.role) {
          await appendAuditEntry(tx.db, {
            companyId: access.repository.companyId,
            action: active ? 'repository_member_changed' : 'repository_member_added',
            targetUserId: userId,
            performedBy: access.user.userId,
            details: { repositoryId, role: member.role, ...(active ? { from: active.role } : {}) },
          });
        }
        return renderMember(tx.db, member);
      });
    },

    /** Removes a member (kept with `deletedAt`); recorded in the change log. */
    async removeMember(actor: Actor, repositoryId: string, userId: string): Promise<void> {
      await database.transaction(async (tx) => {
        const access = await loadAccess(tx.db, actor, repositoryId, true);
        requireManage(access);
        const repo = repositoriesRepo(tx.db);
        const existing = await repo.findMember(repositoryId, userId);
        if (!existing || existing.deletedAt)
          throw new AppError('NOT_FOUND', { message: 'Member not found.' });
        const user = await usersRepo(tx.db).findUserById(userId);
        await repo.markMemberRemoved(repositoryId, userId, now());
        await recordChange(tx.db, repositoryId, access.user.userId, {
          oldValue: { member: memberState(existing, user!.username) },
          newValue: { member: null },
        });
        await appendAuditEntry(tx.db, {
          companyId: access.repository.companyId,
          action: 'repository_member_removed',
          targetUserId: userId,
          performedBy: access.user.userId,
          details: { repositoryId, role: existing.role },
        });
      });
    },

    /** Joins a public (joinable), unfinished repository as a reviewer; recorded in the change log. */
    async joinRepository(actor: Actor, repositoryId: string): Promise<RepositoryMember> {
      return database.transaction(async (tx) => {
        const access = await loadAccess(tx.db, actor, repositoryId, true);
        if (access.role)
          throw new AppError('CONFLICT', { message: `You are already a ${access.role} of this repository.` });
        if (!can(access.access, 'repository.join', { repository: access.repository })) {
          throw new AppError('FORBIDDEN', {
            message: 'This repository is not open to join; ask a repository admin.',
          });
        }
        if (access.repository.finishedAt)
          throw new AppError('CONFLICT', { message: 'This repository is finished.' });
        const repo = repositoriesRepo(tx.db);
        const existing = await repo.findMember(repositoryId, access.user.userId);
        if (existing?.deletedAt) {
          throw new AppError('FORBIDDEN', {
            message: 'You were removed from this repository; ask a repository admin.',
          });
        }
        const member = await repo.upsertMember({
          repositoryId,
          userId: access.user.userId,
          role: 'reviewer',
          teamId: null,
          pingsLeft: DEFAULT_PINGS,
          joinedAt: now(),
        });
        await recordChange(tx.db, repositoryId, access.user.userId, {
          oldValue: { member: null },
          newValue: { member: memberState(member, access.user.username) },
        });
        await appendAuditEntry(tx.db, {
          companyId: access.repository.companyId,
          action: 'repository_member_added',
          targetUserId: access.user.userId,
          performedBy: access.user.userId,
          details: { repositoryId, role: member.role, via: 'join' },
        });
        return renderMember(tx.db, member);
      });
    },
  };
}

export type RepositoriesService = ReturnType<typeof createRepositoriesService>;
