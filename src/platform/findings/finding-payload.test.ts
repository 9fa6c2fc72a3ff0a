import { describe, expect, it } from 'vitest';
import { api, getJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { addMember, buildUser } from '../../../test/helpers/factories.ts';
import {
  judgeAccess,
  type PayloadScenario,
  payloadScenario,
} from '../../../test/helpers/finding-payload-scenario.ts';
import { loadFindingPayloads } from './finding-payloads.repo.ts';
import { type Finding, FindingSchema } from './findings.schemas.ts';

const t = sharedTestApp();

interface Listing {
  findings: Finding[];
  filteredTotal: number;
  nextValue: string | null;
}

const ref = (f: { id: string; number: number | null; title: string }) => ({
  id: f.id,
  number: f.number,
  title: f.title,
});

/** The caller's listing of the repository, and each listed finding read alone. */
async function read(token: string, repositoryId: string) {
  const res = await api(
    t,
    'GET',
    `/api/v0/repositories/all-findings?repositories=${repositoryId}&order_by=number_asc`,
    token,
  );
  expect(res.statusCode).toBe(200);
  // Written by the route's serializer, without white space between tokens.
  expect(res.body).toBe(JSON.stringify(JSON.parse(res.body)));
  const listing = { body: res.json() as Listing };
  const byTitle = new Map(listing.body.findings.map((f) => [f.title, f]));
  for (const finding of listing.body.findings) {
    // The listing and a finding read alone go through their routes' serializers, which write the
    // schema's fields only, in its order and types: the two agree.
    const alone = await getJson<Finding>(
      t,
      token,
      `/api/v0/repositories/${repositoryId}/findings/${finding.id}`,
    );
    expect(alone.status).toBe(200);
    expect(finding).toStrictEqual(alone.body);
    expect(Object.keys(finding)).toEqual(Object.keys(FindingSchema.properties));
  }
  return { listing: listing.body, byTitle };
}

/** The caller reads the root with every label and its note, as no reviewer does. */
async function expectEveryLabelAndTheNote(token: string, s: PayloadScenario) {
  const { byTitle } = await read(token, s.repository.id);
  const root = byTitle.get('Root')!;
  expect(root.labels.map((l) => l.name)).toEqual(['a-secret', 'b-open']);
  expect(root.note).toBe('Judges only.');
}

describe("A finding's payload, as the listing and a read of one finding send it", () => {
  it('has every part in its API shape for a judge: labels, note, asset group, safe harbor, files, duplicates', async () => {
    const s = await payloadScenario(t);
    const { team, repository } = s;
    const { listing, byTitle } = await read(team.judge.token, repository.id);
    expect(listing.filteredTotal).toBe(3);
    expect(listing.findings.map((f) => f.title)).toEqual(['Root', 'Own duplicate', 'Other duplicate']);
    const root = byTitle.get('Root')!;
    expect(root).toMatchObject({
      id: s.root.id,
      number: s.root.number,
      description: 'Reentrancy "in" withdraw\n\ttab é ✓',
      note: 'Judges only.',
      reward: '12.5',
      fixedBy: ['abc123'],
      category: 'reentrancy',
      locked: false,
      status: s.root.status,
      severity: 'medium',
      repository: {
        id: repository.id,
        name: repository.name,
        allowedSeverities: repository.allowedSeverities,
      },
      company: { id: team.company.id, handle: team.company.handle },
      createdBy: { userId: team.reviewer.id, username: team.reviewer.username },
      assignedTo: { userId: team.judge.id, username: team.judge.username },
      duplicateOf: null,
      duplicates: [ref(s.own), ref(s.others)],
      duplicateGroup: {
        description: 'Same withdraw bug.',
        findings: [ref(s.root), ref(s.own), ref(s.others)],
      },
    });
    expect(root.labels.map((l) => [l.name, l.archivedAt])).toEqual([
      ['a-secret', null],
      ['b-open', '2026-03-04T05:06:07.891Z'],
    ]);
    expect(root.relatedFiles).toEqual([
      {
        id: expect.any(String),
        path: 'a.sol',
        lines: null,
        language: null,
        relevantContent: null,
        commit: null,
      },
      {
        id: expect.any(String),
        path: 'b.sol',
        lines: { start: 3, end: 9 },
        language: 'solidity',
        relevantContent: 'call{value: x}',
        commit: null,
      },
    ]);
    // The assets the finding names, in the safe harbor's order, with the schema's fields only.
    expect(root.safeHarborAssets).toEqual([
      { id: '00000000-0000-4000-8000-00000000000a', name: 'Vault', description: 'The vault.' },
      { id: '00000000-0000-4000-8000-00000000000c', name: 'Oracle', description: 'The oracle.' },
    ]);
    expect(root.assetGroup).toEqual({
      id: s.group.id,
      name: 'Core',
      description: 'Core contracts.',
      outOfScope: false,
      rewards: [{ minReward: '10', maxReward: '100' }],
      assets: [
        { id: expect.any(String), name: 'Bridge', description: 'The bridge.', reference: '0xbridge' },
        { id: expect.any(String), name: 'Token', description: '', reference: '0xtoken' },
      ],
      subGroups: [
        {
          id: s.earlier.id,
          name: 'Earlier',
          description: '',
          assets: [{ id: expect.any(String), name: 'Pool', description: '', reference: '0xpool' }],
        },
        { id: s.later.id, name: 'Later', description: '', assets: [] },
      ],
    });
    expect(byTitle.get('Own duplicate')).toMatchObject({
      duplicateOf: ref(s.root),
      duplicates: [],
      duplicateGroup: {
        description: 'Same withdraw bug.',
        findings: [ref(s.root), ref(s.own), ref(s.others)],
      },
      assetGroup: null,
      safeHarborAssets: [],
      relatedFiles: [],
      labels: [],
      reward: null,
      assignedTo: null,
    });
  });

  it("leaves out for a reviewer what the access policy keeps from them: labels, the note, others' duplicates", async () => {
    const s = await payloadScenario(t);
    const { listing, byTitle } = await read(s.team.reviewer.token, s.repository.id);
    // The other reviewer's duplicate is not theirs to see.
    expect(listing.findings.map((f) => f.title)).toEqual(['Root', 'Own duplicate']);
    const root = byTitle.get('Root')!;
    expect(root.labels.map((l) => l.name)).toEqual(['b-open']);
    expect(root.note).toBeNull();
    expect(root.duplicates).toEqual([ref(s.own)]);
    expect(root.duplicateGroup).toEqual({
      description: 'Same withdraw bug.',
      findings: [ref(s.root), ref(s.own)],
    });
    expect(root).toMatchObject({ hasUnreadComments: true, unreadCommentsNumber: 1 });
    expect(root.lastCommentAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
    expect(byTitle.get('Own duplicate')).toMatchObject({
      duplicateOf: ref(s.root),
      duplicateGroup: { findings: [ref(s.root), ref(s.own)] },
    });
  });

  it("gives the other reviewer a duplicate whose root they cannot see without the root's reference", async () => {
    const s = await payloadScenario(t);
    const { listing, byTitle } = await read(s.team.otherReviewer.token, s.repository.id);
    expect(listing.findings.map((f) => f.title)).toEqual(['Other duplicate']);
    expect(byTitle.get('Other duplicate')).toMatchObject({
      duplicateOf: null,
      duplicates: [],
      duplicateGroup: null,
    });
  });

  it('reads a company member and a client as no reviewer: every label and the note', async () => {
    const s = await payloadScenario(t);
    for (const user of [s.team.companyUser, s.team.client]) await expectEveryLabelAndTheNote(user.token, s);
  });

  it('reads a reviewer who is also of the company, or reads every company, as no reviewer', async () => {
    const s = await payloadScenario(t);
    const companyReviewer = await buildUser(t, { companyId: s.team.company.id, companyRole: 'member' });
    const crossReader = await buildUser(t, { permissions: ['read_all_companies'] });
    for (const user of [companyReviewer, crossReader]) {
      await addMember(t, s.repository.id, user.id, 'reviewer');
      await expectEveryLabelAndTheNote(user.token, s);
    }
  });

  it('is planned once per connection: after five executions PostgreSQL keeps its generic plan', async () => {
    const s = await payloadScenario(t);
    const access = judgeAccess(s);
    const ids = [s.root.id, s.own.id, s.others.id];
    // One transaction: one connection, whose prepared statements the view lists.
    const counts = await t.container.database.transaction(async (tx) => {
      const read = async (times: number) => {
        for (let i = 0; i < times; i++) expect(await loadFindingPayloads(tx.db, access, ids)).toHaveLength(3);
        const { rows } = await tx.executeSql(
          `select generic_plans::int as generic, custom_plans::int as custom
            from pg_prepared_statements where statement like '%"duplicate_group"[3]%'`,
        );
        return rows;
      };
      // Past the five custom plans on this connection (fewer if it ran the statement before).
      const settled = await read(6);
      return { settled, after: await read(4) };
    });
    expect(counts.settled).toHaveLength(1);
    const [settled] = counts.settled;
    expect(Number(settled?.custom)).toBeLessThanOrEqual(5);
    // Every later execution reuses the generic plan: none is planned again.
    expect(counts.after).toEqual([{ ...settled, generic: Number(settled?.generic) + 4 }]);
  });
});
