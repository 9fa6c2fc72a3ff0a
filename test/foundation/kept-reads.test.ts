import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/auth/actor.ts';
import { ALL_FINDINGS_DERIVED_TABLES } from '../../src/platform/findings/findings-listing.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  buildComment,
  buildCompany,
  buildFinding,
  buildLabel,
  buildRepository,
  buildServiceKey,
  buildUser,
  fileFinding,
  grantCredits,
  type TestUser,
} from '../helpers/factories.ts';
import { getAs, settleAll, settleReads, silently } from '../helpers/replicas.ts';
import { postBankScan } from '../helpers/scan-helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * All-findings, reports and audit log pages and scan statuses are kept per caller on each replica
 * (from their second request) and forgotten when a table they read changes (kept-reads.ts,
 * migration 0019): two replicas on one database.
 */
let b: TestApp;
const a = sharedTestApp();

beforeAll(async () => {
  b = await createTestApp({ shareDatabaseWith: a });
  await waitFor(
    () => a.container.keptPages.allFindings.enabled && b.container.keptPages.allFindings.enabled,
    {
      what: 'listeners',
      timeoutMs: 10_000,
    },
  );
});
afterAll(async () => {
  await b?.close();
});

const silentlyOnA = (sql: string, values: unknown[]) => silently(a, sql, values);

const settle = () => settleAll(a, b);

async function reviewerOf(repositoryId: string): Promise<TestUser> {
  const reviewer = await buildUser(a);
  await addMember(a, repositoryId, reviewer.id, 'reviewer');
  return reviewer;
}

async function titles(t: TestApp, user: TestUser, query = ''): Promise<string[]> {
  const res = await getAs(t, `/api/v0/repositories/all-findings${query}`, user.token);
  expect(res.statusCode).toBe(200);
  return (res.json().findings as Array<{ title: string }>).map((f) => f.title).sort();
}

describe('kept all-findings pages', () => {
  it('answers a repeated request from memory until told of a change, at once on the replica that committed it', async () => {
    const repository = await buildRepository(a);
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    await buildFinding(a, { repositoryId: repository.id, title: 'first' });
    await settle();
    // Kept from the second request on.
    await getAs(b, '/api/v0/repositories/all-findings', judge.token);
    const first = await getAs(b, '/api/v0/repositories/all-findings', judge.token);
    const hits = b.container.keptPages.allFindings.hits;
    const second = await getAs(b, '/api/v0/repositories/all-findings', judge.token);
    expect(second.body).toBe(first.body);
    expect(b.container.keptPages.allFindings.hits).toBe(hits + 1);
    const metrics = await b.app.metricsRegistry.metrics();
    const kept = /vigil_kept_page_reads\{read="allFindings",answer="kept"\} (\d+)/.exec(metrics);
    expect(Number(kept?.[1])).toBe(hits + 1);

    expect(await titles(a, judge)).toEqual(['first']);
    expect(await titles(a, judge)).toEqual(['first']);
    // Without a notification the kept page stays: the proof that it is kept.
    // Without a notification the kept page stays, even on the replica that committed the change:
    // the proof that it is kept.
    await silentlyOnA(`update findings set title = 'renamed' where repository_id = $1`, [repository.id]);
    expect(await titles(b, judge)).toEqual(['first']);
    expect(await titles(a, judge)).toEqual(['first']);
    // A change that notifies: the replica that committed it has forgotten the page when the
    // statement answers; the other when the notification arrives.
    await a.container.database.executeSql(`update findings set title = 'again' where repository_id = $1`, [
      repository.id,
    ]);
    expect(await titles(a, judge)).toEqual(['again']);
    await waitFor(async () => (await titles(b, judge)).join() === 'again', {
      what: 'b to forget the page',
      timeoutMs: 10_000,
    });
  });

  it('keeps its pages and the credentials they are kept for across a write of its own process to tables the read does not read', async () => {
    const company = await buildCompany(a);
    const repository = await buildRepository(a);
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    await buildFinding(a, { repositoryId: repository.id, title: 'kept' });
    await settle();
    await getAs(a, '/api/v0/repositories/all-findings', judge.token);
    const first = await getAs(a, '/api/v0/repositories/all-findings', judge.token);
    // A write request on the same process that changes the credit account and the audit log.
    await grantCredits(a, company.id, 5);
    // The page is answered from memory, which also takes the same resolved credential: neither
    // the page nor the judge's credential was forgotten.
    const hits = a.container.keptPages.allFindings.hits;
    const again = await getAs(a, '/api/v0/repositories/all-findings', judge.token);
    expect(again.body).toBe(first.body);
    expect(a.container.keptPages.allFindings.hits).toBe(hits + 1);
    // A write of a table it reads is seen by the next request.
    await fileFinding(a, (await reviewerOf(repository.id)).token, repository.id, { title: 'filed' });
    expect(await titles(a, judge)).toEqual(['filed', 'kept']);
  });

  it("forgets only the reader's pages when a user reads a finding's comments, on both replicas", async () => {
    const repository = await buildRepository(a);
    const reader = await buildUser(a);
    const other = await buildUser(a);
    await addMember(a, repository.id, reader.id, 'judge');
    await addMember(a, repository.id, other.id, 'judge');
    const finding = await buildFinding(a, { repositoryId: repository.id, title: 'discussed' });
    await buildComment(a, { findingId: finding.id });
    await settle();
    const unread = async (t: TestApp, user: TestUser) => {
      const res = await getAs(t, '/api/v0/repositories/all-findings', user.token);
      expect(res.statusCode).toBe(200);
      return (res.json().findings as Array<{ hasUnreadComments: boolean }>).map((f) => f.hasUnreadComments);
    };
    for (const t of [a, b]) {
      for (const user of [reader, other]) {
        expect(await unread(t, user)).toEqual([true]);
        expect(await unread(t, user)).toEqual([true]);
      }
    }
    // The reader opens the comments through a: its read marker changes, nobody else's.
    const opened = await getAs(
      a,
      `/api/v0/repositories/${repository.id}/findings/${finding.id}/comments`,
      reader.token,
    );
    expect(opened.statusCode).toBe(200);
    // On a at once; on b when the notification arrives (the reader's page shows it).
    await waitFor(async () => (await unread(b, reader)).join() === 'false', {
      what: "b to forget the reader's page",
      timeoutMs: 10_000,
    });
    for (const t of [a, b]) {
      const hits = t.container.keptPages.allFindings.hits;
      expect(await unread(t, other)).toEqual([true]);
      expect(t.container.keptPages.allFindings.hits).toBe(hits + 1);
      if (t === a) expect(await unread(t, reader)).toEqual([false]);
    }
  });

  it("keeps a page across changes of other companies' findings, and forgets it on a change in a company its caller sees", async () => {
    const own = await buildRepository(a);
    const joined = await buildRepository(a); // another company, where the judge is a member too
    const elsewhere = await buildRepository(a); // a company the judge has nothing to do with
    const judge = await buildUser(a);
    await addMember(a, own.id, judge.id, 'judge');
    await addMember(a, joined.id, judge.id, 'judge');
    await buildFinding(a, { repositoryId: own.id, title: 'own' });
    const other = await buildFinding(a, { repositoryId: elsewhere.id, title: 'elsewhere' });
    const author = await buildUser(a);
    await settle();
    for (const t of [a, b]) {
      expect(await titles(t, judge)).toEqual(['own']);
      expect(await titles(t, judge)).toEqual(['own']);
    }
    // Findings, their comments and labels in a company the judge cannot see: kept on both replicas.
    await buildFinding(a, { repositoryId: elsewhere.id, title: 'elsewhere again' });
    await buildComment(a, { findingId: other.id, authorId: author.id });
    await a.container.database.executeSql(`update findings set title = 'renamed' where id = $1`, [other.id]);
    await silentlyOnA(`update findings set title = 'unseen' where repository_id = $1`, [own.id]);
    await settleReads(a, b);
    for (const t of [a, b]) {
      const hits = t.container.keptPages.allFindings.hits;
      expect(await titles(t, judge)).toEqual(['own']);
      expect(t.container.keptPages.allFindings.hits).toBe(hits + 1);
    }
    // A finding in the other company the judge is a member of: forgotten at once on a, then on b.
    await buildFinding(a, { repositoryId: joined.id, title: 'joined' });
    expect(await titles(a, judge)).toEqual(['joined', 'unseen']);
    await waitFor(async () => (await titles(b, judge)).join() === 'joined,unseen', {
      what: 'b to forget the page',
      timeoutMs: 10_000,
    });
  });

  it('shows a write at once on the replica that made it, and on the other when the notification arrives', async () => {
    const repository = await buildRepository(a);
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    const reviewer = await buildUser(a);
    await addMember(a, repository.id, reviewer.id, 'reviewer');
    expect(await titles(a, judge)).toEqual([]);
    expect(await titles(b, judge)).toEqual([]);
    await fileFinding(a, reviewer.token, repository.id, { title: 'filed' });
    expect(await titles(a, judge)).toEqual(['filed']);
    await waitFor(async () => (await titles(b, judge)).join() === 'filed', {
      what: 'b to show the new finding',
      timeoutMs: 10_000,
    });
  });

  it('keeps pages per caller: another user with other access never gets them', async () => {
    const repository = await buildRepository(a);
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    const reviewer = await buildUser(a);
    await addMember(a, repository.id, reviewer.id, 'reviewer');
    await buildFinding(a, { repositoryId: repository.id, title: 'by someone else' });
    await settle();
    expect(await titles(b, judge)).toEqual(['by someone else']);
    expect(await titles(b, judge)).toEqual(['by someone else']);
    // A reviewer sees only their own findings in this repository.
    expect(await titles(b, reviewer)).toEqual([]);
  });

  it('follows label, comment and read-marker changes', async () => {
    const repository = await buildRepository(a);
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    const finding = await buildFinding(a, { repositoryId: repository.id });
    await settle();
    const page = async () => {
      const res = await getAs(b, '/api/v0/repositories/all-findings', judge.token);
      expect(res.statusCode).toBe(200);
      return res.json().findings[0] as { labels: Array<{ name: string }>; unreadCommentsNumber: number };
    };
    expect((await page()).labels).toEqual([]);
    const label = await buildLabel(a, { repositoryId: repository.id, name: 'urgent' });
    await a.container.database.executeSql(
      'insert into finding_labels (finding_id, label_id) values ($1, $2)',
      [finding.id, label.id],
    );
    await waitFor(async () => (await page()).labels.map((l) => l.name).join() === 'urgent', {
      what: 'the label',
      timeoutMs: 10_000,
    });
    await buildComment(a, { findingId: finding.id });
    await waitFor(async () => (await page()).unreadCommentsNumber === 1, {
      what: 'the unread comment',
      timeoutMs: 10_000,
    });
    const read = await a.app.inject({
      method: 'PUT',
      url: `/api/v0/repositories/${repository.id}/findings/${finding.number}/read`,
      headers: { authorization: `Bearer ${judge.token}` },
    });
    expect(read.statusCode).toBeLessThan(300);
    await waitFor(async () => (await page()).unreadCommentsNumber === 0, {
      what: 'the read marker',
      timeoutMs: 10_000,
    });
  });
});

describe('kept reports and audit log pages', () => {
  it('shows a new audit entry on the other replica when the notification arrives', async () => {
    const company = await buildCompany(a);
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const member = await buildUser(a, { companyId: company.id, companyRole: 'member' });
    await settle();
    const entries = async () => {
      const res = await getAs(b, `/api/v0/companies/${company.id}/audit-log`, manager.token);
      expect(res.statusCode).toBe(200);
      return (res.json().items as unknown[]).length;
    };
    const before = await entries();
    expect(await entries()).toBe(before);
    const disable = await a.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${company.id}/users/${member.id}/disable`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(disable.statusCode).toBe(200);
    await waitFor(async () => (await entries()) === before + 1, {
      what: 'the audit entry',
      timeoutMs: 10_000,
    });
  });

  it('shows a renamed report in the reports list of the other replica', async () => {
    const company = await buildCompany(a);
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const repository = await buildRepository(a, { companyId: company.id, finishedAt: new Date() });
    await settle();
    const created = await a.app.inject({
      method: 'POST',
      url: '/api/v0/reports',
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { repositoryId: repository.id, projectTitle: 'Engagement report' },
    });
    expect(created.statusCode).toBe(201);
    const titlesOfReports = async () => {
      const res = await getAs(b, '/api/v0/reports', manager.token);
      expect(res.statusCode).toBe(200);
      return (res.json().reports as Array<{ projectTitle: string }>).map((r) => r.projectTitle);
    };
    await waitFor(async () => (await titlesOfReports()).includes('Engagement report'), {
      what: 'the report',
      timeoutMs: 10_000,
    });
    await titlesOfReports(); // asked for twice at least: kept
    await silentlyOnA('update reports set project_title = $2 where repository_id = $1', [
      repository.id,
      'Silent',
    ]);
    expect(await titlesOfReports()).toContain('Engagement report');
    await a.container.database.executeSql('update reports set project_title = $2 where repository_id = $1', [
      repository.id,
      'Renamed',
    ]);
    await waitFor(async () => (await titlesOfReports()).includes('Renamed'), {
      what: 'the rename',
      timeoutMs: 10_000,
    });
  });
});

describe('kept pages beside the job workers', () => {
  it('stay kept while the job workers of the same process poll and settle jobs', async () => {
    // `vigil start` runs the API and the job workers in one process: the job queue's own
    // statements (pg-boss polling every second, job bookkeeping) change no table a kept read
    // depends on, so they must not forget the pages.
    const w = await createTestApp({ worker: true });
    const queueStatements: string[] = [];
    const query = pg.Pool.prototype.query;
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | null)?.text;
      // Statements of the queue that are not a plain select (the poll is `with next as (…) update`).
      if (typeof text === 'string' && /pgboss\./i.test(text) && !/^\s*select\b/i.test(text)) {
        queueStatements.push(text);
      }
      return Reflect.apply(query, this, args);
    } as typeof query;
    try {
      await waitFor(() => w.container.keptPages.allFindings.enabled, { what: 'the listener' });
      const repository = await buildRepository(w);
      const judge = await buildUser(w);
      await addMember(w, repository.id, judge.id, 'judge');
      await buildFinding(w, { repositoryId: repository.id, title: 'kept beside the workers' });
      await settleAll(w);
      await getAs(w, '/api/v0/repositories/all-findings', judge.token);
      const first = await getAs(w, '/api/v0/repositories/all-findings', judge.token);
      const seen = queueStatements.length;
      await waitFor(() => queueStatements.length >= seen + 3, { what: 'three polls of the job queue' });
      const hits = w.container.keptPages.allFindings.hits;
      const again = await getAs(w, '/api/v0/repositories/all-findings', judge.token);
      expect(again.body).toBe(first.body);
      expect(w.container.keptPages.allFindings.hits).toBe(hits + 1);
    } finally {
      pg.Pool.prototype.query = query;
      await w.close();
    }
  });
});

describe('kept scan statuses', () => {
  it('answers a polled scan from memory until a change it is told of', async () => {
    const { key, scanId } = await postBankScan(a);
    await settle();
    const status = async (t: TestApp) => {
      const res = await getAs(t, `/api/scanner/v1/scans/${scanId}`, key);
      expect(res.statusCode).toBe(200);
      return res.json().status as string;
    };
    for (const t of [a, b]) for (let i = 0; i < 3; i++) expect(await status(t)).toBe('preparing');
    expect(b.container.keptPages.scanStatus.hits).toBeGreaterThan(0);
    // Without a notification the kept answer stays, on both replicas.
    await silentlyOnA(`update scans set status = 'queued' where id = $1`, [scanId]);
    expect(await status(b)).toBe('preparing');
    expect(await status(a)).toBe('preparing');
    await a.container.database.executeSql(`update scans set status = 'queued' where id = $1`, [scanId]);
    expect(await status(a)).toBe('queued');
    await waitFor(async () => (await status(b)) === 'queued', {
      what: 'b to see the change',
      timeoutMs: 10_000,
    });
  });
});

/** The tables in the plan of a statement (`EXPLAIN` of it with its values). */
async function tablesOfPlan(t: TestApp, text: string, values: unknown[]): Promise<string[]> {
  const { rows } = await t.container.database.executeSql(`explain (format json) ${text}`, values);
  const found = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) visit(item);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'Relation Name' && typeof value === 'string') found.add(value);
        else visit(value);
      }
    }
  };
  visit((rows[0] as Record<string, unknown>)['QUERY PLAN']);
  return [...found];
}

/** Every statement `run` sends through a pool, with its values. */
async function statementsOf(
  run: () => Promise<unknown>,
): Promise<Array<{ text: string; values: unknown[] }>> {
  const recorded: Array<{ text: string; values: unknown[] }> = [];
  const original = pg.Pool.prototype.query;
  const record = function (this: pg.Pool, config: unknown, ...rest: unknown[]) {
    const c = config as { text?: unknown; values?: unknown[] } | string;
    // Values come in the config or as the second argument (as Drizzle passes them).
    const given = (rest[0] as unknown[] | undefined) ?? [];
    if (typeof c === 'string') recorded.push({ text: c, values: given });
    else if (c && typeof c.text === 'string') recorded.push({ text: c.text, values: c.values ?? given });
    return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
  };
  pg.Pool.prototype.query = record as typeof pg.Pool.prototype.query;
  try {
    await run();
  } finally {
    pg.Pool.prototype.query = original;
  }
  return recorded;
}

describe('kept credit balances', () => {
  it('answers from the kept account, with the time of each answer, until a change it is told of', async () => {
    const company = await buildCompany(a);
    const key = (await buildServiceKey(a, { companyId: company.id })).key;
    await grantCredits(a, company.id, 10);
    await settle();
    const balances = async (t: TestApp) => {
      const res = await getAs(t, '/api/scanner/v1/credits', key);
      expect(res.statusCode).toBe(200);
      return res.json() as { purchased: number; remaining: number; asOf: string };
    };
    for (const t of [a, b]) for (let i = 0; i < 3; i++) expect((await balances(t)).purchased).toBe(10);
    const hits = b.container.keptPages.creditBalances.hits;
    const askedAt = new Date().toISOString();
    const kept = await balances(b);
    expect(b.container.keptPages.creditBalances.hits).toBe(hits + 1);
    // The account row is kept, the answer is not: its asOf is the time it was made.
    expect(kept.asOf >= askedAt).toBe(true);
    // Without a notification both replicas keep the account: the proof that it is kept.
    await silentlyOnA('update credit_accounts set purchased = purchased + 5 where company_id = $1', [
      company.id,
    ]);
    expect((await balances(b)).purchased).toBe(10);
    expect((await balances(a)).purchased).toBe(10);
    // A change made with its notification: the replica that committed it reads it at once, the
    // other when the notification arrives.
    await grantCredits(a, company.id, 1);
    expect((await balances(a)).purchased).toBe(16);
    await settle();
    expect(await balances(b)).toMatchObject({ purchased: 16, remaining: 16 });
  });
});

describe('kept credit balances of several companies', () => {
  it("keeps a company's balance across another company's credit changes, and forgets it on its own", async () => {
    const own = await buildCompany(a);
    const other = await buildCompany(a);
    const key = (await buildServiceKey(a, { companyId: own.id })).key;
    await grantCredits(a, own.id, 10);
    await grantCredits(a, other.id, 10);
    await settle();
    const purchased = async (t: TestApp) => {
      const res = await getAs(t, '/api/scanner/v1/credits', key);
      expect(res.statusCode).toBe(200);
      return (res.json() as { purchased: number }).purchased;
    };
    for (const t of [a, b]) for (let i = 0; i < 2; i++) expect(await purchased(t)).toBe(10);
    // A grant to another company, and a silent change of the own account beside it: the kept
    // balance stays on both replicas (the silent change shows it was not read again).
    await silentlyOnA('update credit_accounts set purchased = purchased + 5 where company_id = $1', [own.id]);
    await grantCredits(a, other.id, 3);
    await settleReads(a, b);
    for (const t of [a, b]) {
      const hits = t.container.keptPages.creditBalances.hits;
      expect(await purchased(t)).toBe(10);
      expect(t.container.keptPages.creditBalances.hits).toBe(hits + 1);
      expect(t.container.keptPages.creditBalances.recentChanges).toContain(`credit_accounts:c:${other.id}`);
    }
    // A grant to the own company: read again at once on a, and on b when the notification arrives.
    await grantCredits(a, own.id, 1);
    expect(await purchased(a)).toBe(16);
    await waitFor(async () => (await purchased(b)) === 16, {
      what: 'b to forget the balance',
      timeoutMs: 10_000,
    });
  });
});

describe('what the kept pages depend on', () => {
  it('names every table the plans of their statements read, and each of those tables notifies', async () => {
    const company = await buildCompany(a);
    const repository = await buildRepository(a, { companyId: company.id, finishedAt: new Date() });
    const manager = await buildUser(a, { companyId: company.id, companyRole: 'manager' });
    const judge = await buildUser(a);
    await addMember(a, repository.id, judge.id, 'judge');
    const reviewer = await buildUser(a);
    await addMember(a, repository.id, reviewer.id, 'reviewer');
    const root = await buildFinding(a, {
      repositoryId: repository.id,
      createdBy: reviewer.id,
      assignedTo: judge.id,
      files: [{ path: 'contracts/Vault.sol', startLine: 1, endLine: 2 }],
    });
    await buildFinding(a, { repositoryId: repository.id, duplicateOf: root.id });
    const label = await buildLabel(a, { repositoryId: repository.id, name: 'triage' });
    await a.container.database.executeSql(
      'insert into finding_labels (finding_id, label_id) values ($1, $2)',
      [root.id, label.id],
    );
    await buildComment(a, { findingId: root.id });
    const report = await a.app.inject({
      method: 'POST',
      url: '/api/v0/reports',
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { repositoryId: repository.id, projectTitle: 'Report' },
    });
    expect(report.statusCode).toBe(201);
    await settle();

    const { services, keptPages } = a.container;
    const auth = services.auth;
    // A copy of an actor is another caller: nothing kept answers for it, so the statements run.
    const fresh = async (token: string): Promise<Actor> => ({ ...(await auth.authenticateUserToken(token)) });
    const findingQueries = [
      {},
      { limit: 20, status: 'new,confirmed', severity: 'medium,high', label: 'triage' },
      { order_by: 'last_comment_desc' as const },
      { order_by: 'reputation_desc' as const, with_unread_comments: true },
      {
        created_by: reviewer.username,
        assigned_to: judge.username,
        q: 'Finding',
        path: 'contracts/Vault.sol',
      },
      { unlabeled: true, duplicates: false, filter_for: 'with_duplicates' as const },
      { s: 'status:new label:triage is:unread' },
    ];
    // The kept bodies of findings are read too; they change with the tables they are made of.
    const allFindingsTables = new Set([...keptPages.allFindings.tables, ...ALL_FINDINGS_DERIVED_TABLES]);
    const reads: Array<{
      name: string;
      tables: ReadonlySet<string>;
      token: string;
      run: (actor: Actor) => Promise<unknown>;
    }> = [];
    for (const token of [judge.token, reviewer.token]) {
      for (const query of findingQueries) {
        reads.push({
          name: `all-findings ${JSON.stringify(query)}`,
          tables: allFindingsTables,
          token,
          run: (actor) => services.findings.listAllFindings(actor, query),
        });
      }
    }
    for (const query of [{}, { q: 'Report', guild: 'none' }]) {
      reads.push({
        name: `reports ${JSON.stringify(query)}`,
        tables: keptPages.reports.tables,
        token: manager.token,
        run: (actor) => services.reports.listReports(actor, query),
      });
    }
    for (const query of [{}, { target_users: [judge.username], performing_users: [manager.username] }]) {
      reads.push({
        name: `audit log ${JSON.stringify(query)}`,
        tables: keptPages.auditLog.tables,
        token: manager.token,
        run: (actor) => services.audit.listAuditLog(actor, company.id, query),
      });
    }

    const serviceKey = (await buildServiceKey(a, { companyId: company.id })).key;
    const serviceActor = await auth.authenticateServiceKey(serviceKey);
    reads.push({
      name: 'getScan',
      tables: keptPages.scanStatus.tables,
      token: '',
      // An unknown scan: the statement runs, then 404.
      run: (actor) =>
        services.scans.getScan(actor as typeof serviceActor, randomUUID()).catch(() => undefined),
    });
    reads.push({
      name: 'getCreditBalances',
      tables: keptPages.creditBalances.tables,
      token: '',
      run: (actor) => services.credits.getBalancesFor(actor as typeof serviceActor),
    });
    const freshFor = async (token: string): Promise<Actor> => (token ? fresh(token) : { ...serviceActor });

    const read = new Set<string>();
    for (const { name, tables, token, run } of reads) {
      const actor = await freshFor(token);
      const statements = await statementsOf(() => run(actor));
      expect(statements.length, name).toBeGreaterThan(0);
      for (const { text, values } of statements) {
        for (const table of await tablesOfPlan(a, text, values)) {
          read.add(table);
          expect(tables.has(table), `${name} reads "${table}"`).toBe(true);
        }
      }
    }
    // The plans covered the statements that matter.
    for (const table of ['findings', 'finding_labels', 'comments', 'reports', 'audit_log', 'scans']) {
      expect(read.has(table), table).toBe(true);
    }

    // Each table's notifying triggers together cover insert, update, delete and truncate
    // (pg_trigger.tgtype bits 4, 16, 8 and 32).
    const { rows } = await a.container.database.executeSql(
      `select c.relname as "table", bit_or(t.tgtype::int & 60)::int as events from pg_trigger t
         join pg_class c on c.oid = t.tgrelid
         join pg_proc p on p.oid = t.tgfoid
        where p.proname in ('vigil_notify_reads', 'vigil_notify_reads_of_user', 'vigil_notify_reads_by_company')
        group by c.relname`,
    );
    const notifying = new Map(rows.map((r) => [r.table as string, r.events as number]));
    for (const pages of Object.values(keptPages)) {
      for (const table of pages.tables) expect(notifying.get(table), `${table} notifies`).toBe(60);
    }
    // Every table whose changes clear kept finding bodies is one the kept pages depend on (and so
    // notifies): a change that clears a body also forgets the pages that hold it.
    const { rows: clearing } = await a.container.database.executeSql(
      `select distinct c.relname as "table" from pg_trigger t
         join pg_class c on c.oid = t.tgrelid
         join pg_proc p on p.oid = t.tgfoid
        where p.proname = 'vigil_finding_bodies_forget'`,
    );
    expect(clearing.length).toBeGreaterThan(5);
    for (const { table } of clearing) {
      expect(keptPages.allFindings.tables.has(table as string), `${table} is a kept page's table`).toBe(true);
    }
  });
});
