import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import {
  addMember,
  buildRepositoryTeam,
  fileFinding,
  type TestUser,
} from '../../../test/helpers/factories.ts';
import { comments, companyMembers } from '../../db/schema/index.ts';
import type { Finding } from '../findings/findings.schemas.ts';

const t = sharedTestApp();

type Visibility = 'public' | 'private' | 'internal' | 'hidden';

/**
 * What one user sees of one finding, from every place the API shows unread state: the finding's
 * payload, the `with_unread_comments` filter, and the `last_comment_desc` order of all-findings.
 */
async function unreadState(user: TestUser, repositoryId: string, findingId: string) {
  const one = await getJson<Finding>(
    t,
    user.token,
    `/api/v0/repositories/${repositoryId}/findings/${findingId}`,
  );
  expect(one.status, JSON.stringify(one.body)).toBe(200);
  const finding = one.body;
  const filtered = await getJson<{ findings: Finding[]; filteredTotal: number }>(
    t,
    user.token,
    `/api/v0/repositories/all-findings?repositories=${repositoryId}&with_unread_comments=true&limit=100`,
  );
  const ordered = await getJson<{ findings: Finding[] }>(
    t,
    user.token,
    `/api/v0/repositories/all-findings?repositories=${repositoryId}&order_by=last_comment_desc&limit=100`,
  );
  const inOrder = ordered.body.findings.find((f) => f.id === findingId);
  return {
    number: finding.unreadCommentsNumber,
    has: finding.hasUnreadComments,
    inFilter: filtered.body.findings.some((f) => f.id === findingId),
    lastCommentAt: finding.lastCommentAt,
    orderedLastCommentAt: inOrder?.lastCommentAt,
    orderedNumber: inOrder?.unreadCommentsNumber,
  };
}

/** The same user's view computed from the threads they may read (read them as a fresh check). */
function expected(
  written: Array<{ author: string; visibility: Visibility; at: string; deleted?: boolean }>,
  user: TestUser,
  readable: Visibility[],
  readAt: string | null,
) {
  const mine = written.filter((c) => readable.includes(c.visibility) && !c.deleted);
  const unread = mine.filter((c) => c.author !== user.id && (readAt === null || c.at > readAt));
  const last =
    mine
      .map((c) => c.at)
      .sort()
      .at(-1) ?? null;
  return { number: unread.length, has: unread.length > 0, inFilter: unread.length > 0, lastCommentAt: last };
}

describe('unread state per user and visibility', () => {
  it('stays exact through own comments, deletes, role changes and company membership changes', async () => {
    const s = await buildRepositoryTeam(t);
    const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
    const base = `/api/v0/repositories/${s.repository.id}/findings/${finding.id}`;
    const written: Array<{
      id: string;
      author: string;
      visibility: Visibility;
      at: string;
      deleted?: boolean;
    }> = [];
    const post = async (user: TestUser, visibility: Visibility) => {
      const res = await sendJson<{ id: string }>(t, user.token, 'POST', `${base}/comment`, {
        content: `${visibility} by ${user.username}`,
        visibility,
      });
      expect(res.status).toBe(201);
      // Read from the table: listing the comments would mark them read for the lister.
      const [stored] = await t.container.database.db
        .select({ createdAt: comments.createdAt })
        .from(comments)
        .where(eq(comments.id, res.body.id));
      written.push({
        id: res.body.id,
        author: user.id,
        visibility,
        at: (stored as { createdAt: Date }).createdAt.toISOString(),
      });
    };
    const check = async (user: TestUser, readable: Visibility[], readAt: string | null) => {
      const got = await unreadState(user, s.repository.id, finding.id);
      const want = expected(written, user, readable, readAt);
      expect({
        number: got.number,
        has: got.has,
        inFilter: got.inFilter,
        lastCommentAt: got.lastCommentAt,
      }).toEqual(want);
      // The listing's payload and order key come from the same place as the finding's.
      expect(got.orderedLastCommentAt).toBe(want.lastCommentAt);
      expect(got.orderedNumber).toBe(want.number);
    };

    await post(s.judge, 'public');
    await post(s.judge, 'private');
    await post(s.companyUser, 'internal');
    await post(s.admin, 'hidden');
    await post(s.reviewer, 'public');
    // The reviewer filed the finding: they read public and private; their own comment never counts.
    // The repository's client is not a company user: public only.
    await check(s.reviewer, ['public', 'private'], null);
    await check(s.client, ['public'], null);
    await check(s.companyUser, ['public', 'private', 'internal'], null);
    await check(s.admin, ['public', 'private', 'internal', 'hidden'], null);

    // The last public comment is the reviewer's own: the one before it (the judge's) still counts
    // for the reviewer, and is the only unread one once they write again.
    await post(s.reviewer, 'public');
    await check(s.reviewer, ['public', 'private'], null);

    // Reading marks everything up to now read; a later comment by someone else is unread again.
    await getJson(t, s.client.token, `${base}/comments`);
    const clientReadAt = written.at(-1)?.at as string;
    await check(s.client, ['public'], clientReadAt);
    await post(s.judge, 'private');
    await check(s.client, ['public'], clientReadAt);

    // A role change: the client becomes a judge and reads private comments from now on,
    // including the ones written before; back to client, they stop counting.
    await addMember(t, s.repository.id, s.client.id, 'judge');
    await check(s.client, ['public', 'private'], clientReadAt);
    await addMember(t, s.repository.id, s.client.id, 'client');
    await check(s.client, ['public'], clientReadAt);

    // Leaving the company: internal comments stop counting for that user.
    await t.container.database.db
      .update(companyMembers)
      .set({ disabledAt: new Date() })
      .where(and(eq(companyMembers.userId, s.companyUser.id), eq(companyMembers.companyId, s.company.id)));
    await t.settleCredentials();
    const afterLeaving = await getJson(t, s.companyUser.token, `${base}`);
    expect(afterLeaving.status).toBe(404);
    await t.container.database.db
      .update(companyMembers)
      .set({ disabledAt: null })
      .where(and(eq(companyMembers.userId, s.companyUser.id), eq(companyMembers.companyId, s.company.id)));
    await t.settleCredentials();
    await check(s.companyUser, ['public', 'private', 'internal'], null);

    // Deleting the latest comments: counts and lastCommentAt fall back to what remains.
    for (const c of written.filter((w) => w.visibility === 'private' || w.visibility === 'hidden')) {
      const res = await t.app.inject({
        method: 'DELETE',
        url: `${base}/comments/${c.id}`,
        headers: { authorization: `Bearer ${s.admin.token}` },
      });
      expect(res.statusCode).toBeLessThan(300);
      c.deleted = true;
    }
    await check(s.reviewer, ['public', 'private'], null);
    await check(s.companyUser, ['public', 'private', 'internal'], null);
    await check(s.admin, ['public', 'private', 'internal', 'hidden'], null);
    await check(s.client, ['public'], clientReadAt);
  });
});
