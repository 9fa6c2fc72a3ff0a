import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { addMember, buildRepositoryTeam, fileFinding } from '../../../test/helpers/factories.ts';
import { comments, findings, notifications, repositoryMembers } from '../../db/schema/index.ts';
import type { Finding } from '../findings/findings.schemas.ts';
import { commentsRepo } from './comments.repo.ts';
import type { CommentThread } from './comments.schemas.ts';

const t = sharedTestApp();

describe('concurrent comments on one finding', () => {
  it('stores each of 50 concurrent comments once, never takes pingsLeft below zero, and keeps unread counts exact', async () => {
    const s = await buildRepositoryTeam(t);
    const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
    await addMember(t, s.repository.id, s.reviewer.id, 'reviewer', { pingsLeft: 5 });
    const url = `/api/v0/repositories/${s.repository.id}/findings/${finding.id}`;
    const post = (token: string, content: string) =>
      t.app.inject({
        method: 'POST',
        url: `${url}/comment`,
        headers: { authorization: `Bearer ${token}` },
        payload: { content },
      });
    const read = () =>
      t.app.inject({
        method: 'GET',
        url: `${url}/comments`,
        headers: { authorization: `Bearer ${s.triager.token}` },
      });

    const writes = [
      ...Array.from(
        { length: 20 },
        (_, i) => ['reviewer', post(s.reviewer.token, `@project #${i}`)] as const,
      ),
      ...Array.from(
        { length: 15 },
        (_, i) => ['judge', post(s.judge.token, `@project and @${s.triager.username} #${i}`)] as const,
      ),
      ...Array.from(
        { length: 15 },
        (_, i) => ['company', post(s.companyUser.token, `@${s.judge.username} #${i}`)] as const,
      ),
    ];
    // The triager reads while the comments are written: the read markers race the writers.
    const reads = Array.from({ length: 5 }, () => read());
    const results = await Promise.all(writes.map(async ([who, res]) => [who, await res] as const));
    const listed = await Promise.all(reads);

    const status = (who: string) => results.filter(([w]) => w === who).map(([, r]) => r.statusCode);
    expect(status('reviewer').filter((c) => c === 201)).toHaveLength(5);
    expect(status('reviewer').filter((c) => c === 409)).toHaveLength(15);
    expect(status('judge').every((c) => c === 201)).toBe(true);
    expect(status('company').every((c) => c === 201)).toBe(true);

    const ids = results
      .filter(([, r]) => r.statusCode === 201)
      .map(([, r]) => (r.json() as { id: string }).id);
    expect(new Set(ids).size).toBe(35);
    const stored = await t.container.database.db
      .select()
      .from(comments)
      .where(eq(comments.findingId, finding.id));
    expect(stored.map((c) => c.id).sort()).toEqual([...ids].sort());

    const [member] = await t.container.database.db
      .select({ pingsLeft: repositoryMembers.pingsLeft })
      .from(repositoryMembers)
      .where(eq(repositoryMembers.userId, s.reviewer.id));
    expect(member?.pingsLeft).toBe(0);

    // One notification per pinged user per comment: 5 + 15 for the company user (by @project),
    // 15 for the triager, 15 for the judge; none for authors.
    const rows = await t.container.database.db
      .select({ userId: notifications.userId, commentId: notifications.commentId })
      .from(notifications)
      .where(inArray(notifications.commentId, ids));
    const countFor = (userId: string) => rows.filter((r) => r.userId === userId).length;
    expect(countFor(s.companyUser.id)).toBe(20);
    expect(countFor(s.triager.id)).toBe(15);
    expect(countFor(s.judge.id)).toBe(15);
    expect(new Set(rows.map((r) => `${r.userId}:${r.commentId}`)).size).toBe(rows.length);

    // The finding's comment columns, maintained comment by comment under the finding lock, equal
    // a recomputation from the stored comments (what the unread filter and orders read).
    const state = async () =>
      (await t.container.database.db.select().from(findings).where(eq(findings.id, finding.id)))[0];
    const maintained = await state();
    await commentsRepo(t.container.database.db).refreshCommentState([finding.id]);
    expect(maintained).toEqual(await state());
    const listedIds = async (token: string) =>
      (
        await getJson<{ findings: Finding[] }>(
          t,
          token,
          `/api/v0/repositories/all-findings?repositories=${s.repository.id}&with_unread_comments=true`,
        )
      ).body.findings.map((f) => f.id);
    expect(await listedIds(s.companyUser.token)).toEqual([finding.id]);

    const unread = async (token: string) => (await getJson<Finding>(t, token, url)).body.unreadCommentsNumber;
    expect(await unread(s.companyUser.token)).toBe(20);
    expect(await unread(s.judge.token)).toBe(20);
    expect(await unread(s.reviewer.token)).toBe(30);
    // The triager's marker covers exactly what its most complete read returned.
    const seen = Math.max(...listed.map((r) => (r.json() as { threads: CommentThread[] }).threads.length));
    expect(await unread(s.triager.token)).toBe(35 - seen);
  });
});
