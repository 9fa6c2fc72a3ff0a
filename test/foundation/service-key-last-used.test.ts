import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';

describe('service key last use (migration 0037)', () => {
  it('stamping last_used_at flushes no credential cache; a change of what the key resolves to does', async () => {
    const { config, drop } = await createTestDatabaseConfig();
    const database = await openDatabase(config);
    let told: string[] = [];
    // What a committed transaction notified, as the process that made the change learns it.
    const stop = database.afterCommit((table, channel) => {
      if (channel === 'vigil_credentials') told.push(table);
    });
    const run = (statement: string) => database.transaction((tx) => tx.db.execute(sql.raw(statement)));
    try {
      await run(`update service_keys set last_used_at = now() where false`);
      expect(told).toEqual([]);
      for (const column of ['revoked_at = now()', 'expires_at = now()', "scopes = '{}'", "hash = 'x'"]) {
        await run(`update service_keys set ${column} where false`);
        expect(told, column).toEqual(['service_keys']);
        told = [];
      }
      await run(`delete from service_keys where false`);
      expect(told).toEqual(['service_keys']);
    } finally {
      stop();
      await database.close();
      await drop();
    }
  });
});
