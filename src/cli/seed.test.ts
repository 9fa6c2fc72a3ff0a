import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabaseConfig } from '../../test/helpers/database.ts';
import { type Config, loadConfig } from '../config.ts';
import { type Database, openDatabase } from '../db/client.ts';
import {
  assetGroups,
  auditLog,
  comments,
  companies,
  findingStatuses,
  findings,
  notifications,
  reports,
  repositories,
  repositoryMembers,
  repositoryRoles,
  scans,
  ssoEnforcementRules,
  users,
} from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import { type DemoSummary, runSeedDemo } from './seed.ts';

let database: Database;
let config: Config;
let dataDir: string;
let drop: () => Promise<void>;
let summary: DemoSummary;
let printed = '';

const log = pino({ level: 'silent' });

/** Row counts of the tables the demo writes, to show that a refused run writes nothing. */
async function counts(): Promise<Record<string, number>> {
  const db = database.db;
  const tables = { companies, users, repositories, findings, comments, reports, scans, auditLog };
  const result: Record<string, number> = {};
  for (const [name, table] of Object.entries(tables)) {
    const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(table);
    result[name] = row?.n ?? 0;
  }
  return result;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'vigil-seed-'));
  const db = await createTestDatabaseConfig();
  drop = db.drop;
  config = {
    ...loadConfig(
      {
        VIGIL_DATA_DIR: dataDir,
        VIGIL_SECRET_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'silent',
      },
      dataDir,
    ),
    database: db.config,
  };
  database = await openDatabase(db.config);
  summary = await runSeedDemo(config, {
    out: (text) => {
      printed += text;
    },
    container: { database, log },
  });
}, 180_000);

afterAll(async () => {
  await database?.close();
  await drop?.();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('vigil seed demo', () => {
  it('creates the bootstrap admin on an empty database and prints its token once', async () => {
    expect(summary.adminCreated).toBe(true);
    expect(summary.adminToken).toMatch(/^vgl_u_/);
    expect(printed.split(summary.adminToken!).length - 1).toBe(1);
    const [admin] = await database.db.select().from(users).where(eq(users.username, 'admin'));
    expect(admin).toBeDefined();
  });

  it('creates the company with managers, members, an SSO rule and an audit trail', async () => {
    const [company] = await database.db.select().from(companies).where(eq(companies.handle, 'acme'));
    expect(company?.name).toBe('Acme Finance');
    expect(summary.company.id).toBe(company?.id);
    const rules = await database.db.select().from(ssoEnforcementRules);
    expect(rules.map((r) => r.domain)).toEqual(['acme.finance']);
    const actions = (await database.db.select({ action: auditLog.action }).from(auditLog)).map(
      (a) => a.action,
    );
    expect(actions).toEqual(
      expect.arrayContaining(['user_invited', 'user_auto_joined', 'company_role_changed']),
    );
  });

  it('gives users every repository role, each with a working token', async () => {
    const roles = await database.db.selectDistinct({ role: repositoryMembers.role }).from(repositoryMembers);
    expect(roles.map((r) => r.role).sort()).toEqual([...repositoryRoles].sort());
    const reviewers = await database.db
      .selectDistinct({ userId: repositoryMembers.userId })
      .from(repositoryMembers)
      .where(eq(repositoryMembers.role, 'reviewer'));
    expect(reviewers.length).toBe(3);
    expect(summary.users.length).toBeGreaterThanOrEqual(8);
    for (const user of summary.users) {
      expect(user.token).toMatch(/^vgl_u_/);
      expect(printed).toContain(user.token);
    }
  });

  it('creates two repositories with asset groups, one public and one finished', async () => {
    const rows = await database.db.select().from(repositories);
    expect(rows).toHaveLength(2);
    expect(rows.filter((r) => r.isPublic)).toHaveLength(1);
    expect(rows.filter((r) => r.finishedAt !== null)).toHaveLength(1);
    for (const row of rows) {
      const groups = await database.db.select().from(assetGroups).where(eq(assetGroups.repositoryId, row.id));
      expect(groups.length, row.name).toBeGreaterThan(0);
    }
  });

  it('files findings in all ten statuses, with comments', async () => {
    const rows = await database.db
      .selectDistinct({ status: findings.status })
      .from(findings)
      .where(sql`${findings.repositoryId} is not null`);
    expect(rows.map((r) => r.status).sort()).toEqual([...findingStatuses].sort());
    const [duplicate] = await database.db.select().from(findings).where(eq(findings.status, 'duplicate'));
    expect(duplicate?.duplicateOf).not.toBeNull();
    const commentRows = await database.db.select().from(comments);
    expect(commentRows.length).toBeGreaterThan(0);
    expect(new Set(commentRows.map((c) => c.visibility)).size).toBeGreaterThan(1);
    // Every commented finding carries the time of its last comment in the column of its visibility.
    const commented = await database.db
      .select()
      .from(findings)
      .where(
        sql`coalesce(${findings.lastCommentAt}, ${findings.lastPrivateCommentAt}, ${findings.lastInternalCommentAt}, ${findings.lastHiddenCommentAt}) is not null`,
      );
    expect(commented.length).toBe(new Set(commentRows.map((c) => c.findingId)).size);
    // Written through the service: threads have replies and pings became notifications.
    expect(commentRows.some((c) => c.parentId !== null)).toBe(true);
    expect((await database.db.select().from(notifications)).length).toBeGreaterThan(0);
  });

  it('publishes a report of the finished repository', async () => {
    const [report] = await database.db.select().from(reports);
    expect(report?.publishedAt).not.toBeNull();
    expect(report?.isPrivate).toBe(false);
    const [finished] = await database.db
      .select()
      .from(repositories)
      .where(eq(repositories.id, report!.repositoryId!));
    expect(finished?.finishedAt).not.toBeNull();
  });

  it('completes a scan of the bundled sample project with findings', async () => {
    const [scan] = await database.db.select().from(scans);
    expect(scan?.status).toBe('completed');
    expect(scan?.findingsCount).toBeGreaterThan(0);
    expect(summary.scan).toMatchObject({ id: scan?.id, status: 'completed' });
    expect(printed).toContain(summary.serviceKey.key);
  });

  it('refuses a second run and changes nothing', async () => {
    const before = await counts();
    let out = '';
    const again = runSeedDemo(config, {
      out: (text) => {
        out += text;
      },
      container: { database, log },
    });
    await expect(again).rejects.toBeInstanceOf(AppError);
    await expect(again).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(out).toBe('');
    expect(await counts()).toEqual(before);
  });
});
