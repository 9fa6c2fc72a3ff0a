import { requirePlatformAdmin } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database, Db } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { type GuildRow, guildsRepo } from './guilds.repo.ts';

export interface GuildView {
  id: string;
  name: string;
  createdAt: string;
}

function toView(row: GuildRow): GuildView {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

/**
 * The guild named `name`: found case-insensitively, else created when `mayCreate` (platform
 * admins create guilds on demand), else 404.
 */
export async function resolveGuild(db: Db, name: string, mayCreate: boolean): Promise<GuildRow> {
  const repo = guildsRepo(db);
  const found = await repo.findByName(name);
  if (found) return found;
  if (!mayCreate) {
    throw new AppError('NOT_FOUND', {
      message: `Guild "${name}" not found; a platform admin can create it.`,
    });
  }
  // A concurrent insert of the same name wins the unique index; read the winner.
  return (await repo.insert(name)) ?? (await repo.findByName(name))!;
}

/** Guilds of auditors: listed publicly (reports are filtered by guild name), created by platform admins. */
export function createGuildsService(deps: { database: Database }) {
  const { database } = deps;
  return {
    async listGuilds(): Promise<GuildView[]> {
      return (await guildsRepo(database.db).list()).map(toView);
    },

    /** Creates a guild; 409 when the name exists (case-insensitively). */
    async createGuild(actor: Actor, name: string): Promise<GuildView> {
      requirePlatformAdmin(actor);
      const row = await guildsRepo(database.db).insert(name.trim());
      if (!row) throw new AppError('ALREADY_EXISTS', { message: `The guild "${name}" exists.` });
      return toView(row);
    },
  };
}

export type GuildsService = ReturnType<typeof createGuildsService>;
