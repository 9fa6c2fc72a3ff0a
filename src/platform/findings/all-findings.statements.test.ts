import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  addMember,
  buildFinding,
  buildLabel,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { loadFindingAccess } from '../../access/access.service.ts';
import type { Db } from '../../db/client.ts';
import * as schema from '../../db/schema/index.ts';
import { findingLabels } from '../../db/schema/index.ts';
import { createCursorCodec } from '../pagination/cursor.ts';
import { FINDING_ORDERS, type FindingOrder } from './findings.schemas.ts';
import { type AllFindingsQuery, listAllFindings } from './findings-listing.ts';

/**
 * The listing's statements are built once per shape and then only filled with values: a request
 * served from a kept statement must send the text a fresh build of the same request would send,
 * and get the same answer; and users whose access has the same shape share one text.
 */
const t = sharedTestApp();
const cursors = createCursorCodec(Buffer.alloc(32, 7));
let pool: pg.Pool;
const sent: string[] = [];
/** The values sent with each text of {@link sent}. */
const sentValues: unknown[][] = [];

beforeAll(() => {
  // The app's own pool knows the server, embedded or not.
  const appPool: pg.Pool = Reflect.get(t.container.database.db, '$client');
  pool = new pg.Pool({ ...appPool.options, max: 2 });
  // As the app's pool does (src/db/client.ts): an idle client whose server ends its connection
  // (the suite's database dropped at teardown) emits 'error', which unheard ends the run.
  pool.on('error', () => {});
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  Reflect.set(pool, 'query', (config: unknown, ...rest: unknown[]) => {
    const text = typeof config === 'string' ? config : (config as { text?: string }).text;
    if (text) {
      sent.push(text);
      sentValues.push((config as { values?: unknown[] }).values ?? []);
    }
    return query(config, ...rest);
  });
});
afterAll(async () => {
  await pool?.end();
});

/** A Drizzle handle of its own: its kept statements start empty. */
const freshDb = (): Db => drizzle({ client: pool, schema });

async function actorOf(token: string) {
  return t.container.services.auth.authenticateUserToken(token);
}

/** The texts one listing sends, and its answer. */
async function run(db: Db, token: string, query: AllFindingsQuery) {
  const access = await loadFindingAccess(db, await actorOf(token));
  sent.length = 0;
  sentValues.length = 0;
  const result = await listAllFindings(db, access, query, cursors);
  return { texts: [...sent], result };
}

/**
 * A company whose repository has 5,001 findings (copies of one, numbered on), analysed: enough that
 * a page's plan depends on how many rows the planner expects, as it does over a large database.
 */
async function companyWithManyFindings() {
  const team = await buildRepositoryTeam(t);
  const model = await buildFinding(t, { repositoryId: team.repository.id, title: 'Many' });
  const database = t.container.database;
  const { rows: columns } = await database.executeSql(
    `select string_agg(quote_ident(column_name), ', ') as list from information_schema.columns
      where table_schema = current_schema() and table_name = 'findings' and column_name not in ('id', 'number')`,
  );
  const list = columns[0]!.list as string;
  await database.executeSql(
    `insert into findings (id, number, ${list}) select gen_random_uuid(), number + g, ${list}
      from findings, generate_series(1, 5000) g where id = $1`,
    [model.id],
  );
  await database.executeSql('analyze findings');
  return team;
}

describe('GET /api/v0/repositories/all-findings statements', () => {
  it('sends from a kept statement the text a fresh build sends, for every filter, order and cursor', async () => {
    const team = await buildRepositoryTeam(t);
    const second = await buildRepository(t, { companyId: team.company.id, name: 'second-repo' });
    const label = await buildLabel(t, { repositoryId: team.repository.id, name: 'stmt-label' });
    const hidden = await buildLabel(t, {
      repositoryId: team.repository.id,
      name: 'stmt-hidden',
      reviewerRead: false,
    });
    const findings = [];
    for (let i = 0; i < 4; i++) {
      findings.push(
        await buildFinding(t, {
          repositoryId: i % 2 ? second.id : team.repository.id,
          title: `Statement ${i}`,
          createdBy: i % 2 ? team.reviewer.id : team.otherReviewer.id,
          severity: i % 2 ? 'high' : 'low',
          status: i % 3 ? 'confirmed' : 'new',
        }),
      );
    }
    await t.container.database.db.insert(findingLabels).values([
      { findingId: findings[0]!.id, labelId: label.id },
      { findingId: findings[1]!.id, labelId: hidden.id },
    ]);
    // One user in two repositories (an `= any` of two), one in one (an equality).
    const multi = await buildUser(t);
    await addMember(t, team.repository.id, multi.id, 'reviewer');
    await addMember(t, second.id, multi.id, 'judge');
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const users = [team.companyUser, team.reviewer, team.judge, multi, reader];

    const queries: AllFindingsQuery[] = [
      {},
      { limit: 0 },
      { limit: 2 },
      { status: 'confirmed' },
      { status: 'confirmed,new', severity: 'high,critical', label: 'stmt-label' },
      { label: 'stmt-label,stmt-hidden' },
      { unlabeled: true },
      { duplicates: false, filter_for: 'client_recommended' },
      { filter_for: 'with_duplicates' },
      { filter_for: 'require_review' },
      { created_by: team.reviewer.username, assigned_to: team.judge.username },
      { q: '3' },
      { q: 'statement' },
      { path: 'contracts/A.sol' },
      { repositories: [team.repository.id] },
      { repositories: [team.repository.id, second.id], role: 'judge' },
      { role: 'client' },
      { role: 'reviewer' },
      { with_unread_comments: true },
      { with_unread_comments: false },
      { s: `is:unread status:confirmed severity:high label:stmt-label repository:second-repo #2 words` },
      { s: `repository:${second.id} repository:second-repo` },
      {
        s: `created_by:${team.reviewer.username} assigned_to:${team.judge.username} path:x.sol is:duplicate`,
      },
      ...FINDING_ORDERS.map((order_by) => ({ order_by, limit: 1 })),
    ];
    const kept = freshDb();
    const texts = new Map<string, string[]>();
    for (const user of users) {
      for (const base of queries) {
        // The first page, then the page after it (a keyset cursor), where there is one.
        let query: AllFindingsQuery = base;
        for (let page = 0; page < 2; page++) {
          const cached = await run(kept, user.token, query);
          const fresh = await run(freshDb(), user.token, query);
          expect(cached.texts, JSON.stringify({ user: user.username, query })).toEqual(fresh.texts);
          expect(cached.result).toEqual(fresh.result);
          texts.set(`${user.username} ${JSON.stringify(query)}`, cached.texts);
          if (!cached.result.nextValue) break;
          query = { ...base, next: cached.result.nextValue };
        }
      }
    }
    // Two company users of two companies: different values, one text.
    const other = await buildRepositoryTeam(t);
    await buildFinding(t, { repositoryId: other.repository.id });
    const otherTexts = (await run(kept, other.companyUser.token, {})).texts;
    expect(otherTexts).toEqual(texts.get(`${team.companyUser.username} {}`));
    expect(otherTexts.some((text) => text.includes(team.company.id))).toBe(false);
  });

  it('plans a page after a cursor once per connection: after five executions PostgreSQL keeps its generic plan', async () => {
    const team = await companyWithManyFindings();
    const actor = await actorOf(team.companyUser.token);
    // One transaction: one connection, whose prepared statements the view lists.
    const counts = await t.container.database.transaction(async (tx) => {
      const access = await loadFindingAccess(tx.db, actor);
      /** Pages of one finding after the first, each from the cursor of the one before. */
      const walk = async (pages: number) => {
        let next = (await listAllFindings(tx.db, access, { limit: 1 }, cursors)).nextValue;
        for (let i = 0; i < pages; i++) {
          const page = await listAllFindings(tx.db, access, { limit: 1, ...(next ? { next } : {}) }, cursors);
          expect(page.findings).toHaveLength(1);
          next = page.nextValue;
        }
        const { rows } = await tx.executeSql(
          `select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
            where statement like '%("findings"."number", "findings"."id") >%'`,
        );
        return rows as Array<{ generic: number; custom: number }>;
      };
      const settled = await walk(6);
      return { settled, after: await walk(4) };
    });
    expect(counts.settled).toHaveLength(1);
    expect(counts.settled[0]!.custom).toBeLessThanOrEqual(5);
    // Every later page reuses the generic plan: none is planned again.
    expect(counts.after).toEqual([{ ...counts.settled[0]!, generic: counts.settled[0]!.generic + 4 }]);
  });

  it('probes each finding of the scope for a label under unlabeled, never hashing every label assignment', async () => {
    const team = await companyWithManyFindings();
    const label = await buildLabel(t, { repositoryId: team.repository.id, name: 'triaged' });
    await t.container.database.executeSql(
      `insert into finding_labels (finding_id, label_id)
        select id, $2 from findings where repository_id = $1 and number % 3 = 0`,
      [team.repository.id, label.id],
    );
    await t.container.database.executeSql('analyze finding_labels');
    const db = freshDb();
    const access = await loadFindingAccess(db, await actorOf(team.companyUser.token));
    sent.length = 0;
    sentValues.length = 0;
    const page = await listAllFindings(db, access, { limit: 20, unlabeled: true }, cursors);
    expect(page.findings.length).toBe(20);
    expect(page.filteredTotal).toBe(3334);
    const statements = sent
      .map((text, i) => [text, sentValues[i]] as const)
      .filter(([text]) => text.includes('finding_labels') && !text.includes('"body"'));
    expect(statements.length).toBeGreaterThan(0);
    for (const [text, values] of statements) {
      const { rows } = await t.container.database.executeSql(`explain ${text}`, values);
      const plan = rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      expect(plan).not.toMatch(/Anti Join|Seq Scan on finding_labels/);
    }
  });

  it('reads no finding for require_review with a status filter that shares none of its statuses', async () => {
    const team = await companyWithManyFindings();
    const db = freshDb();
    const access = await loadFindingAccess(db, await actorOf(team.companyUser.token));
    sent.length = 0;
    sentValues.length = 0;
    const query: AllFindingsQuery = { filter_for: 'require_review', status: 'fixed,confirmed' };
    const page = await listAllFindings(db, access, query, cursors);
    expect(page).toMatchObject({ findings: [], filteredTotal: 0, nextValue: null });
    const at = sent.findIndex((text) => text.includes(' order by '));
    expect(at, sent.join('\n')).toBeGreaterThanOrEqual(0);
    const { rows } = await t.container.database.executeSql(`explain ${sent[at]}`, sentValues[at]);
    const plan = rows.map((r) => r['QUERY PLAN'] as string).join('\n');
    // The condition is false before any row is read: no scan of the findings runs.
    expect(plan).toMatch(/One-Time Filter: false/);
  });

  /**
   * Each order with the text its keyset condition starts with and the index a page must read: a
   * company user's (the company's findings) and a judge's (the repository's). The findings have
   * authors of several reputations and names, and one without.
   */
  const ORDER_INDEXES: Array<[FindingOrder, string, string, Array<'company' | 'repository'>]> = [
    ['number_desc', '("findings"."number", "findings"."id") <', 'number', ['repository']],
    ['created_at_desc', '("findings"."created_at", "findings"."id") <', 'created', ['company', 'repository']],
    [
      'last_updated_at_asc',
      '("findings"."last_updated_at", "findings"."id") >',
      'updated',
      ['company', 'repository'],
    ],
    ['status_asc', '(array_position(', 'status_rank', ['company', 'repository']],
    ['status_desc', '(array_position(', 'status_rank', ['company', 'repository']],
    ['severity_asc', '(array_position(', 'severity_rank', ['company', 'repository']],
    ['severity_desc', '(array_position(', 'severity_rank', ['company', 'repository']],
    [
      'reputation_asc',
      '(coalesce("findings"."author_reputation"',
      'reputation_asc',
      ['company', 'repository'],
    ],
    [
      'reputation_desc',
      '(coalesce("findings"."author_reputation"',
      'reputation_desc',
      ['company', 'repository'],
    ],
    ['username_asc', '((coalesce("findings"."author_name"', 'author_name_asc', ['company', 'repository']],
    ['username_desc', '((coalesce("findings"."author_name"', 'author_name_desc', ['company', 'repository']],
    ['reward_asc', '(coalesce("findings"."reward"', 'reward_asc', ['company', 'repository']],
    ['reward_desc', '(coalesce("findings"."reward"', 'reward_desc', ['company', 'repository']],
  ];
  it.each(
    ORDER_INDEXES.flatMap(([order, keyset, index, scopes]) =>
      scopes.map((scope) => [scope, order, keyset, `findings_visible_${scope}_${index}_idx`] as const),
    ),
  )(
    "reads a %s's page by %s in its index, not by sorting the scope's findings",
    async (scope, order, keyset, index) => {
      const team = await companyWithManyFindings();
      const authors = [team.reviewer, team.otherReviewer, team.judge];
      for (const [i, author] of authors.entries()) {
        await t.container.database.executeSql('update users set reputation = $2 where id = $1', [
          author.id,
          (i + 1) * 7,
        ]);
      }
      // Authors spread over the copies (one in five without), statuses, severities and rewards too.
      await t.container.database.executeSql(
        `update findings set created_by = (case when number % 5 = 4 then null else ($2::uuid[])[number % 5 % 3 + 1] end),
            status = ($3::text[])[number % 4 + 1], severity = ($4::text[])[number % 3 + 1],
            reward = case when number % 4 = 0 then null else number % 17 * 10 end
          where repository_id = $1`,
        [
          team.repository.id,
          authors.map((a) => a.id),
          ['new', 'confirmed', 'fixed', 'disputed'],
          ['low', 'high', 'critical'],
        ],
      );
      await t.container.database.executeSql('analyze findings');
      const db = freshDb();
      const reader = scope === 'company' ? team.companyUser : team.judge;
      const access = await loadFindingAccess(db, await actorOf(reader.token));
      const first = await listAllFindings(db, access, { limit: 20, order_by: order }, cursors);
      // A page deep in the order: the cursor of a finding without an author for the nullable keys.
      sent.length = 0;
      sentValues.length = 0;
      await listAllFindings(db, access, { limit: 20, order_by: order, next: first.nextValue }, cursors);
      const at = sent.findIndex((text) => text.includes(keyset) && text.includes(' order by '));
      expect(at, sent.join('\n')).toBeGreaterThanOrEqual(0);

      const { rows } = await t.container.database.executeSql(`explain ${sent[at]}`, sentValues[at]);
      const plan = rows.map((r) => r['QUERY PLAN'] as string).join('\n');
      expect(plan).toContain(index);
      expect(plan).not.toMatch(/\bSort\b/);
      // The keyset condition bounds the index scan instead of filtering rows read from the start.
      expect(plan).toMatch(/Index Cond: .*ROW\(.*\) [<>] ROW\(/);
    },
  );
});
