import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, migrateDatabase, openDatabase } from '../../src/db/client.ts';
import { companies, reports, users } from '../../src/db/schema/index.ts';
import { isoMillis, plainRows } from '../../src/db/sql.ts';
import { createTestDatabaseConfig } from '../helpers/database.ts';

/** `plainRows` returns what Drizzle would, without Drizzle's mapping of each row. */
let database: Database;
let drop: () => Promise<void>;
beforeAll(async () => {
  const created = await createTestDatabaseConfig();
  drop = created.drop;
  database = await openDatabase({ ...created.config, poolSize: 2 });
  await migrateDatabase(database);
  const { db } = database;
  const [company] = await db.insert(companies).values({ handle: 'plain-co', name: 'Plain' }).returning();
  await db.insert(users).values([
    {
      username: 'plain_a',
      name: 'A "quoted" name',
      email: null,
      disabledAt: new Date('2026-01-02T03:04:05.006789Z'),
    },
    { username: 'plain_b', name: 'B', email: 'b@example.com' },
  ]);
  await db.insert(reports).values({
    companyId: company!.id,
    projectTitle: 'Plain report',
    clientName: 'Client',
    repositoryLinks: ['https://example.com/a', 'with,comma "and quotes"'],
    snapshot: { teamMembers: [], findingStats: [], findings: [] },
    publishedAt: new Date('2026-03-04T05:06:07.891Z'),
  });
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

describe('plainRows', () => {
  it('returns the rows Drizzle returns for text, uuid, boolean, jsonb, array and formatted timestamp fields', async () => {
    const { db } = database;
    const fields = {
      id: users.id,
      name: users.name,
      email: users.email,
      isBot: users.isBot,
      badges: users.badges,
      skills: users.skills,
      disabledAt: isoMillis(users.disabledAt),
    };
    const query = () =>
      db.select(fields).from(users).where(sql`${users.username} like 'plain_%'`).orderBy(asc(users.username));
    const viaDrizzle = await query();
    expect(viaDrizzle).toHaveLength(2);
    expect(await plainRows(db, fields, query())).toEqual(viaDrizzle);
    expect(viaDrizzle[0]!.disabledAt).toBe('2026-01-02T03:04:05.006Z');
    expect(viaDrizzle[1]!.disabledAt).toBeNull();

    const reportFields = {
      id: reports.id,
      handle: companies.handle,
      links: reports.repositoryLinks,
      snapshot: reports.snapshot,
      publishedAt: isoMillis(reports.publishedAt),
    };
    const reportQuery = () =>
      db.select(reportFields).from(reports).innerJoin(companies, eq(companies.id, reports.companyId));
    const reportRows = await plainRows(db, reportFields, reportQuery());
    expect(reportRows).toEqual(await reportQuery());
    expect(reportRows[0]).toMatchObject({
      handle: 'plain-co',
      links: ['https://example.com/a', 'with,comma "and quotes"'],
      snapshot: { teamMembers: [], findingStats: [], findings: [] },
      publishedAt: '2026-03-04T05:06:07.891Z',
    });
  });

  it('fills the placeholders of a query built once', async () => {
    const { db } = database;
    const fields = { username: users.username };
    const query = db
      .select(fields)
      .from(users)
      .where(eq(users.username, sql.placeholder('name')));
    expect(await plainRows(db, fields, query, { name: 'plain_a' })).toEqual([{ username: 'plain_a' }]);
    expect(await plainRows(db, fields, query, { name: 'plain_b' })).toEqual([{ username: 'plain_b' }]);
  });

  it('refuses a field that needs Drizzle mapping (a timestamp as a Date)', async () => {
    const { db } = database;
    const fields = { createdAt: users.createdAt };
    await expect(plainRows(db, fields, db.select(fields).from(users))).rejects.toThrow(/createdAt/);
  });
});
