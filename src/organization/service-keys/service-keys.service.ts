import { requireManagedCompany } from '../../access/access.service.ts';
import type { Actor } from '../../auth/actor.ts';
import { DEFAULT_SCOPES, issueSecret, SCOPES, type Scope } from '../../auth/credentials.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { type ServiceKeyRow, serviceKeysRepo } from './service-keys.repo.ts';

export interface ServiceKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

function toView(row: ServiceKeyRow): ServiceKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as Scope[],
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Organization service keys: create (shown once), list, revoke. */
export function createServiceKeysService(deps: { database: Database; now?: () => Date }) {
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  const requireCompany = (actor: Actor, companyId: string) =>
    requireManagedCompany(database.db, actor, companyId);

  return {
    async createKey(
      actor: Actor,
      companyId: string,
      input: { name: string; scopes?: string[]; expiresAt?: Date },
    ) {
      const user = await requireCompany(actor, companyId);
      const scopes = [...new Set(input.scopes ?? DEFAULT_SCOPES)];
      const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) {
        throw new AppError('VALIDATION_FAILED', {
          message: `Unknown scope: ${unknown.join(', ')}.`,
          details: { field: 'scopes' },
        });
      }
      if (input.expiresAt && input.expiresAt.getTime() <= now().getTime()) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'expiresAt must be in the future.',
          details: { field: 'expiresAt' },
        });
      }
      const issued = issueSecret('service');
      const row = await serviceKeysRepo(database.db).insert({
        companyId,
        name: input.name,
        prefix: issued.prefix,
        hash: issued.hash,
        scopes,
        expiresAt: input.expiresAt ?? null,
        createdBy: user.userId,
      });
      return { ...toView(row), key: issued.secret };
    },

    async listKeys(actor: Actor, companyId: string): Promise<ServiceKeyView[]> {
      await requireCompany(actor, companyId);
      const rows = await serviceKeysRepo(database.db).listByCompany(companyId);
      return rows.map(toView);
    },

    async revokeKey(actor: Actor, companyId: string, keyId: string): Promise<ServiceKeyView> {
      await requireCompany(actor, companyId);
      const repo = serviceKeysRepo(database.db);
      const row = await repo.revoke(companyId, keyId, now());
      if (row) return toView(row);
      const existing = await repo.findInCompany(companyId, keyId);
      if (!existing) throw new AppError('NOT_FOUND', { message: 'Service key not found.' });
      return toView(existing);
    },
  };
}

export type ServiceKeysService = ReturnType<typeof createServiceKeysService>;
