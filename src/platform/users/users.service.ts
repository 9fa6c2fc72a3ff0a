import { randomUUID } from 'node:crypto';
import { requireCompany } from '../../access/access.service.ts';
import {
  can,
  companyNotFound,
  requireCompanyManager,
  requireCompanyReader,
  requirePlatformAdmin,
  requireUser,
} from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { resolveGuild } from '../guilds/guilds.service.ts';
import { type MemberRow, type UserRow, usersRepo } from './users.repo.ts';
import type {
  AuditorPublicProfile,
  AwardBadgeRequest,
  CompanyUser,
  ListCompanyUsersQuery,
  UpdateProfileRequest,
} from './users.schemas.ts';
import { toAuditorPublicProfile, toCompanyUser, toListedCompanyUser } from './users.views.ts';

type CompanyRole = 'manager' | 'member';

/** Profile fields only platform admins may change. */
const ADMIN_ONLY_PROFILE_FIELDS = ['verifiedProfile', 'isNdaSigned', 'reputation', 'isBot', 'guild'] as const;

function memberNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'User not found in this company.' });
}

function isActiveManager(user: UserRow, member: MemberRow): boolean {
  return (
    member.role === 'manager' &&
    member.joinedAt !== null &&
    member.disabledAt === null &&
    user.disabledAt === null &&
    user.deletedAt === null
  );
}

/**
 * Company users and memberships: listing, joining by SSO domain, disabling, re-enabling, role
 * changes (each change audited with its target and performing user), and user profiles.
 */
export function createUsersService(deps: { database: Database; now?: () => Date }) {
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  /** Refuses to leave the company without an active manager. */
  async function guardLastManager(
    db: Db,
    companyId: string,
    user: UserRow,
    member: MemberRow,
  ): Promise<void> {
    if (!isActiveManager(user, member)) return;
    if ((await usersRepo(db).countActiveManagers(companyId)) <= 1) {
      throw new AppError('CONFLICT', { message: 'The company must keep at least one active manager.' });
    }
  }

  return {
    /** Company users (company users and cross-company readers). */
    async listCompanyUsers(
      actor: Actor,
      companyId: string,
      query: ListCompanyUsersQuery,
    ): Promise<CompanyUser[]> {
      requireCompanyReader(actor, companyId);
      const q = query.q?.trim();
      const includeAll = query.include_all ?? false;
      const rows = await usersRepo(database.db).listCompanyUsers(companyId, {
        includeAll,
        q: q ? q : undefined,
      });
      // A membership row exists only while its company does (the foreign key cascades): only an
      // empty list needs the company looked up, for its 404.
      if (rows.length === 0) await requireCompany(database.db, companyId);
      return rows.map(toListedCompanyUser);
    },

    /**
     * The user joins the company automatically when their email's domain has an SSO enforcement
     * rule of the company (`user_auto_joined`, `details.via = "sso_domain"`; invitations are
     * accepted through the invitations service). Joining again is a no-op; a disabled membership
     * cannot join (403). The caller is the user (or a platform admin).
     */
    async joinCompany(actor: Actor, companyId: string, userId: string): Promise<CompanyUser> {
      const caller = requireUser(actor);
      if (!can(caller, 'user.act_as', { userId })) {
        // Someone else's membership: 403 for the company's own users, 404 for everyone else.
        if (!can(caller, 'company.read', { companyId })) throw companyNotFound();
        throw new AppError('FORBIDDEN', { message: 'Users join companies themselves.' });
      }
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        if (!(await repo.lockCompany(companyId))) throw companyNotFound();
        const user = await repo.findUserById(userId);
        if (!user) throw new AppError('NOT_FOUND', { message: 'User not found.' });
        const existing = await repo.findMember(companyId, userId);
        const at = now();
        if (existing) {
          if (existing.member.disabledAt) {
            throw new AppError('FORBIDDEN', {
              message: 'This membership is disabled; a company manager can re-enable it.',
            });
          }
          return toCompanyUser(existing.user, existing.member);
        }
        const domain = user.email?.split('@')[1];
        const rule = domain ? await repo.findSsoRuleForDomain(companyId, domain) : null;
        // Without an invitation or a matching domain the company stays invisible: 404, not 403.
        if (!rule) throw companyNotFound();
        const member = await repo.insertMember({
          companyId,
          userId,
          role: 'member',
          invitedAt: at,
          joinedAt: at,
        });
        const activated = user.isActivated ? user : await repo.updateUser(userId, { isActivated: true });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'user_auto_joined',
          targetUserId: userId,
          performedBy: caller.userId,
          details: { via: 'sso_domain', domain: rule.domain, role: 'member' },
        });
        return toCompanyUser(activated, member);
      });
    },

    /** Disables a membership (audited `user_disabled`); repeating it changes nothing. */
    async disableUser(actor: Actor, companyId: string, userId: string): Promise<CompanyUser> {
      const manager = requireCompanyManager(actor, companyId);
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        if (!(await repo.lockCompany(companyId))) throw companyNotFound();
        const found = await repo.findMember(companyId, userId);
        if (!found) throw memberNotFound();
        if (found.member.disabledAt) return toCompanyUser(found.user, found.member);
        await guardLastManager(tx.db, companyId, found.user, found.member);
        const member = await repo.updateMember(companyId, userId, { disabledAt: now() });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'user_disabled',
          targetUserId: userId,
          performedBy: manager.userId,
        });
        return toCompanyUser(found.user, member);
      });
    },

    /** Re-enables a disabled membership (audited `user_reenabled`); on an enabled one, nothing. */
    async reenableUser(actor: Actor, companyId: string, userId: string): Promise<CompanyUser> {
      const manager = requireCompanyManager(actor, companyId);
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        if (!(await repo.lockCompany(companyId))) throw companyNotFound();
        const found = await repo.findMember(companyId, userId);
        if (!found) throw memberNotFound();
        if (!found.member.disabledAt) return toCompanyUser(found.user, found.member);
        const member = await repo.updateMember(companyId, userId, { disabledAt: null });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'user_reenabled',
          targetUserId: userId,
          performedBy: manager.userId,
        });
        return toCompanyUser(found.user, member);
      });
    },

    /** Changes a user's company role (audited `company_role_changed` with from/to); same role: nothing. */
    async changeCompanyRole(
      actor: Actor,
      companyId: string,
      userId: string,
      role: CompanyRole,
    ): Promise<CompanyUser> {
      const manager = requireCompanyManager(actor, companyId);
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        if (!(await repo.lockCompany(companyId))) throw companyNotFound();
        const found = await repo.findMember(companyId, userId);
        if (!found) throw memberNotFound();
        if (found.member.role === role) return toCompanyUser(found.user, found.member);
        if (role !== 'manager') await guardLastManager(tx.db, companyId, found.user, found.member);
        const member = await repo.updateMember(companyId, userId, { role });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'company_role_changed',
          targetUserId: userId,
          performedBy: manager.userId,
          details: { from: found.member.role, to: role },
        });
        return toCompanyUser(found.user, member);
      });
    },

    async getProfile(actor: Actor, userId: string): Promise<AuditorPublicProfile> {
      requireUser(actor);
      const user = await usersRepo(database.db).findUserById(userId);
      if (!user || user.deletedAt) throw new AppError('NOT_FOUND', { message: 'User not found.' });
      return toAuditorPublicProfile(user);
    },

    /**
     * Changes a user's profile: the user themselves, or a platform admin. Verification, NDA,
     * reputation, bot flag and guild are for platform admins only (403 otherwise); a guild named
     * here is created when it does not exist yet.
     */
    async updateProfile(
      actor: Actor,
      userId: string,
      input: UpdateProfileRequest,
    ): Promise<AuditorPublicProfile> {
      const caller = requireUser(actor);
      const admin = can(caller, 'platform.administer', null);
      if (!can(caller, 'user.act_as', { userId })) {
        throw new AppError('FORBIDDEN', { message: 'Users change only their own profile.' });
      }
      const adminField = ADMIN_ONLY_PROFILE_FIELDS.find((f) => input[f] !== undefined);
      if (adminField && !admin) {
        throw new AppError('FORBIDDEN', { message: `Only platform admins may change ${adminField}.` });
      }
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        const user = await repo.findUserById(userId);
        if (!user || user.deletedAt) throw new AppError('NOT_FOUND', { message: 'User not found.' });
        const { guild, chat_a, chat_b, avatar, ...rest } = input;
        const values: Partial<UserRow> = { ...rest };
        if (chat_a !== undefined) values.chatA = chat_a;
        if (chat_b !== undefined) values.chatB = chat_b;
        if (avatar !== undefined) {
          values.avatar = avatar;
          values.isGeneratedAvatar = avatar === null;
        }
        if (guild !== undefined)
          values.guildId = guild === null ? null : (await resolveGuild(tx.db, guild, true)).id;
        const updated = Object.keys(values).length > 0 ? await repo.updateUser(userId, values) : user;
        return toAuditorPublicProfile(updated);
      });
    },

    /** Awards a badge (platform admins). */
    async awardBadge(actor: Actor, userId: string, input: AwardBadgeRequest): Promise<AuditorPublicProfile> {
      requirePlatformAdmin(actor);
      return database.transaction(async (tx) => {
        const repo = usersRepo(tx.db);
        const user = await repo.findUserById(userId);
        if (!user || user.deletedAt) throw new AppError('NOT_FOUND', { message: 'User not found.' });
        const badge = {
          id: randomUUID(),
          name: input.name,
          image: input.image ?? '',
          description: input.description ?? '',
          issuedAt: input.issuedAt ? new Date(input.issuedAt).toISOString() : now().toISOString(),
        };
        return toAuditorPublicProfile(await repo.updateUser(userId, { badges: [...user.badges, badge] }));
      });
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
