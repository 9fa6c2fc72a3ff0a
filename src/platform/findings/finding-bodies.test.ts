import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { api, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildComment, buildFinding, buildLabel } from '../../../test/helpers/factories.ts';
import {
  judgeAccess,
  type PayloadScenario,
  payloadScenario,
} from '../../../test/helpers/finding-payload-scenario.ts';
import { ownTransactionPerStatement } from '../../db/client.ts';
import {
  assetGroups,
  assets,
  companies,
  findingLabels,
  findingRelatedFiles,
  findings,
  labels,
  repositories,
  repositoryMembers,
  safeHarbors,
  users,
} from '../../db/schema/index.ts';
import { loadFindingPayloads } from './findings.repo.ts';
import type { Finding } from './findings.schemas.ts';

const t = sharedTestApp();
const db = () => t.container.database.db;

/** The judge's (or another user's) listing of the scenario's repository, as the answer's text. */
async function listing(s: PayloadScenario, token = s.team.judge.token): Promise<string> {
  const res = await api(
    t,
    'GET',
    `/api/v0/repositories/all-findings?repositories=${s.repository.id}&order_by=number_asc`,
    token,
  );
  expect(res.statusCode).toBe(200);
  return res.body;
}

const idsOf = (s: PayloadScenario) => [s.root.id, s.own.id, s.others.id];

/** The kept bodies and stamps of the scenario's findings, by finding id. */
async function kept(s: PayloadScenario): Promise<Map<string, { stamp: string; body: string | null }>> {
  const { rows } = await t.container.database.executeSql(
    'select finding_id, stamp::text as stamp, body from finding_bodies where finding_id = any($1::uuid[])',
    [idsOf(s)],
  );
  return new Map(
    rows.map((r) => [r.finding_id as string, { stamp: r.stamp as string, body: r.body as string | null }]),
  );
}

/** Clears the scenario's kept bodies, so that the next read computes every finding anew. */
async function forget(s: PayloadScenario): Promise<void> {
  await t.container.database.executeSql(
    'update finding_bodies set body = null where finding_id = any($1::uuid[])',
    [idsOf(s)],
  );
}

/**
 * The listing read from the kept bodies, which must be the listing computed anew from the tables
 * (the bodies cleared first): what a write changed reached the kept bodies.
 */
async function expectKeptAsComputed(s: PayloadScenario): Promise<string> {
  const fromKept = await listing(s);
  await forget(s);
  const computed = await listing(s);
  expect(fromKept).toBe(computed);
  return computed;
}

/** The scenario, read once so that every finding's body is kept. */
async function keptScenario() {
  const s = await payloadScenario(t);
  const before = await listing(s);
  const bodies = await kept(s);
  expect(bodies.size).toBe(3);
  for (const { body } of bodies.values()) expect(body).not.toBeNull();
  return { s, before, stamps: new Map([...bodies].map(([id, b]) => [id, b.stamp])) };
}

/** Which of the scenario's findings had their kept body cleared (their stamp moved on). */
async function moved(s: PayloadScenario, stamps: Map<string, string>): Promise<string[]> {
  const now = await kept(s);
  const titles = new Map([
    [s.root.id, 'Root'],
    [s.own.id, 'Own duplicate'],
    [s.others.id, 'Other duplicate'],
  ]);
  return idsOf(s)
    .filter((id) => now.get(id)?.stamp !== stamps.get(id))
    .map((id) => titles.get(id)!);
}

type Change = {
  name: string;
  change: (s: PayloadScenario) => Promise<unknown>;
  /** The findings whose kept body the change must clear. */
  clears: string[];
  /** Text the answer must hold after the change. */
  shows?: string;
};

const changes: Change[] = [
  {
    name: "the finding's own field",
    change: (s) => db().update(findings).set({ title: 'Root, renamed' }).where(eq(findings.id, s.root.id)),
    clears: ['Root'],
    shows: '"title":"Root, renamed"',
  },
  {
    name: 'a related file added',
    change: (s) => db().insert(findingRelatedFiles).values({ findingId: s.root.id, path: 'c-added.sol' }),
    clears: ['Root'],
    shows: '"path":"c-added.sol"',
  },
  {
    name: 'a related file changed',
    change: (s) =>
      db()
        .update(findingRelatedFiles)
        .set({ path: 'a-moved.sol' })
        .where(eq(findingRelatedFiles.findingId, s.root.id)),
    clears: ['Root'],
    shows: '"path":"a-moved.sol"',
  },
  {
    name: 'a related file removed',
    change: (s) => db().delete(findingRelatedFiles).where(eq(findingRelatedFiles.findingId, s.root.id)),
    clears: ['Root'],
    shows: '"relatedFiles":[]',
  },
  {
    name: 'the repository renamed',
    change: (s) =>
      db().update(repositories).set({ name: 'renamed-repo' }).where(eq(repositories.id, s.repository.id)),
    clears: ['Root', 'Own duplicate', 'Other duplicate'],
    shows: '"name":"renamed-repo"',
  },
  {
    name: "the company's handle",
    change: (s) =>
      db()
        .update(companies)
        .set({ handle: `renamed-${randomUUID()}` })
        .where(eq(companies.id, s.team.company.id)),
    clears: ['Root', 'Own duplicate', 'Other duplicate'],
    shows: '"handle":"renamed-',
  },
  {
    name: "the author's name",
    change: (s) =>
      db().update(users).set({ name: 'Renamed Reviewer' }).where(eq(users.id, s.team.reviewer.id)),
    clears: ['Root', 'Own duplicate'],
    shows: '"name":"Renamed Reviewer"',
  },
  {
    name: "the assignee's reputation",
    change: (s) => db().update(users).set({ reputation: 4321 }).where(eq(users.id, s.team.judge.id)),
    clears: ['Root'],
    shows: '"reputation":4321',
  },
  {
    name: "the author's pings in the repository",
    change: (s) =>
      db()
        .update(repositoryMembers)
        .set({ pingsLeft: 77 })
        .where(eq(repositoryMembers.userId, s.team.otherReviewer.id)),
    clears: ['Other duplicate'],
    shows: '"pingsLeft":77',
  },
  {
    name: 'the author leaving the repository',
    change: (s) =>
      db().delete(repositoryMembers).where(eq(repositoryMembers.userId, s.team.otherReviewer.id)),
    clears: ['Other duplicate'],
  },
  {
    name: "the safe harbor's assets",
    change: (s) =>
      db()
        .update(safeHarbors)
        .set({ assets: [{ id: '00000000-0000-4000-8000-00000000000a', name: 'Vault v2', description: '' }] })
        .where(eq(safeHarbors.repositoryId, s.repository.id)),
    // Only the root names assets of the safe harbor.
    clears: ['Root'],
    shows: '"name":"Vault v2"',
  },
  {
    name: "the asset group's name",
    change: (s) => db().update(assetGroups).set({ name: 'Core v2' }).where(eq(assetGroups.id, s.group.id)),
    clears: ['Root'],
    shows: '"name":"Core v2"',
  },
  {
    name: 'a sub-group renamed',
    change: (s) => db().update(assetGroups).set({ name: 'Earliest' }).where(eq(assetGroups.id, s.earlier.id)),
    clears: ['Root'],
    shows: '"name":"Earliest"',
  },
  {
    name: 'a sub-group added',
    change: (s) =>
      db()
        .insert(assetGroups)
        .values({ repositoryId: s.repository.id, parentId: s.group.id, name: 'Newest' }),
    clears: ['Root'],
    shows: '"name":"Newest"',
  },
  {
    name: 'an asset of a sub-group added',
    change: (s) =>
      db().insert(assets).values({ assetGroupId: s.later.id, name: 'Staking', reference: '0xstake' }),
    clears: ['Root'],
    shows: '"reference":"0xstake"',
  },
  {
    name: 'an asset renamed',
    change: (s) => db().update(assets).set({ name: 'Token v2' }).where(eq(assets.assetGroupId, s.group.id)),
    clears: ['Root'],
    shows: '"name":"Token v2"',
  },
  {
    name: 'an asset removed',
    change: (s) => db().delete(assets).where(eq(assets.assetGroupId, s.earlier.id)),
    clears: ['Root'],
  },
  {
    name: 'a label renamed',
    change: (s) => db().update(labels).set({ name: 'b-open, renamed' }).where(eq(labels.id, s.open.id)),
    clears: ['Root'],
    shows: '"name":"b-open, renamed"',
  },
  {
    name: 'a label made readable by reviewers',
    change: (s) => db().update(labels).set({ reviewerRead: true }).where(eq(labels.id, s.secret.id)),
    clears: ['Root'],
  },
  {
    name: 'a label put on a finding',
    change: (s) => db().insert(findingLabels).values({ findingId: s.own.id, labelId: s.open.id }),
    clears: ['Own duplicate'],
  },
  {
    name: 'a label taken off a finding',
    change: (s) =>
      db()
        .delete(findingLabels)
        .where(and(eq(findingLabels.findingId, s.root.id), eq(findingLabels.labelId, s.secret.id))),
    clears: ['Root'],
  },
  {
    name: 'a label removed',
    change: (s) => db().delete(labels).where(eq(labels.id, s.open.id)),
    clears: ['Root'],
  },
  {
    name: 'the asset group removed (the finding loses it)',
    change: async (s) => {
      await db().delete(assetGroups).where(eq(assetGroups.parentId, s.group.id));
      await db().delete(assetGroups).where(eq(assetGroups.id, s.group.id));
    },
    clears: ['Root'],
    shows: '"assetGroup":null',
  },
];

describe("Kept finding bodies (the part of a finding's payload every reader sees alike)", () => {
  it('are written by the first read and used by the next: the same answer as computed anew', async () => {
    const { s, before } = await keptScenario();
    expect(await listing(s)).toBe(before);
    await forget(s);
    expect(await listing(s)).toBe(before);
  });

  it('are added with each new finding, and one read alone keeps its body too', async () => {
    const s = await payloadScenario(t);
    const fresh = await buildFinding(t, { repositoryId: s.repository.id, title: 'Fresh' });
    const { rows: added } = await t.container.database.executeSql(
      'select body from finding_bodies where finding_id = $1',
      [fresh.id],
    );
    expect(added).toEqual([{ body: null }]);
    const res = await api(
      t,
      'GET',
      `/api/v0/repositories/${s.repository.id}/findings/${fresh.id}`,
      s.team.judge.token,
    );
    expect(res.statusCode).toBe(200);
    expect((res.json() as Finding).title).toBe('Fresh');
    const { rows } = await t.container.database.executeSql(
      'select body from finding_bodies where finding_id = $1',
      [fresh.id],
    );
    expect(rows[0]?.body).toContain('"title":"Fresh"');
  });

  for (const c of changes) {
    it(`are cleared by a change of ${c.name}, for the findings it concerns only`, async () => {
      const { s, before, stamps } = await keptScenario();
      await c.change(s);
      expect((await moved(s, stamps)).sort()).toEqual([...c.clears].sort());
      const after = await expectKeptAsComputed(s);
      expect(after).not.toBe(before);
      if (c.shows) expect(after).toContain(c.shows);
    });
  }

  it('are all cleared by a TRUNCATE of a table they draw on, which names no rows', async () => {
    for (const table of ['finding_related_files', 'safe_harbors']) {
      const { s, before, stamps } = await keptScenario();
      await t.container.database.executeSql(`truncate ${table}`);
      expect((await moved(s, stamps)).sort()).toEqual(['Other duplicate', 'Own duplicate', 'Root']);
      const after = await expectKeptAsComputed(s);
      expect(after).not.toBe(before);
      expect(after).toContain(table === 'safe_harbors' ? '"safeHarborAssets":[]' : '"relatedFiles":[]');
    }
  });

  it('are cleared on TRUNCATE by every table whose writes clear them (findings: its bodies go with it)', async () => {
    const { rows } = await t.container.database.executeSql(
      `select tgrelid::regclass::text as "table", bool_or(tgtype & 32 <> 0) as "onTruncate"
        from pg_trigger where tgfoid = 'vigil_finding_bodies_forget'::regproc group by tgrelid order by 1`,
    );
    const tables = rows.map((r) => r.table as string);
    expect(tables).toEqual(
      expect.arrayContaining(['assets', 'finding_related_files', 'findings', 'repository_members', 'users']),
    );
    expect(rows.filter((r) => r.table !== 'findings' && r.onTruncate !== true)).toEqual([]);
  });

  it("written back inside a write's transaction leave its commit setting alone; alone, change it for their own statement only", async () => {
    const { s } = await keptScenario();
    await forget(s);
    const database = t.container.database;
    const access = judgeAccess(s);
    const show = async (run: typeof database.executeSql) =>
      (await run('show synchronous_commit')).rows[0]?.synchronous_commit;
    // The server's own setting (the tests' embedded server runs with it off).
    const serverSetting = await show(database.executeSql);
    expect(ownTransactionPerStatement(database.db)).toBe(true);
    await database.transaction(async (tx) => {
      expect(ownTransactionPerStatement(tx.db)).toBe(false);
      await tx.executeSql('set local synchronous_commit = on');
      await tx.db.update(findings).set({ title: 'Root, written' }).where(eq(findings.id, s.root.id));
      const [root] = await loadFindingPayloads(tx.db, access, [s.root.id]);
      expect(root?.title).toBe('Root, written');
      // The write-back ran in this transaction and left its setting alone: the write's own
      // commit still waits for the disk.
      expect(await show(tx.executeSql)).toBe('on');
    });
    expect((await kept(s)).get(s.root.id)?.body).toContain('"title":"Root, written"');
    // Alone, the write-back's setting lasts its own statement's transaction only.
    await loadFindingPayloads(database.db, access, [s.own.id]);
    expect((await kept(s)).get(s.own.id)?.body).not.toBeNull();
    expect(await show(database.executeSql)).toBe(serverSetting);
  });

  it("give a reviewer only the labels reviewers may read, from the body the judge's read kept", async () => {
    const { s } = await keptScenario();
    const asReviewer = await listing(s, s.team.reviewer.token);
    expect(asReviewer).toContain('"name":"b-open"');
    expect(asReviewer).not.toContain('a-secret');
    // The judge's read kept the bodies with both lists; computed anew, the reviewer's is the same.
    await forget(s);
    expect(await listing(s, s.team.reviewer.token)).toBe(asReviewer);
    expect(await listing(s)).toContain('"name":"a-secret"');
  });

  it('of another layout (kept by a process of another version) are computed anew and replaced', async () => {
    const { s, before } = await keptScenario();
    // A body of six pieces, as kept before the labels were part of it.
    await t.container.database.executeSql(
      `update finding_bodies set body = array_to_string((string_to_array(body, E'\\x01'))[1:6], E'\\x01')
        where finding_id = $1`,
      [s.root.id],
    );
    expect((await kept(s)).get(s.root.id)?.body?.split('\u0001')).toHaveLength(6);
    expect(await listing(s)).toBe(before);
    expect((await kept(s)).get(s.root.id)?.body?.split('\u0001')).toHaveLength(8);
    expect(await listing(s)).toBe(before);
  });

  it('are left as they are by writes that change nothing they hold (a new finding number, a comment)', async () => {
    const { s, before, stamps } = await keptScenario();
    await db()
      .update(repositories)
      .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
      .where(eq(repositories.id, s.repository.id));
    await buildComment(t, { findingId: s.own.id, authorId: s.team.otherReviewer.id, content: 'Seen.' });
    // A label no finding carries yet, and a label updated to what it already holds.
    await buildLabel(t, { repositoryId: s.repository.id, name: 'c-unused' });
    await db().update(labels).set({ name: 'b-open' }).where(eq(labels.id, s.open.id));
    expect(await moved(s, stamps)).toEqual([]);
    // The comment is the reader's part of the payload: it shows with the kept body.
    const after = await expectKeptAsComputed(s);
    expect(after).not.toBe(before);
  });

  it('end as the tables say under concurrent reads and writes (findings, the repository, authors)', async () => {
    const { s } = await keptScenario();
    /** `n` writes, the i-th made by `write(i)`. */
    const times = (n: number, write: (i: number) => Promise<unknown>) =>
      Array.from({ length: n }, (_, i) => () => write(i));
    const writes = [
      ...times(8, (i) =>
        db()
          .update(findings)
          .set({ title: `Root ${i}` })
          .where(eq(findings.id, s.root.id)),
      ),
      ...times(4, (i) =>
        db()
          .update(repositories)
          .set({ name: `repo-${i}` })
          .where(eq(repositories.id, s.repository.id)),
      ),
      ...times(4, (i) =>
        db()
          .update(users)
          .set({ name: `Reviewer ${i}` })
          .where(eq(users.id, s.team.reviewer.id)),
      ),
    ];
    // Writes of every kind at once with reads between them; each read's answer is a real state.
    const results = await Promise.allSettled([
      ...writes.map((write) => write()),
      ...Array.from({ length: 12 }, () => listing(s)),
    ]);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const after = await expectKeptAsComputed(s);
    expect(after).toMatch(/"title":"Root \d"/);
    expect(after).toMatch(/"name":"repo-\d"/);
    expect(after).toMatch(/"name":"Reviewer \d"/);
  });

  it('are not written by a reader while a write holds them: the write clears them when it commits', async () => {
    const { s } = await keptScenario();
    await forget(s);
    const database = t.container.database;
    await database.transaction(async (tx) => {
      await tx.db.update(findings).set({ title: 'Root, in flight' }).where(eq(findings.id, s.root.id));
      // Another connection reads the old title and computes the bodies; the root's row is held
      // by the write, and the reader goes on without waiting for it (a reader that waited would
      // wait here forever: the write commits only after the read returns).
      const during = await listing(s);
      expect(during).toContain('"title":"Root"');
      expect(during).not.toContain('Root, in flight');
    });
    const bodies = await kept(s);
    expect(bodies.get(s.root.id)?.body).toBeNull();
    expect(bodies.get(s.own.id)?.body).not.toBeNull();
    expect(await listing(s)).toContain('"title":"Root, in flight"');
  });

  it('are not kept when computed from a snapshot older than a write committed before they are written', async () => {
    const { s } = await keptScenario();
    await forget(s);
    const pool = Reflect.get(t.container.database.db, '$client') as {
      query: (...args: unknown[]) => unknown;
    };
    const query = pool.query;
    let wroteBetween = false;
    // Between the read's statement and its writing back of the bodies, a write commits.
    Reflect.set(pool, 'query', async (config: unknown, ...rest: unknown[]) => {
      const text = typeof config === 'string' ? config : (config as { text?: string }).text;
      if (!wroteBetween && text?.startsWith('update "finding_bodies" set body')) {
        wroteBetween = true;
        await query.call(pool, 'update findings set title = $1 where id = $2', [
          'Root, meanwhile',
          s.root.id,
        ]);
      }
      return query.call(pool, config, ...rest);
    });
    let during: string;
    try {
      during = await listing(s);
    } finally {
      Reflect.set(pool, 'query', query);
    }
    expect(wroteBetween).toBe(true);
    expect(during).toContain('"title":"Root"');
    const bodies = await kept(s);
    // The root's body, computed before the write, was not kept; the others were.
    expect(bodies.get(s.root.id)?.body).toBeNull();
    expect(bodies.get(s.own.id)?.body).not.toBeNull();
    expect(await expectKeptAsComputed(s)).toContain('"title":"Root, meanwhile"');
  });
});
