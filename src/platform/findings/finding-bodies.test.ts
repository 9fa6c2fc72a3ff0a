import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { api, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildComment, buildFinding, buildLabel } from '../../../test/helpers/factories.ts';
import { type PayloadScenario, payloadScenario } from '../../../test/helpers/finding-payload-scenario.ts';
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

const TITLES = (s: PayloadScenario) =>
  new Map([
    [s.root.id, 'Root'],
    [s.own.id, 'Own duplicate'],
    [s.others.id, 'Other duplicate'],
  ]);

/** The scenario's bodies, by finding id: as stored (`finding_bodies`) or as the view computes them now. */
async function bodies(s: PayloadScenario, from: 'finding_bodies' | 'finding_body_source') {
  const { rows } = await t.container.database.executeSql(
    `select finding_id, body::text as body from ${from} where finding_id = any($1::uuid[])`,
    [idsOf(s)],
  );
  return new Map(rows.map((r) => [r.finding_id as string, r.body as string]));
}

/** The stored bodies are what the view computes from the tables now: no write left one stale. */
async function expectStoredAsComputed(s: PayloadScenario): Promise<Map<string, string>> {
  const stored = await bodies(s, 'finding_bodies');
  expect(stored.size).toBe(3);
  expect(stored).toEqual(await bodies(s, 'finding_body_source'));
  return stored;
}

/** Which of the scenario's findings have a body other than in `before`. */
async function changedSince(s: PayloadScenario, before: Map<string, string>): Promise<string[]> {
  const now = await bodies(s, 'finding_bodies');
  const titles = TITLES(s);
  return idsOf(s)
    .filter((id) => now.get(id) !== before.get(id))
    .map((id) => titles.get(id)!);
}

/** The scenario with its bodies and listing before any change. */
async function scenario() {
  const s = await payloadScenario(t);
  const stored = await expectStoredAsComputed(s);
  return { s, before: await listing(s), stored };
}

type Change = {
  name: string;
  change: (s: PayloadScenario) => Promise<unknown>;
  /** The findings whose body the change must rebuild. */
  rebuilds: string[];
  /** Text the answer must hold after the change. */
  shows?: string;
};

const changes: Change[] = [
  {
    name: "the finding's own field",
    change: (s) => db().update(findings).set({ title: 'Root, renamed' }).where(eq(findings.id, s.root.id)),
    rebuilds: ['Root'],
    shows: '"title":"Root, renamed"',
  },
  {
    name: 'a related file added',
    change: (s) => db().insert(findingRelatedFiles).values({ findingId: s.root.id, path: 'c-added.sol' }),
    rebuilds: ['Root'],
    shows: '"path":"c-added.sol"',
  },
  {
    name: 'a related file changed',
    change: (s) =>
      db()
        .update(findingRelatedFiles)
        .set({ path: 'a-moved.sol' })
        .where(eq(findingRelatedFiles.findingId, s.root.id)),
    rebuilds: ['Root'],
    shows: '"path":"a-moved.sol"',
  },
  {
    name: 'a related file removed',
    change: (s) => db().delete(findingRelatedFiles).where(eq(findingRelatedFiles.findingId, s.root.id)),
    rebuilds: ['Root'],
    shows: '"relatedFiles":[]',
  },
  {
    name: 'the repository renamed',
    change: (s) =>
      db().update(repositories).set({ name: 'renamed-repo' }).where(eq(repositories.id, s.repository.id)),
    rebuilds: ['Root', 'Own duplicate', 'Other duplicate'],
    shows: '"name":"renamed-repo"',
  },
  {
    name: "the company's handle",
    change: (s) =>
      db()
        .update(companies)
        .set({ handle: `renamed-${randomUUID()}` })
        .where(eq(companies.id, s.team.company.id)),
    rebuilds: ['Root', 'Own duplicate', 'Other duplicate'],
    shows: '"handle":"renamed-',
  },
  {
    name: "the author's name",
    change: (s) =>
      db().update(users).set({ name: 'Renamed Reviewer' }).where(eq(users.id, s.team.reviewer.id)),
    rebuilds: ['Root', 'Own duplicate'],
    shows: '"name":"Renamed Reviewer"',
  },
  {
    name: "the assignee's reputation",
    change: (s) => db().update(users).set({ reputation: 4321 }).where(eq(users.id, s.team.judge.id)),
    rebuilds: ['Root'],
    shows: '"reputation":4321',
  },
  {
    name: "the author's pings in the repository",
    change: (s) =>
      db()
        .update(repositoryMembers)
        .set({ pingsLeft: 77 })
        .where(eq(repositoryMembers.userId, s.team.otherReviewer.id)),
    rebuilds: ['Other duplicate'],
    shows: '"pingsLeft":77',
  },
  {
    name: 'the author leaving the repository',
    change: (s) =>
      db().delete(repositoryMembers).where(eq(repositoryMembers.userId, s.team.otherReviewer.id)),
    rebuilds: ['Other duplicate'],
  },
  {
    name: "the safe harbor's assets",
    change: (s) =>
      db()
        .update(safeHarbors)
        .set({ assets: [{ id: '00000000-0000-4000-8000-00000000000a', name: 'Vault v2', description: '' }] })
        .where(eq(safeHarbors.repositoryId, s.repository.id)),
    // Only the root names assets of the safe harbor.
    rebuilds: ['Root'],
    shows: '"name":"Vault v2"',
  },
  {
    name: "the asset group's name",
    change: (s) => db().update(assetGroups).set({ name: 'Core v2' }).where(eq(assetGroups.id, s.group.id)),
    rebuilds: ['Root'],
    shows: '"name":"Core v2"',
  },
  {
    name: 'a sub-group renamed',
    change: (s) => db().update(assetGroups).set({ name: 'Earliest' }).where(eq(assetGroups.id, s.earlier.id)),
    rebuilds: ['Root'],
    shows: '"name":"Earliest"',
  },
  {
    name: 'a sub-group added',
    change: (s) =>
      db()
        .insert(assetGroups)
        .values({ repositoryId: s.repository.id, parentId: s.group.id, name: 'Newest' }),
    rebuilds: ['Root'],
    shows: '"name":"Newest"',
  },
  {
    name: 'an asset of a sub-group added',
    change: (s) =>
      db().insert(assets).values({ assetGroupId: s.later.id, name: 'Staking', reference: '0xstake' }),
    rebuilds: ['Root'],
    shows: '"reference":"0xstake"',
  },
  {
    name: 'an asset renamed',
    change: (s) => db().update(assets).set({ name: 'Token v2' }).where(eq(assets.assetGroupId, s.group.id)),
    rebuilds: ['Root'],
    shows: '"name":"Token v2"',
  },
  {
    name: 'an asset removed',
    change: (s) => db().delete(assets).where(eq(assets.assetGroupId, s.earlier.id)),
    rebuilds: ['Root'],
  },
  {
    name: 'a label renamed',
    change: (s) => db().update(labels).set({ name: 'b-open, renamed' }).where(eq(labels.id, s.open.id)),
    rebuilds: ['Root'],
    shows: '"name":"b-open, renamed"',
  },
  {
    name: 'a label made readable by reviewers',
    change: (s) => db().update(labels).set({ reviewerRead: true }).where(eq(labels.id, s.secret.id)),
    rebuilds: ['Root'],
  },
  {
    name: 'a label put on a finding',
    change: (s) => db().insert(findingLabels).values({ findingId: s.own.id, labelId: s.open.id }),
    rebuilds: ['Own duplicate'],
  },
  {
    name: 'a label taken off a finding',
    change: (s) =>
      db()
        .delete(findingLabels)
        .where(and(eq(findingLabels.findingId, s.root.id), eq(findingLabels.labelId, s.secret.id))),
    rebuilds: ['Root'],
  },
  {
    name: 'a label removed',
    change: (s) => db().delete(labels).where(eq(labels.id, s.open.id)),
    rebuilds: ['Root'],
  },
  {
    name: 'the asset group removed (the finding loses it)',
    change: async (s) => {
      await db().delete(assetGroups).where(eq(assetGroups.parentId, s.group.id));
      await db().delete(assetGroups).where(eq(assetGroups.id, s.group.id));
    },
    rebuilds: ['Root'],
    shows: '"assetGroup":null',
  },
];

describe("Finding bodies (the part of a finding's payload every reader sees alike)", () => {
  it('are written with each new finding, in its transaction', async () => {
    const s = await payloadScenario(t);
    const fresh = await buildFinding(t, { repositoryId: s.repository.id, title: 'Fresh' });
    const { rows } = await t.container.database.executeSql(
      "select body->>'title' as title from finding_bodies where finding_id = $1",
      [fresh.id],
    );
    expect(rows).toEqual([{ title: 'Fresh' }]);
    const res = await api(
      t,
      'GET',
      `/api/v0/repositories/${s.repository.id}/findings/${fresh.id}`,
      s.team.judge.token,
    );
    expect(res.statusCode).toBe(200);
    expect((res.json() as Finding).title).toBe('Fresh');
  });

  for (const c of changes) {
    it(`are rebuilt by a change of ${c.name}, for the findings it concerns only`, async () => {
      const { s, before, stored } = await scenario();
      await c.change(s);
      expect((await changedSince(s, stored)).sort()).toEqual([...c.rebuilds].sort());
      await expectStoredAsComputed(s);
      const after = await listing(s);
      expect(after).not.toBe(before);
      if (c.shows) expect(after).toContain(c.shows);
    });
  }

  it('are all rebuilt by a TRUNCATE of a table they draw on, which names no rows', async () => {
    for (const table of ['finding_related_files', 'safe_harbors']) {
      const { s, before } = await scenario();
      await t.container.database.executeSql(`truncate ${table}`);
      await expectStoredAsComputed(s);
      const after = await listing(s);
      expect(after).not.toBe(before);
      expect(after).toContain(table === 'safe_harbors' ? '"safeHarborAssets":[]' : '"relatedFiles":[]');
    }
  });

  it('give a reviewer only the labels reviewers may read, and a judge every label', async () => {
    const { s } = await scenario();
    const asReviewer = await listing(s, s.team.reviewer.token);
    expect(asReviewer).toContain('"name":"b-open"');
    expect(asReviewer).not.toContain('a-secret');
    expect(await listing(s)).toContain('"name":"a-secret"');
  });

  it('are left as they are by writes that change nothing they hold (a new finding number, a comment)', async () => {
    const { s, before, stored } = await scenario();
    await db()
      .update(repositories)
      .set({ findingSeq: sql`${repositories.findingSeq} + 1` })
      .where(eq(repositories.id, s.repository.id));
    await buildComment(t, { findingId: s.own.id, authorId: s.team.otherReviewer.id, content: 'Seen.' });
    // A label no finding carries yet, and a label updated to what it already holds.
    await buildLabel(t, { repositoryId: s.repository.id, name: 'c-unused' });
    await db().update(labels).set({ name: 'b-open' }).where(eq(labels.id, s.open.id));
    expect(await changedSince(s, stored)).toEqual([]);
    // The comment is the reader's part of the payload: it shows with the same body.
    expect(await listing(s)).not.toBe(before);
  });

  it('end as the tables say under concurrent writes of every kind, with reads between them', async () => {
    const { s } = await scenario();
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
    const results = await Promise.allSettled([
      ...writes.map((write) => write()),
      ...Array.from({ length: 12 }, () => listing(s)),
    ]);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    await expectStoredAsComputed(s);
    const after = await listing(s);
    expect(after).toMatch(/"title":"Root \d"/);
    expect(after).toMatch(/"name":"repo-\d"/);
    expect(after).toMatch(/"name":"Reviewer \d"/);
  });

  it('keep both of two overlapping writes of different sources of one finding', async () => {
    const { s } = await scenario();
    const database = t.container.database;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let renamed = () => {};
    const userRenamed = new Promise<void>((resolve) => {
      renamed = resolve;
    });
    // The author renamed in a transaction held open; meanwhile another transaction retitles the
    // finding, computing its body before the rename commits. It waits for the rename's lock on
    // the body and builds it again after, from a snapshot that holds the rename.
    const first = database.transaction(async (tx) => {
      await tx.db.update(users).set({ name: 'Renamed, held' }).where(eq(users.id, s.team.reviewer.id));
      renamed();
      await held;
    });
    await userRenamed;
    const second = database.transaction(async (tx) => {
      await tx.db.update(findings).set({ title: 'Root, meanwhile' }).where(eq(findings.id, s.root.id));
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([first, second]);
    const stored = await expectStoredAsComputed(s);
    expect(stored.get(s.root.id)).toContain('"title": "Root, meanwhile"');
    expect(stored.get(s.root.id)).toContain('"name": "Renamed, held"');
  });
});
