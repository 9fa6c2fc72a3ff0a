import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  addMember,
  buildMember,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
  fileFinding,
} from '../../../test/helpers/factories.ts';
import { comments, notifications, repositoryMembers, users } from '../../db/schema/index.ts';
import type { Finding } from '../findings/findings.schemas.ts';
import type { CommentThread } from './comments.schemas.ts';
import { MAX_COMMENT_CHARS } from './comments.schemas.ts';

const t = sharedTestApp();

const findingUrl = (repoId: string, ref: string | number) => `/api/v0/repositories/${repoId}/findings/${ref}`;
const commentUrl = (repoId: string, ref: string | number) => `${findingUrl(repoId, ref)}/comment`;

async function comment(
  token: string,
  repoId: string,
  ref: string | number,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await sendJson<{ id: string }>(t, token, 'POST', commentUrl(repoId, ref), body);
  if (res.status !== 201) throw new Error(`comment → ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function threads(token: string, repoId: string, ref: string | number): Promise<CommentThread[]> {
  const res = await getJson<{ threads: CommentThread[] }>(t, token, `${findingUrl(repoId, ref)}/comments`);
  expect(res.status).toBe(200);
  return res.body.threads;
}

async function notified(commentId: string): Promise<string[]> {
  const rows = await t.container.database.db
    .select({ userId: notifications.userId })
    .from(notifications)
    .where(eq(notifications.commentId, commentId));
  return rows.map((r) => r.userId).sort();
}

async function team() {
  const built = await buildRepositoryTeam(t);
  const finding = await fileFinding(t, built.reviewer.token, built.repository.id);
  return { ...built, finding };
}

describe('POST /api/v0/repositories/{repo_id}/findings/{finding_ref}/comment', () => {
  it('stores the markdown exactly as sent, by finding id or number, and answers {id}', async () => {
    const s = await team();
    const content = '  **Reproduced**\r\n\n```js\nwithdraw()\n```\n\ttrailing  ';
    const res = await sendJson<{ id: string }>(
      t,
      s.reviewer.token,
      'POST',
      commentUrl(s.repository.id, s.finding.number),
      {
        content,
      },
    );
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['id']);
    const byId = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: 'second',
      parent: null,
    });
    const [row] = await t.container.database.db.select().from(comments).where(eq(comments.id, res.body.id));
    expect(row).toMatchObject({ content, visibility: 'public', parentId: null, authorId: s.reviewer.id });
    const listed = await threads(s.judge.token, s.repository.id, s.finding.number);
    expect(listed.map((c) => c.id)).toEqual([res.body.id, byId]);
    expect(listed[0]).toMatchObject({
      content,
      visibility: 'public',
      parent: null,
      replies: [],
      editedAt: null,
      deletedAt: null,
      author: { userId: s.reviewer.id, username: s.reviewer.username, avatar: null, disabledAt: null },
    });
  });

  it('answers 400 {msg} for bad bodies and references, 404 for unknown findings', async () => {
    const s = await team();
    const url = commentUrl(s.repository.id, s.finding.id);
    const tooLong = await sendJson<{ msg: string }>(t, s.judge.token, 'POST', url, {
      content: 'x'.repeat(MAX_COMMENT_CHARS + 1),
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.msg).toMatch(/content/);
    for (const body of [
      {},
      { content: '' },
      { content: 'a', visibility: 'secret' },
      { content: 'a', parent: 'x' },
    ]) {
      const res = await sendJson<{ msg: string }>(t, s.judge.token, 'POST', url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.msg).toBe('string');
    }
    expect(
      (await sendJson(t, s.judge.token, 'POST', commentUrl(s.repository.id, 'abc'), { content: 'a' })).status,
    ).toBe(400);
    expect(
      (await sendJson(t, s.judge.token, 'POST', commentUrl(s.repository.id, 999), { content: 'a' })).status,
    ).toBe(404);
    // The other reviewer does not see the finding (no showAllFindings): 404, not 403.
    expect((await sendJson(t, s.otherReviewer.token, 'POST', url, { content: 'a' })).status).toBe(404);
  });

  it('lets each role create only the visibilities DESIGN §7 allows', async () => {
    const s = await team();
    const url = commentUrl(s.repository.id, s.finding.id);
    const cases: Array<[string, string, number]> = [
      [s.reviewer.token, 'public', 201],
      [s.reviewer.token, 'private', 403],
      [s.judge.token, 'private', 201],
      [s.judge.token, 'internal', 403],
      [s.triager.token, 'private', 201],
      [s.companyUser.token, 'internal', 201],
      [s.companyUser.token, 'hidden', 403],
      [s.client.token, 'private', 403],
      [s.admin.token, 'hidden', 201],
      [t.adminToken, 'hidden', 201],
    ];
    for (const [token, visibility, status] of cases) {
      const res = await sendJson<{ msg?: string }>(t, token, 'POST', url, { content: 'c', visibility });
      expect(res.status, `${visibility} → ${JSON.stringify(res.body)}`).toBe(status);
      if (status !== 201) expect(typeof res.body.msg).toBe('string');
    }
    // A cross-company reader sees the finding but only reads.
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    expect((await sendJson(t, reader.token, 'POST', url, { content: 'c' })).status).toBe(403);
  });

  it('threads replies one level deep, on the same finding, never more visible than the thread', async () => {
    const s = await team();
    const other = await fileFinding(t, s.reviewer.token, s.repository.id);
    const url = commentUrl(s.repository.id, s.finding.id);
    const root = await comment(s.judge.token, s.repository.id, s.finding.id, { content: 'root' });
    const reply = await comment(s.reviewer.token, s.repository.id, s.finding.id, {
      content: 'reply',
      parent: root,
    });
    const privateRoot = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: 'private root',
      visibility: 'private',
    });
    const otherRoot = await comment(s.judge.token, s.repository.id, other.id, { content: 'elsewhere' });
    const refused = [
      { content: 'x', parent: otherRoot },
      { content: 'x', parent: reply },
      { content: 'x', parent: privateRoot, visibility: 'public' },
      { content: 'x', parent: '00000000-0000-4000-8000-000000000000' },
    ];
    for (const body of refused) {
      const res = await sendJson<{ msg: string }>(t, s.judge.token, 'POST', url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    await comment(s.triager.token, s.repository.id, s.finding.id, {
      content: 'internal reply',
      visibility: 'private',
      parent: privateRoot,
    });
    const listed = await threads(s.judge.token, s.repository.id, s.finding.id);
    expect(listed.map((c) => [c.content, c.replies.map((r) => r.content)])).toEqual([
      ['root', ['reply']],
      ['private root', ['internal reply']],
    ]);
  });
});

describe('GET …/findings/{finding_ref}/comments', () => {
  itEnforcesUserAuth(() => t, {
    method: 'GET',
    async request(app, companyId) {
      const repository = await buildRepository(app, { companyId });
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      const judge = await buildMember(app, { repositoryId: repository.id, role: 'judge' });
      const finding = await fileFinding(app, judge.token, repository.id);
      return { url: `${findingUrl(repository.id, finding.id)}/comments`, token: manager.token };
    },
  });

  it('shows each reader exactly the visibilities they may read', async () => {
    const s = await team();
    for (const [token, visibility] of [
      [s.reviewer.token, 'public'],
      [s.judge.token, 'private'],
      [s.companyUser.token, 'internal'],
      [s.admin.token, 'hidden'],
    ] as const) {
      await comment(token, s.repository.id, s.finding.id, { content: visibility, visibility });
    }
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const seen = async (token: string) =>
      (await threads(token, s.repository.id, s.finding.id)).map((c) => c.visibility);
    expect(await seen(s.reviewer.token)).toEqual(['public', 'private']); // the finding's author
    expect(await seen(s.judge.token)).toEqual(['public', 'private']);
    expect(await seen(s.triager.token)).toEqual(['public', 'private']);
    expect(await seen(s.client.token)).toEqual(['public']);
    expect(await seen(s.companyUser.token)).toEqual(['public', 'private', 'internal']);
    expect(await seen(reader.token)).toEqual(['public', 'private', 'internal']);
    expect(await seen(s.admin.token)).toEqual(['public', 'private', 'internal', 'hidden']);
    expect(await seen(t.adminToken)).toEqual(['public', 'private', 'internal', 'hidden']);
    // A reviewer on the repository who did not file the finding does not see it at all.
    const res = await getJson(
      t,
      s.otherReviewer.token,
      `${findingUrl(s.repository.id, s.finding.id)}/comments`,
    );
    expect(res.status).toBe(404);
  });

  it('marks the comments read for the caller only, and counts only what each user may read', async () => {
    const s = await team();
    await comment(s.judge.token, s.repository.id, s.finding.id, { content: 'p', visibility: 'private' });
    await comment(s.admin.token, s.repository.id, s.finding.id, { content: 'h', visibility: 'hidden' });
    await comment(s.companyUser.token, s.repository.id, s.finding.id, {
      content: 'i',
      visibility: 'internal',
    });
    await comment(s.reviewer.token, s.repository.id, s.finding.id, { content: 'own' });
    const unread = async (token: string) =>
      (await getJson<Finding>(t, token, findingUrl(s.repository.id, s.finding.id))).body;
    expect((await unread(s.reviewer.token)).unreadCommentsNumber).toBe(1);
    expect((await unread(s.companyUser.token)).unreadCommentsNumber).toBe(2);
    expect((await unread(s.admin.token)).unreadCommentsNumber).toBe(3);
    await threads(s.companyUser.token, s.repository.id, s.finding.id);
    expect(await unread(s.companyUser.token)).toMatchObject({
      hasUnreadComments: false,
      unreadCommentsNumber: 0,
    });
    expect((await unread(s.admin.token)).unreadCommentsNumber).toBe(3);
    const listed = await getJson<{ findings: Finding[] }>(
      t,
      s.admin.token,
      `/api/v0/repositories/all-findings?repositories=${s.repository.id}&with_unread_comments=true`,
    );
    expect(listed.body.findings.map((f) => f.id)).toEqual([s.finding.id]);
  });

  it('flags the comments that were unread before the listing, replies included, then none', async () => {
    const s = await team();
    const first = await comment(s.judge.token, s.repository.id, s.finding.id, { content: 'first' });
    await comment(s.reviewer.token, s.repository.id, s.finding.id, { content: 'own', parent: first });
    const flags = async (token: string) =>
      (await threads(token, s.repository.id, s.finding.id)).flatMap((c) => [
        [c.content, c.unread],
        ...c.replies.map((r) => [r.content, r.unread]),
      ]);
    // The reviewer's own reply is never unread for them.
    expect(await flags(s.reviewer.token)).toEqual([
      ['first', true],
      ['own', false],
    ]);
    await comment(s.triager.token, s.repository.id, s.finding.id, {
      content: 'later',
      parent: first,
    });
    const gone = await comment(s.judge.token, s.repository.id, s.finding.id, { content: 'gone' });
    const del = await sendJson(
      t,
      s.judge.token,
      'DELETE',
      `${findingUrl(s.repository.id, s.finding.id)}/comments/${gone}`,
    );
    expect(del.status).toBe(204);
    expect(await flags(s.reviewer.token)).toEqual([
      ['first', false],
      ['own', false],
      ['later', true],
      [null, false],
    ]);
    expect((await flags(s.reviewer.token)).some(([, unread]) => unread)).toBe(false);
  });

  it('gives each user the lastCommentAt of the comments they may read, also in last_comment orders', async () => {
    const s = await team();
    const quiet = await fileFinding(t, s.reviewer.token, s.repository.id);
    await comment(s.judge.token, s.repository.id, quiet.id, { content: 'public, first' });
    await comment(s.admin.token, s.repository.id, s.finding.id, {
      content: 'hidden, later',
      visibility: 'hidden',
    });
    const [hidden] = await t.container.database.db
      .select()
      .from(comments)
      .where(and(eq(comments.findingId, s.finding.id), eq(comments.visibility, 'hidden')));
    const get = async (token: string, id: string) =>
      (await getJson<Finding>(t, token, findingUrl(s.repository.id, id))).body.lastCommentAt;
    expect(await get(s.reviewer.token, s.finding.id)).toBeNull();
    expect(await get(s.admin.token, s.finding.id)).toBe(hidden?.createdAt.toISOString());
    const order = async (token: string) =>
      (
        await getJson<{ findings: Finding[] }>(
          t,
          token,
          `/api/v0/repositories/all-findings?repositories=${s.repository.id}&order_by=last_comment_desc`,
        )
      ).body.findings.map((f) => f.id);
    expect(await order(s.admin.token)).toEqual([s.finding.id, quiet.id]);
    expect(await order(s.reviewer.token)).toEqual([quiet.id, s.finding.id]);
  });
});

describe('PATCH and DELETE …/comments/{comment_id}', () => {
  it('lets the author edit, and the author or an admin delete, keeping the thread', async () => {
    const s = await team();
    const root = await comment(s.reviewer.token, s.repository.id, s.finding.id, { content: 'draft' });
    const reply = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: 'reply',
      parent: root,
    });
    const url = (id: string) => `${findingUrl(s.repository.id, s.finding.id)}/comments/${id}`;
    expect((await sendJson(t, s.judge.token, 'PATCH', url(root), { content: 'hijack' })).status).toBe(403);
    expect((await sendJson(t, s.admin.token, 'PATCH', url(root), { content: 'hijack' })).status).toBe(403);
    expect((await sendJson(t, s.reviewer.token, 'PATCH', url(root), { content: 'final' })).status).toBe(204);
    expect((await sendJson(t, s.reviewer.token, 'DELETE', url(reply))).status).toBe(403);
    expect((await sendJson(t, s.reviewer.token, 'DELETE', url(root))).status).toBe(204);
    expect((await sendJson(t, s.reviewer.token, 'PATCH', url(root), { content: 'again' })).status).toBe(409);
    const [thread] = await threads(s.judge.token, s.repository.id, s.finding.id);
    expect(thread).toMatchObject({ id: root, content: null, replies: [{ id: reply, content: 'reply' }] });
    expect(thread?.editedAt).not.toBeNull();
    expect(thread?.deletedAt).not.toBeNull();
    expect((await sendJson(t, s.admin.token, 'DELETE', url(reply))).status).toBe(204);
    // A comment the caller may not read is not found.
    const hidden = await comment(s.admin.token, s.repository.id, s.finding.id, {
      content: 'h',
      visibility: 'hidden',
    });
    expect((await sendJson(t, s.judge.token, 'DELETE', url(hidden))).status).toBe(404);
  });
});

describe('pings', () => {
  it('@project notifies the active company users once, never the author; code does not ping', async () => {
    const s = await team();
    const second = await buildUser(t, { companyId: s.company.id, companyRole: 'manager' });
    const disabled = await buildUser(t, { companyId: s.company.id, companyRole: 'member' });
    await t.container.database.db
      .update(users)
      .set({ disabledAt: new Date() })
      .where(eq(users.id, disabled.id));
    const byJudge = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: `@project please look, @project again and @${s.companyUser.username}`,
    });
    expect(await notified(byJudge)).toEqual([s.companyUser.id, second.id].sort());
    const bySelf = await comment(s.companyUser.token, s.repository.id, s.finding.id, {
      content: 'cc @project',
    });
    expect(await notified(bySelf)).toEqual([second.id]);
    const quoted = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: `\`@project\`\n\n\`\`\`\n@project @${s.triager.username}\n\`\`\`\n\n    @project indented\n\nmail ops@project.example`,
    });
    expect(await notified(quoted)).toEqual([]);
  });

  it('@username reaches reviewers, judges and triagers of the repository who may read the comment', async () => {
    const s = await team();
    const outsider = await buildUser(t);
    const removed = await buildMember(t, { repositoryId: s.repository.id, role: 'judge' });
    await t.container.database.db
      .update(repositoryMembers)
      .set({ deletedAt: new Date() })
      .where(eq(repositoryMembers.userId, removed.id));
    const names = [s.judge, s.triager, s.otherReviewer, s.client, s.admin, outsider, removed, s.reviewer]
      .map((u) => `@${u.username}`)
      .join(' ');
    const pub = await comment(s.reviewer.token, s.repository.id, s.finding.id, { content: `ping ${names}.` });
    // The other reviewer does not see this finding; clients and admins are not auditors.
    expect(await notified(pub)).toEqual([s.judge.id, s.triager.id].sort());
    await addMember(t, s.repository.id, s.otherReviewer.id, 'reviewer');
    const priv = await comment(s.judge.token, s.repository.id, s.finding.id, {
      content: `private for @${s.reviewer.username} and @${s.triager.username}`,
      visibility: 'private',
    });
    expect(await notified(priv)).toEqual([s.reviewer.id, s.triager.id].sort());
  });

  it("spends a reviewer's @project pings and refuses the comment with none left, storing nothing", async () => {
    const s = await team();
    await addMember(t, s.repository.id, s.reviewer.id, 'reviewer', { pingsLeft: 1 });
    const url = commentUrl(s.repository.id, s.finding.id);
    expect((await sendJson(t, s.reviewer.token, 'POST', url, { content: 'hey @project' })).status).toBe(201);
    const before = await t.container.database.db
      .select()
      .from(comments)
      .where(eq(comments.findingId, s.finding.id));
    const refused = await sendJson<{ msg: string }>(t, s.reviewer.token, 'POST', url, {
      content: 'again @project',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.msg).toMatch(/pings left/);
    const after = await t.container.database.db
      .select()
      .from(comments)
      .where(eq(comments.findingId, s.finding.id));
    expect(after).toHaveLength(before.length);
    // Code spans do not spend pings; judges never spend any.
    expect((await sendJson(t, s.reviewer.token, 'POST', url, { content: 'see `@project`' })).status).toBe(
      201,
    );
    expect((await sendJson(t, s.judge.token, 'POST', url, { content: '@project' })).status).toBe(201);
    const finding = await getJson<Finding>(t, s.judge.token, findingUrl(s.repository.id, s.finding.id));
    expect(finding.body.createdBy?.pingsLeft).toBe(0);
  });
});
