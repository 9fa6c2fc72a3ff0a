import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';

describe('service key last use (migration 0037)', () => {
  it('stamping last_used_at flushes no credential cache; a change of what the key resolves to does', async () => {
    const { config, drop } = await createTestDatabaseConfig();
    const database = await openDatabase(config);
    let told: string[] = [];
    const stop = database.onOwnNotify((table, channel) => {
      if (channel === 'vigil_credentials') told.push(table);
    });
    try {
      await database.executeSql(`update service_keys set last_used_at = now() where false`);
      expect(told).toEqual([]);
      for (const column of ['revoked_at = now()', 'expires_at = now()', "scopes = '{}'", "hash = 'x'"]) {
        await database.executeSql(`update service_keys set ${column} where false`);
        expect(told, column).toEqual(['service_keys']);
        told = [];
      }
      await database.executeSql(`delete from service_keys where false`);
      expect(told).toEqual(['service_keys']);
    } finally {
      stop();
      await database.close();
      await drop();
    }
  });
});
