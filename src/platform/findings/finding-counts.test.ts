import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildFinding, buildRepository } from '../../../test/helpers/factories.ts';
import type { FindingStatus } from '../../access/rules.ts';
import { findingCounts, findings, repositories } from '../../db/schema/index.ts';

const t = sharedTestApp();

/** finding_counts without empty buckets, and the same figures counted on findings. */
async function countsAndTruth() {
  const db = t.container.database.db;
  const kept = await db
    .select({
      repositoryId: findingCounts.repositoryId,
      companyId: findingCounts.companyId,
      status: findingCounts.status,
      severity: findingCounts.severity,
      n: findingCounts.n,
    })
    .from(findingCounts)
    .where(sql`${findingCounts.n} <> 0`);
  const truth = await db
    .select({
      repositoryId: sql<string>`${findings.repositoryId}`,
      companyId: findings.companyId,
      status: findings.status,
      severity: findings.severity,
      n: sql<number>`count(*)::int`,
    })
    .from(findings)
    .where(sql`${findings.published} and ${findings.repositoryId} is not null`)
    .groupBy(findings.repositoryId, findings.companyId, findings.status, findings.severity);
  const key = (r: { repositoryId: string; status: string; severity: string }) =>
    `${r.repositoryId}/${r.status}/${r.severity}`;
  const sort = <T extends { repositoryId: string; status: string; severity: string }>(rows: T[]) =>
    [...rows].sort((a, b) => key(a).localeCompare(key(b)));
  return { kept: sort(kept), truth: sort(truth) };
}

describe('finding_counts', () => {
  it('stays equal to a count of published findings under concurrent inserts, changes and deletes', async () => {
    const db = t.container.database;
    const first = await buildRepository(t);
    const second = await buildRepository(t);
    const statuses: FindingStatus[] = ['new', 'confirmed', 'in_review', 'fixed'];
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        buildFinding(t, {
          repositoryId: (i % 2 === 0 ? first : second).id,
          status: statuses[i % statuses.length],
          severity: i % 3 === 0 ? 'high' : 'low',
          published: i % 5 !== 0,
        }),
      ),
    );
    // Crossing status changes in both directions at once: each transaction moves one finding out
    // of the bucket another one moves a finding into.
    await Promise.all(
      created.map((f, i) =>
        db.transaction(async (tx) => {
          await tx.db
            .update(findings)
            .set({ status: i % 2 === 0 ? 'confirmed' : 'new', severity: i % 4 < 2 ? 'critical' : 'low' })
            .where(eq(findings.id, f.id));
          await tx.db.update(findings).set({ lastUpdatedAt: sql`now()` }).where(eq(findings.id, f.id));
        }),
      ),
    );
    await Promise.all([
      ...created
        .slice(0, 6)
        .map((f) => db.db.update(findings).set({ published: !f.published }).where(eq(findings.id, f.id))),
      ...created.slice(6, 10).map((f) => db.db.delete(findings).where(eq(findings.id, f.id))),
      db
        .transaction(async (tx) => {
          await tx.db.update(findings).set({ status: 'fixed' }).where(eq(findings.repositoryId, second.id));
          throw new Error('rolled back');
        })
        .catch(() => undefined),
      ...Array.from({ length: 6 }, () =>
        buildFinding(t, { repositoryId: first.id, status: 'disputed', severity: 'medium' }),
      ),
    ]);
    let { kept, truth } = await countsAndTruth();
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(truth);

    // Deleting a repository deletes its findings through the foreign key, and their counts.
    await db.db.delete(repositories).where(eq(repositories.id, second.id));
    ({ kept, truth } = await countsAndTruth());
    expect(kept.some((r) => r.repositoryId === second.id)).toBe(false);
    expect(kept).toEqual(truth);
  });
});
