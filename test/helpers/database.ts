import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/db/client.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test run's PostgreSQL server (a maintenance database on it). */
    testServerUrl: string;
    /** A migrated database (pg-boss schema included) that every test database is cloned from. */
    testTemplate: string;
  }
}

/** The server of this test run: the embedded one of the global setup, or TEST_DATABASE_URL. */
export function testServerUrl(): string {
  return inject('testServerUrl');
}

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onServer<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh database for one test app on the test run's server (the embedded server the global setup
 * started, or the server of TEST_DATABASE_URL), cloned from the migrated template; `empty: true`
 * gives an empty one instead. `drop` removes it.
 */
export async function createTestDatabaseConfig(options: { empty?: boolean } = {}): Promise<{
  config: DatabaseConfig;
  drop: () => Promise<void>;
}> {
  const serverUrl = testServerUrl();
  const name = `vigil_test_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? null : inject('testTemplate');
  await onServer(serverUrl, async (client) => {
    // Cloning waits for no one but fails while another session is connected to the template:
    // retry briefly (only the global setup connects to it, and only before the tests start).
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(
          template ? `create database ${name} template ${template}` : `create database ${name}`,
        );
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  return {
    config: { kind: 'postgres', url: withDatabase(serverUrl, name), poolSize: 10 },
    drop: () =>
      onServer(serverUrl, (c) =>
        c.query(`drop database if exists ${name} with (force)`).then(() => undefined),
      ),
  };
}
