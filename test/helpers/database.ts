import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/db/client.ts';

/**
 * A fresh, empty database for one test app: in-memory PGlite by default, or a new database on the
 * PostgreSQL server of TEST_DATABASE_URL (dropped again by `drop`).
 */
export async function createTestDatabaseConfig(): Promise<{
  config: DatabaseConfig;
  drop: () => Promise<void>;
}> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return { config: { kind: 'pglite', dataDir: null }, drop: async () => {} };
  const name = `vigil_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    config: { kind: 'postgres', url: url.toString(), poolSize: 10 },
    drop: async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
