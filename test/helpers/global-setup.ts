import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { migrateDatabase, openDatabase } from '../../src/db/client.ts';
import { acquireEmbeddedServer, tempDataDir } from '../../src/db/embedded-server.ts';
import { createJobQueue } from '../../src/jobs/queue.ts';
import { jobRegistry } from '../../src/jobs/registry.ts';

/**
 * One PostgreSQL server per test run: the embedded server in a temporary folder (fsync off: test
 * data need not survive a power cut), or the server of TEST_DATABASE_URL. One migrated template
 * database (schema and pg-boss tables) that each test app's database is cloned from.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TEST_DATABASE_URL;
  let release = async () => {};
  let serverUrl: string;
  if (external) {
    serverUrl = external;
  } else {
    const dataDir = tempDataDir('vigil-test-pg-');
    const server = await acquireEmbeddedServer({
      dataDir,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
    });
    serverUrl = server.urlFor('postgres');
    release = async () => {
      await server.release();
      await rm(dataDir, { recursive: true, force: true });
    };
  }
  const template = `vigil_template_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const url = new URL(serverUrl);
  url.pathname = `/${template}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
  try {
    await migrateDatabase(database);
    const queue = createJobQueue({
      database,
      jobs: jobRegistry,
      log: pino({ level: 'silent' }),
      leaseSeconds: 60,
    });
    await queue.start({ supervise: false });
    await queue.stop({ timeoutMs: 0 });
  } finally {
    await database.close();
  }
  project.provide('testServerUrl', serverUrl);
  project.provide('testTemplate', template);
  return async () => {
    await admin.query(`drop database if exists ${template} with (force)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    await release();
  };
}
