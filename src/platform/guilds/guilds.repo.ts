import { asc, sql } from 'drizzle-orm';
import { type Db, isUniqueViolation } from '../../db/client.ts';
import { guilds } from '../../db/schema/index.ts';

export type GuildRow = typeof guilds.$inferSelect;

/** SQL of guilds (names are unique case-insensitively). */
export function guildsRepo(db: Db) {
  return {
    async findByName(name: string): Promise<GuildRow | null> {
      const [row] = await db.select().from(guilds).where(sql`lower(${guilds.name}) = lower(${name})`);
      return row ?? null;
    },

    /** Inserts a guild; null when the name is taken (also by a concurrent insert). */
    async insert(name: string): Promise<GuildRow | null> {
      try {
        const [row] = await db.insert(guilds).values({ name }).returning();
        return row!;
      } catch (err) {
        if (isUniqueViolation(err)) return null;
        throw err;
      }
    },

    async list(): Promise<GuildRow[]> {
      return db
        .select()
        .from(guilds)
        .orderBy(asc(sql`lower(${guilds.name})`), asc(guilds.id));
    },
  };
}
