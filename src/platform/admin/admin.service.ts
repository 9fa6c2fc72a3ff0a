import { requirePlatformAdmin } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import { hashSecret, issueSecret, isValidUserTokenFormat } from '../../auth/credentials.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';
import { companiesRepo } from '../companies/companies.repo.ts';
import { adminRepo } from './admin.repo.ts';

export const DEFAULT_TOKEN_DAYS = 90;
export const MAX_TOKEN_DAYS = 366;

export interface CreateCompanyInput {
  name: string;
  handle: string;
  logo?: string;
  website?: string;
  sourcehost?: string;
  microblog?: string;
}

export interface CreateUserInput {
  username: string;
  name: string;
  email?: string;
  companyId?: string;
  companyRole?: 'manager' | 'member';
  permissions?: string[];
}

/** Platform administration: companies, users, user tokens, credit grants, the first admin. */
export function createAdminService(deps: { database: Database; credits: CreditsService; now?: () => Date }) {
  const { database, credits } = deps;
  const now = deps.now ?? (() => new Date());

  async function companyExists(companyId: string): Promise<boolean> {
    return (await companiesRepo(database.db).findById(companyId)) !== null;
  }

  function validateExpiry(expiresAt: Date): Date {
    const t = expiresAt.getTime();
    if (Number.isNaN(t) || t <= now().getTime()) {
      throw new AppError('VALIDATION_FAILED', {
        message: 'expiresAt must be in the future.',
        details: { field: 'expiresAt' },
      });
    }
    if (t > now().getTime() + MAX_TOKEN_DAYS * 86_400_000) {
      throw new AppError('VALIDATION_FAILED', {
        message: `expiresAt must be within ${MAX_TOKEN_DAYS} days.`,
        details: { field: 'expiresAt' },
      });
    }
    return expiresAt;
  }

  return {
    async createCompany(actor: Actor, input: CreateCompanyInput) {
      requirePlatformAdmin(actor);
      try {
        return await companiesRepo(database.db).insert(input);
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('ALREADY_EXISTS', { message: `The handle "${input.handle}" is taken.` });
        }
        throw err;
      }
    },

    /** Every company, by handle (platform admin). */
    async listCompanies(actor: Actor) {
      requirePlatformAdmin(actor);
      return companiesRepo(database.db).listAll();
    },

    async createUser(actor: Actor, input: CreateUserInput) {
      const admin = requirePlatformAdmin(actor);
      if (input.companyId && !(await companyExists(input.companyId))) {
        throw new AppError('NOT_FOUND', { message: 'Company not found.' });
      }
      try {
        return await database.transaction(async (tx) => {
          const repo = adminRepo(tx.db);
          const user = await repo.insertUser({
            username: input.username,
            name: input.name,
            email: input.email ?? null,
          });
          if (input.companyId) {
            await repo.insertCompanyMember({
              companyId: input.companyId,
              userId: user.id,
              role: input.companyRole ?? 'member',
              joinedAt: now(),
            });
            await appendAuditEntry(tx.db, {
              companyId: input.companyId,
              action: 'user_invited',
              targetUserId: user.id,
              performedBy: admin.userId,
              details: { role: input.companyRole ?? 'member' },
            });
          }
          await repo.insertPermissions(user.id, input.permissions ?? []);
          return {
            ...user,
            companyId: input.companyId ?? null,
            companyRole: input.companyId ? (input.companyRole ?? 'member') : null,
          };
        });
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('ALREADY_EXISTS', { message: `The username "${input.username}" is taken.` });
        }
        throw err;
      }
    },

    /** Issues a user API token; the token is returned once and only its hash is kept. */
    async createUserToken(actor: Actor, userId: string, input: { expiresAt?: Date; name?: string }) {
      requirePlatformAdmin(actor);
      if (!(await adminRepo(database.db).userExists(userId)))
        throw new AppError('NOT_FOUND', { message: 'User not found.' });
      const expiresAt = validateExpiry(
        input.expiresAt ?? new Date(now().getTime() + DEFAULT_TOKEN_DAYS * 86_400_000),
      );
      const issued = issueSecret('user');
      const row = await adminRepo(database.db).insertUserToken({
        userId,
        name: input.name ?? 'api',
        prefix: issued.prefix,
        hash: issued.hash,
        expiresAt,
      });
      return { id: row.id, token: issued.secret, prefix: issued.prefix, expiresAt: row.expiresAt };
    },

    async revokeUserToken(actor: Actor, userId: string, tokenId: string) {
      requirePlatformAdmin(actor);
      // In a transaction: the commit tells this process's credential cache (Database.afterCommit),
      // so the token is refused here from the answer on.
      const revoked = await database.transaction((tx) =>
        adminRepo(tx.db).revokeUserToken(userId, tokenId, now()),
      );
      if (!revoked) throw new AppError('NOT_FOUND', { message: 'Token not found or already revoked.' });
    },

    async grantCredits(actor: Actor, companyId: string, amount: number, note?: string) {
      const admin = requirePlatformAdmin(actor);
      if (!(await companyExists(companyId)))
        throw new AppError('NOT_FOUND', { message: 'Company not found.' });
      return credits.grant(companyId, amount, note, admin.userId);
    },

    /**
     * On an empty database, creates the platform admin `admin` and a token for it (the given one,
     * or a new one). Returns the token when it was created now, null when users already exist.
     * Two processes starting at once create one admin: the username is unique.
     */
    async bootstrapAdmin(options: {
      token?: string | null;
      tokenDays?: number;
    }): Promise<{ token: string; expiresAt: Date } | null> {
      if (options.token && !isValidUserTokenFormat(options.token)) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'VIGIL_ADMIN_TOKEN must look like vgl_u_ followed by 40 letters or digits.',
        });
      }
      if ((await adminRepo(database.db).countUsers()) > 0) return null;
      const token = options.token ?? issueSecret('user').secret;
      const expiresAt = new Date(now().getTime() + (options.tokenDays ?? MAX_TOKEN_DAYS) * 86_400_000);
      try {
        await database.transaction(async (tx) => {
          const repo = adminRepo(tx.db);
          const user = await repo.insertUser({
            username: 'admin',
            name: 'Platform admin',
            isGeneratedAvatar: true,
          });
          await repo.insertPermissions(user.id, ['admin', 'read_all_companies']);
          await repo.insertUserToken({
            userId: user.id,
            name: 'bootstrap',
            prefix: token.slice(0, 11),
            hash: hashSecret(token),
            expiresAt,
          });
        });
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
      return { token, expiresAt };
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
