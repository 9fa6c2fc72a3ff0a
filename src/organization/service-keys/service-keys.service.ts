import { requireManagedCompany } from '../../access/access.service.ts';
import type { Actor } from '../../auth/actor.ts';
import { DEFAULT_SCOPES, issueSecret, SCOPES, type Scope } from '../../auth/credentials.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { appendAuditEntry } from '../audit/audit.repo.ts';
import { type ServiceKeyRow, serviceKeysRepo } from './service-keys.repo.ts';

export interface ServiceKeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
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
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

/** What an audit entry of a key says of it (never the secret; the key concerns no user: no target). */
function keyDetails(row: ServiceKeyRow) {
  return {
    keyId: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    expiresAt: row.expiresAt?.toISOString() ?? null,
  };
}

/** Organization service keys: create (shown once), list, revoke; each change audited. */
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
      const row = await database.transaction(async (tx) => {
        const inserted = await serviceKeysRepo(tx.db).insert({
          companyId,
          name: input.name,
          prefix: issued.prefix,
          hash: issued.hash,
          scopes,
          expiresAt: input.expiresAt ?? null,
          createdBy: user.userId,
        });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'service_key_created',
          performedBy: user.userId,
          details: keyDetails(inserted),
        });
        return inserted;
      });
      return { ...toView(row), key: issued.secret };
    },

    async listKeys(actor: Actor, companyId: string): Promise<ServiceKeyView[]> {
      await requireCompany(actor, companyId);
      const rows = await serviceKeysRepo(database.db).listByCompany(companyId);
      return rows.map(toView);
    },

    async revokeKey(actor: Actor, companyId: string, keyId: string): Promise<ServiceKeyView> {
      const user = await requireCompany(actor, companyId);
      return database.transaction(async (tx) => {
        const repo = serviceKeysRepo(tx.db);
        const row = await repo.revoke(companyId, keyId, now());
        if (row) {
          await appendAuditEntry(tx.db, {
            companyId,
            action: 'service_key_revoked',
            performedBy: user.userId,
            details: keyDetails(row),
          });
          return toView(row);
        }
        // Revoking a revoked key changes nothing and writes no entry.
        const existing = await repo.findInCompany(companyId, keyId);
        if (!existing) throw new AppError('NOT_FOUND', { message: 'Service key not found.' });
        return toView(existing);
      });
    },
  };
}

export type ServiceKeysService = ReturnType<typeof createServiceKeysService>;
