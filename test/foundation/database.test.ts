import { describe, expect, it } from 'vitest';
import { migrateDatabase, openDatabase } from '../../src/db/client.ts';
import { createTestApp } from '../helpers/app.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';

describe('database availability', () => {
  it('answers /readyz with 503 when the database cannot be reached', async () => {
    const t = await createTestApp();
    try {
      expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await t.container.database.close();
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'unavailable', database: 'unreachable' });
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});

describe('migrations', () => {
  it('apply once when several processes start together', async () => {
    const { config, drop } = await createTestDatabaseConfig({ empty: true });
    const databases = await Promise.all([openDatabase(config), openDatabase(config), openDatabase(config)]);
    try {
      await Promise.all(databases.map((d) => migrateDatabase(d)));
      const applied = await databases[0]!.executeSql(
        'select count(*)::int as n from drizzle.__drizzle_migrations',
        [],
      );
      const journal = await import('../../src/db/migrations/meta/_journal.json', { with: { type: 'json' } });
      expect(applied.rows[0]?.n).toBe(journal.default.entries.length);
    } finally {
      await Promise.all(databases.map((d) => d.close()));
      await drop();
    }
  });
});
