import { eq, sql } from 'drizzle-orm';
import { type Actor, requirePlatformAdmin } from '../../auth/actor.ts';
import { hashSecret, issueSecret, isValidUserTokenFormat } from '../../auth/credentials.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { companies, companyMembers, platformPermissions, users, userTokens } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import type { CreditsService } from '../../scanner/credits/credits.service.ts';
import { appendAuditEntry } from '../audit/audit.repo.ts';

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
    const [row] = await database.db
      .select({ id: companies.id })
      .from(companies)
      .where(eq(companies.id, companyId));
    return Boolean(row);
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
        const [row] = await database.db.insert(companies).values(input).returning();
        return row!;
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
      return database.db.select().from(companies).orderBy(companies.handle);
    },

    async createUser(actor: Actor, input: CreateUserInput) {
      const admin = requirePlatformAdmin(actor);
      if (input.companyId && !(await companyExists(input.companyId))) {
        throw new AppError('NOT_FOUND', { message: 'Company not found.' });
      }
      try {
        return await database.transaction(async (tx) => {
          const [user] = await tx.db
            .insert(users)
            .values({ username: input.username, name: input.name, email: input.email ?? null })
            .returning();
          if (input.companyId) {
            await tx.db.insert(companyMembers).values({
              companyId: input.companyId,
              userId: user!.id,
              role: input.companyRole ?? 'member',
              joinedAt: now(),
            });
            await appendAuditEntry(tx.db, {
              companyId: input.companyId,
              action: 'user_invited',
              targetUserId: user!.id,
              performedBy: admin.userId,
              details: { role: input.companyRole ?? 'member' },
            });
          }
          if (input.permissions?.length) {
            await tx.db
              .insert(platformPermissions)
              .values(input.permissions.map((permission) => ({ userId: user!.id, permission })));
          }
          return {
            ...user!,
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
      const [user] = await database.db.select({ id: users.id }).from(users).where(eq(users.id, userId));
      if (!user) throw new AppError('NOT_FOUND', { message: 'User not found.' });
      const expiresAt = validateExpiry(
        input.expiresAt ?? new Date(now().getTime() + DEFAULT_TOKEN_DAYS * 86_400_000),
      );
      const issued = issueSecret('user');
      const [row] = await database.db
        .insert(userTokens)
        .values({ userId, name: input.name ?? 'api', prefix: issued.prefix, hash: issued.hash, expiresAt })
        .returning();
      return { id: row!.id, token: issued.secret, prefix: issued.prefix, expiresAt: row!.expiresAt };
    },

    async revokeUserToken(actor: Actor, userId: string, tokenId: string) {
      requirePlatformAdmin(actor);
      const rows = await database.db
        .update(userTokens)
        .set({ revokedAt: now() })
        .where(
          sql`${userTokens.id} = ${tokenId} and ${userTokens.userId} = ${userId} and ${userTokens.revokedAt} is null`,
        )
        .returning({ id: userTokens.id });
      if (rows.length === 0)
        throw new AppError('NOT_FOUND', { message: 'Token not found or already revoked.' });
    },

    async grantCredits(actor: Actor, companyId: string, amount: number, note?: string) {
      requirePlatformAdmin(actor);
      if (!(await companyExists(companyId)))
        throw new AppError('NOT_FOUND', { message: 'Company not found.' });
      return credits.grant(companyId, amount, note);
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
      const [{ count } = { count: 0 }] = await database.db
        .select({ count: sql<number>`count(*)::int` })
        .from(users);
      if (count > 0) return null;
      const token = options.token ?? issueSecret('user').secret;
      const expiresAt = new Date(now().getTime() + (options.tokenDays ?? MAX_TOKEN_DAYS) * 86_400_000);
      try {
        await database.transaction(async (tx) => {
          const [user] = await tx.db
            .insert(users)
            .values({ username: 'admin', name: 'Platform admin', isGeneratedAvatar: true })
            .returning();
          await tx.db.insert(platformPermissions).values([
            { userId: user!.id, permission: 'admin' },
            { userId: user!.id, permission: 'read_all_companies' },
          ]);
          await tx.db.insert(userTokens).values({
            userId: user!.id,
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
