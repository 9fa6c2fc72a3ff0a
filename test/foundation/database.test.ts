import { describe, expect, it } from 'vitest';
import {
  migrateDatabase,
  openDatabase,
  PREPARED_STATEMENTS_PER_CONNECTION,
  rowsOf,
} from '../../src/db/client.ts';
import { embeddedSharedBuffersMb, usableMemory } from '../../src/db/embedded-server.ts';
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

describe('session settings', () => {
  it('opens every pooled session without JIT compilation or parallel workers, after the options the address gives', async () => {
    const { config, drop } = await createTestDatabaseConfig({ empty: true });
    if (config.kind !== 'postgres') throw new Error('a test database is a PostgreSQL address');
    const url = new URL(config.url);
    url.searchParams.set('options', '-c application_name=vigil_probe');
    const databases = [
      await openDatabase({ ...config, poolSize: 2 }),
      await openDatabase({ ...config, url: url.toString(), poolSize: 2 }),
    ];
    try {
      for (const [i, database] of databases.entries()) {
        // Two sessions at once: each new connection of the pool starts with the settings.
        const answers = await Promise.all(
          [0, 1].map(() =>
            database.executeSql(
              "select current_setting('jit') as jit, current_setting('max_parallel_workers_per_gather') as workers, current_setting('application_name') as app, pg_backend_pid() as pid, pg_sleep(0.05)",
            ),
          ),
        );
        expect(new Set(answers.map((a) => a.rows[0]?.pid)).size).toBe(2);
        for (const a of answers) {
          expect(a.rows[0]?.jit).toBe('off');
          expect(a.rows[0]?.workers).toBe('0');
          if (i === 1) expect(a.rows[0]?.app).toBe('vigil_probe');
        }
      }
    } finally {
      await Promise.all(databases.map((d) => d.close()));
      await drop();
    }
  });
});

describe('embedded server settings', () => {
  it('gives shared buffers a quarter of the memory, between 128 MB and 1 GB', () => {
    const gb = 1024 ** 3;
    expect(embeddedSharedBuffersMb(256 * 1024 ** 2)).toBe(128);
    expect(embeddedSharedBuffersMb(2 * gb)).toBe(512);
    expect(embeddedSharedBuffersMb(3 * gb)).toBe(768);
    expect(embeddedSharedBuffersMb(64 * gb)).toBe(1024);
  });

  it.skipIf(process.env.TEST_DATABASE_URL)('starts the embedded server with them', async () => {
    const { config, drop } = await createTestDatabaseConfig({ empty: true });
    const database = await openDatabase({ ...config, poolSize: 1 });
    try {
      const { rows } = await database.executeSql(
        "select setting::bigint * 8 / 1024 as mb from pg_settings where name = 'shared_buffers'",
      );
      expect(Number(rows[0]?.mb)).toBe(embeddedSharedBuffersMb(usableMemory()));
    } finally {
      await database.close();
      await drop();
    }
  });
});

describe('prepared statements', () => {
  it('prepares each distinct Drizzle statement once per connection, up to the cap, with the same results', async () => {
    const { config, drop } = await createTestDatabaseConfig();
    const database = await openDatabase({ ...config, poolSize: 1 });
    try {
      const { sql } = await import('drizzle-orm');
      const prepared = async () =>
        rowsOf<{ name: string; generic_plans: string; custom_plans: string }>(
          await database.db.execute(
            sql`select name, generic_plans, custom_plans from pg_prepared_statements where name like 'v\_%' and statement like '%vigil_probe%' and statement not like '%pg_prepared_statements%'`,
          ),
        );
      for (let i = 0; i < 8; i++) {
        const rows = rowsOf<{ n: number }>(
          await database.db.execute(sql`select ${i}::int as n, 'vigil_probe' as probe`),
        );
        expect(rows[0]?.n).toBe(i);
      }
      const one = await prepared();
      expect(one).toHaveLength(1);
      expect(Number(one[0]!.generic_plans) + Number(one[0]!.custom_plans)).toBe(8);

      // Texts past the cap run unnamed, and still answer.
      for (let i = 0; i < PREPARED_STATEMENTS_PER_CONNECTION + 20; i++) {
        const rows = rowsOf<{ n: number }>(
          await database.db.execute(sql.raw(`select ${i}::int as n, 'vigil_probe_${i}' as probe`)),
        );
        expect(rows[0]?.n).toBe(i);
      }
      const all = rowsOf<{ n: number }>(
        await database.db.execute(
          sql`select count(*)::int as n from pg_prepared_statements where name like 'v\_%'`,
        ),
      );
      expect(all[0]?.n).toBeLessThanOrEqual(PREPARED_STATEMENTS_PER_CONNECTION);
      expect(all[0]?.n).toBeGreaterThan(PREPARED_STATEMENTS_PER_CONNECTION - 5);

      // Plain-text queries (pg-boss, executeSql) are not prepared.
      await database.executeSql("select 'vigil_plain' as probe");
      const plain = rowsOf<{ n: number }>(
        await database.db.execute(
          sql`select count(*)::int as n from pg_prepared_statements where statement like '%vigil_plain%' and statement not like '%pg_prepared_statements%'`,
        ),
      );
      expect(plain[0]?.n).toBe(0);
    } finally {
      await database.close();
      await drop();
    }
  });
});

describe('afterCommit', () => {
  it("tells of a transaction's notifying changes after its commit, each once; not of rollbacks, reads or other processes", async () => {
    const { config, drop } = await createTestDatabaseConfig();
    const database = await openDatabase(config);
    const other = await openDatabase(config);
    let told: string[] = [];
    const stop = database.afterCommit((table, channel) => {
      told.push(`${channel} ${table}`);
    });
    const take = () => {
      const seen = told;
      told = [];
      return seen;
    };
    try {
      await database.transaction(async (tx) => {
        await tx.executeSql(`select count(*) from users`);
      });
      expect(take()).toEqual([]);
      // Nothing until the commit, then each table and channel once, before `transaction` resolves.
      await database.transaction(async (tx) => {
        await tx.executeSql(`update users set name = name where false`);
        await tx.executeSql(`update users set username = username where false`);
        await tx.executeSql(`update service_keys set name = name where false`);
        expect(told).toEqual([]);
      });
      expect(take().sort()).toEqual(['vigil_credentials service_keys', 'vigil_credentials users']);
      // Tables whose changes notify nobody tell nothing.
      await database.transaction(async (tx) => {
        await tx.executeSql(`update companies set name = name where false`);
      });
      expect(take()).toEqual([]);
      await expect(
        database.transaction(async (tx) => {
          await tx.executeSql(`update users set name = name where false`);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(take()).toEqual([]);
      // Another process's commit is not this process's (it arrives through listen).
      await other.transaction(async (tx) => {
        await tx.executeSql(`update users set name = name where false`);
      });
      expect(take()).toEqual([]);
      // Concurrent transactions on several pooled connections each report their own commit.
      await Promise.all(
        Array.from({ length: 6 }, () =>
          database.transaction(async (tx) => {
            await tx.executeSql(`select pg_sleep(0.05)`);
            await tx.executeSql(`update user_tokens set name = name where false`);
          }),
        ),
      );
      expect(take()).toEqual(Array.from({ length: 6 }, () => 'vigil_credentials user_tokens'));
      stop();
      await database.transaction(async (tx) => {
        await tx.executeSql(`update users set name = name where false`);
      });
      expect(take()).toEqual([]);
    } finally {
      await other.close();
      await database.close();
      await drop();
    }
  });
});
