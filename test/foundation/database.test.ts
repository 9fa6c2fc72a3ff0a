import { describe, expect, it } from 'vitest';
import {
  migrateDatabase,
  openDatabase,
  PREPARED_STATEMENTS_PER_CONNECTION,
  rowsOf,
} from '../../src/db/client.ts';
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

/**
 * Runs `body` against a new test database opened with `poolSize` connections, and returns the
 * warnings of pg's own queue issued meanwhile: pg queues a query given to a connection that is
 * already executing one, and warns that a later version will not.
 */
async function pgQueueWarningsDuring(
  options: { empty?: boolean },
  poolSize: number,
  body: (database: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>,
): Promise<string[]> {
  const { config, drop } = await createTestDatabaseConfig(options);
  const database = await openDatabase({ ...config, poolSize });
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  try {
    await body(database);
    await new Promise((resolve) => setImmediate(resolve));
    return warnings.filter((w) => w.includes('already executing a query'));
  } finally {
    process.off('warning', onWarning);
    await database.close();
    await drop();
  }
}

describe('queries given to one connection at once', () => {
  it('run one after the other inside a transaction, each with its own answer, without pg queueing them', async () => {
    const warnings = await pgQueueWarningsDuring({}, 2, async (database) => {
      const { sql } = await import('drizzle-orm');
      const answers = await database.transaction(async (tx) =>
        Promise.all(
          Array.from({ length: 12 }, async (_, i) => {
            const rows = rowsOf<{ n: number; at: string }>(
              await tx.db.execute(sql`select ${i}::int as n, clock_timestamp()::text as at, pg_sleep(0.01)`),
            );
            return rows[0]!;
          }),
        ),
      );
      expect(answers.map((a) => a.n)).toEqual(Array.from({ length: 12 }, (_, i) => i));
      // Sent in the order they were given: each started after the one before it.
      const starts = answers.map((a) => a.at);
      expect([...starts].sort()).toEqual(starts);
      // A failing statement fails its own promise only; the chain goes on for the next ones.
      const outcomes = await Promise.allSettled([
        database.db.execute(sql`select 1/0`),
        database.db.execute(sql`select 2::int as n`),
      ]);
      expect(outcomes[0]!.status).toBe('rejected');
      expect(outcomes[1]).toMatchObject({ status: 'fulfilled' });
    });
    expect(warnings).toEqual([]);
  });
});

describe('queries given to a new connection at once', () => {
  it("wait their turn behind its `listen`, through the pool's callbacks, without pg queueing them", async () => {
    // One connection: its `listen` (sent when it opens) and every `pool.query` share it.
    const warnings = await pgQueueWarningsDuring({ empty: true }, 1, async (database) => {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => database.executeSql('select $1::int as n', [i])),
      );
      expect(answers.map((a) => a.rows[0]?.n)).toEqual([0, 1, 2, 3, 4, 5]);
      // A failing one fails its own promise only, through the pool's callback.
      const outcomes = await Promise.allSettled([
        database.executeSql('select 1/0'),
        database.executeSql('select 7 as n'),
      ]);
      expect(outcomes[0]!.status).toBe('rejected');
      expect(outcomes[1]).toMatchObject({ status: 'fulfilled', value: { rows: [{ n: 7 }] } });
    });
    expect(warnings).toEqual([]);
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
