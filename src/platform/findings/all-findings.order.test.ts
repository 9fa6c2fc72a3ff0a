import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sharedTestApp } from '../../../test/helpers/app.ts';
import {
  buildCompany,
  buildFinding,
  buildRepository,
  buildUser,
  type TestRepository,
  type TestUser,
} from '../../../test/helpers/factories.ts';
import { findingStatuses, findings, users } from '../../db/schema/index.ts';
import { FINDING_ORDERS, type Finding, type FindingOrder } from './findings.schemas.ts';

const t = sharedTestApp();

const SEVERITY_RANK = ['gas_optimization', 'informational', 'low', 'medium', 'high', 'critical'];

interface Row {
  id: string;
  number: number;
  creator: { reputation: number; username: string } | null;
  status: (typeof findingStatuses)[number];
  severity: string;
  created: number;
  updated: number;
  reward: string | null;
  comment: number | null;
}

/** The sort key of a row in JS, as the listing defines it (timestamps as microsecond offsets). */
function keyOf(order: FindingOrder, r: Row): number | string | null {
  const field = order.replace(/_(asc|desc)$/, '');
  switch (field) {
    case 'number':
      return r.number;
    case 'status':
      return findingStatuses.indexOf(r.status);
    case 'severity':
      return SEVERITY_RANK.indexOf(r.severity);
    case 'reputation':
      return r.creator?.reputation ?? null;
    case 'username':
      return r.creator?.username.toLowerCase() ?? null;
    case 'created_at':
      return r.created;
    case 'last_updated_at':
      return r.updated;
    case 'reward':
      return r.reward === null ? null : Number(r.reward);
    default:
      return r.comment;
  }
}

/** Expected order: the key in the direction, nulls last in both directions, ties by id in the direction. */
function expectedOrder(order: FindingOrder, rows: Row[]): string[] {
  const dir = order.endsWith('_desc') ? -1 : 1;
  return [...rows]
    .sort((a, b) => {
      const ka = keyOf(order, a);
      const kb = keyOf(order, b);
      if (ka === null && kb !== null) return 1;
      if (kb === null && ka !== null) return -1;
      if (ka !== null && kb !== null && ka !== kb) return (ka < kb ? -1 : 1) * dir;
      return (a.id < b.id ? -1 : 1) * dir;
    })
    .map((r) => r.id);
}

const at = (micros: number) =>
  sql`'2024-01-01T00:00:00Z'::timestamptz + ${micros} * interval '1 microsecond'`;

async function insertRow(
  repository: TestRepository,
  creator: { user: TestUser; reputation: number } | null,
  values: Omit<Row, 'id' | 'number' | 'creator'>,
): Promise<Row> {
  const row = await buildFinding(t, {
    repositoryId: repository.id,
    createdBy: creator?.user.id ?? null,
    status: values.status,
    severity: values.severity as 'high',
    reward: values.reward,
  });
  await t.container.database.db
    .update(findings)
    .set({
      createdAt: at(values.created),
      lastUpdatedAt: at(values.updated),
      lastCommentAt: values.comment === null ? null : at(values.comment),
    })
    .where(eq(findings.id, row.id));
  return {
    ...values,
    id: row.id,
    number: row.number as number,
    creator: creator ? { reputation: creator.reputation, username: creator.user.username } : null,
  };
}

describe('GET /api/v0/repositories/all-findings ordering and pagination', () => {
  it('orders by every order_by in both directions with nulls last and id tie-breaks, paging without skips or repeats while findings are added', async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const viewer = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const suffix = randomBytes(3).toString('hex');
    const people = await Promise.all(
      [
        ['alpha', 10],
        ['Bravo', 10],
        ['charlie', 5],
      ].map(async ([name, reputation]) => {
        const user = await buildUser(t, { username: `${name}${suffix}` });
        await t.container.database.db
          .update(users)
          .set({ reputation: reputation as number })
          .where(eq(users.id, user.id));
        return { user, reputation: reputation as number };
      }),
    );
    const [u1, u2, u3] = people;
    const base: Array<[(typeof people)[number] | null, Omit<Row, 'id' | 'number' | 'creator'>]> = [
      [u1 ?? null, { status: 'new', severity: 'high', created: 0, updated: 1, reward: '100', comment: 5 }],
      [
        u2 ?? null,
        { status: 'confirmed', severity: 'high', created: 0, updated: 1, reward: null, comment: null },
      ],
      [u3 ?? null, { status: 'new', severity: 'low', created: 1, updated: 0, reward: '100', comment: 5 }],
      [
        null,
        { status: 'fixed', severity: 'critical', created: 2, updated: 2, reward: '50.5', comment: null },
      ],
      [
        u1 ?? null,
        { status: 'spam', severity: 'gas_optimization', created: 1, updated: 3, reward: '200', comment: 4 },
      ],
      [u2 ?? null, { status: 'new', severity: 'medium', created: 0, updated: 3, reward: null, comment: 4 }],
      [
        u3 ?? null,
        { status: 'withdrawn', severity: 'informational', created: 3, updated: 0, reward: '0', comment: 6 },
      ],
      [
        u1 ?? null,
        { status: 'confirmed', severity: 'high', created: 2, updated: 1, reward: '50.5', comment: null },
      ],
    ];
    const initial: Row[] = [];
    for (const [creator, values] of base) initial.push(await insertRow(repository, creator, values));

    let salt = 0;
    for (const order of FINDING_ORDERS) {
      const seen: string[] = [];
      let next: string | null = null;
      let pages = 0;
      do {
        const query: string = `order_by=${order}&limit=3${next ? `&next=${encodeURIComponent(next)}` : ''}`;
        const res: { status: number; body: { findings: Finding[]; nextValue: string | null } } =
          await getJson(t, viewer.token, `/api/v0/repositories/all-findings?${query}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        seen.push(...res.body.findings.map((f) => f.id));
        next = res.body.nextValue;
        pages++;
        // New findings arrive between pages, with keys before and after the cursor.
        if (pages <= 3) {
          salt++;
          await insertRow(repository, people[salt % 3] ?? null, {
            status: findingStatuses[salt % findingStatuses.length] ?? 'new',
            severity: SEVERITY_RANK[salt % 6] ?? 'low',
            created: salt % 4,
            updated: (salt * 7) % 5,
            reward: salt % 3 === 0 ? null : String(salt * 25),
            comment: salt % 2 === 0 ? null : salt % 7,
          });
        }
      } while (next && pages < 50);
      expect(new Set(seen).size, `${order}: repeated rows`).toBe(seen.length);
      const initialIds = new Set(initial.map((r) => r.id));
      expect(
        seen.filter((id) => initialIds.has(id)),
        `${order}: order of the findings present from the start`,
      ).toEqual(expectedOrder(order, initial));
    }
  });

  it('orders the first page exactly (all rows known) and counts filteredTotal without the cursor', async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const viewer = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const rows: Row[] = [];
    for (let i = 0; i < 5; i++) {
      rows.push(
        await insertRow(repository, null, {
          status: 'new',
          severity: 'low',
          created: i % 2,
          updated: 0,
          reward: i === 2 ? null : String(i % 2),
          comment: null,
        }),
      );
    }
    for (const order of ['reward_desc', 'reward_asc', 'created_at_desc', 'number_desc'] as const) {
      const first = await getJson<{ findings: Finding[]; filteredTotal: number; nextValue: string }>(
        t,
        viewer.token,
        `/api/v0/repositories/all-findings?order_by=${order}&limit=2`,
      );
      expect(first.body.filteredTotal).toBe(5);
      const second = await getJson<{ findings: Finding[]; filteredTotal: number; nextValue: string | null }>(
        t,
        viewer.token,
        `/api/v0/repositories/all-findings?order_by=${order}&limit=10&next=${first.body.nextValue}`,
      );
      expect(second.body.filteredTotal).toBe(5);
      expect(second.body.nextValue).toBeNull();
      expect([...first.body.findings, ...second.body.findings].map((f) => f.id)).toEqual(
        expectedOrder(order, rows),
      );
    }
  });

  it("follows a change of the author's reputation or username, and the author's deletion, in the same transaction", async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const viewer = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const suffix = randomBytes(3).toString('hex');
    const a = await buildUser(t, { username: `amber${suffix}` });
    const b = await buildUser(t, { username: `basil${suffix}` });
    const c = await buildUser(t, { username: `cedar${suffix}` });
    const fa = await buildFinding(t, { repositoryId: repository.id, createdBy: a.id });
    const fb = await buildFinding(t, { repositoryId: repository.id, createdBy: b.id });
    const fc = await buildFinding(t, { repositoryId: repository.id, createdBy: c.id });
    const ids = async (order: FindingOrder) =>
      (
        await getJson<{ findings: Finding[] }>(
          t,
          viewer.token,
          `/api/v0/repositories/all-findings?order_by=${order}&limit=10`,
        )
      ).body.findings.map((f) => f.id);
    expect(await ids('username_asc')).toEqual([fa.id, fb.id, fc.id]);
    const db = t.container.database.db;
    // One transaction: the findings follow the author's change with it, and a rollback undoes both.
    await expect(
      t.container.database.transaction(async (tx) => {
        await tx.db
          .update(users)
          .set({ username: `Zinnia${suffix}`, reputation: 99 })
          .where(eq(users.id, a.id));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await ids('username_asc')).toEqual([fa.id, fb.id, fc.id]);
    await db
      .update(users)
      .set({ username: `Zinnia${suffix}` })
      .where(eq(users.id, a.id));
    await db.update(users).set({ reputation: 50 }).where(eq(users.id, c.id));
    await db.update(users).set({ reputation: 20 }).where(eq(users.id, b.id));
    expect(await ids('username_asc')).toEqual([fb.id, fc.id, fa.id]);
    expect(await ids('username_desc')).toEqual([fa.id, fc.id, fb.id]);
    expect(await ids('reputation_desc')).toEqual([fc.id, fb.id, fa.id]);
    // A deleted author leaves the finding without one: last in both directions.
    await db.delete(users).where(eq(users.id, c.id));
    expect(await ids('reputation_desc')).toEqual([fb.id, fa.id, fc.id]);
    expect(await ids('reputation_asc')).toEqual([fa.id, fb.id, fc.id]);
    expect(await ids('username_asc')).toEqual([fb.id, fa.id, fc.id]);
    // A finding given another author takes that author's keys.
    await db.update(findings).set({ createdBy: b.id }).where(eq(findings.id, fa.id));
    const [row] = await db
      .select({ reputation: findings.authorReputation, name: findings.authorName })
      .from(findings)
      .where(eq(findings.id, fa.id));
    expect(row).toEqual({ reputation: 20, name: `basil${suffix}` });
  });

  it('defaults to number ascending', async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const viewer = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    for (let i = 0; i < 3; i++) await buildFinding(t, { repositoryId: repository.id });
    const res = await getJson<{ findings: Finding[] }>(t, viewer.token, '/api/v0/repositories/all-findings');
    expect(res.body.findings.map((f) => f.number)).toEqual([1, 2, 3]);
  });
});
