import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  addMember,
  buildComment,
  buildCompany,
  buildFinding,
  buildLabel,
  buildMember,
  buildRepository,
  buildRepositoryTeam,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { findingLabels, findingRelatedFiles, platformPermissions } from '../../db/schema/index.ts';
import type { Finding } from './findings.schemas.ts';

const t = sharedTestApp();

interface Listing {
  findings: Finding[];
  filteredTotal: number;
  nextValue: string | null;
  msg?: string;
}

const list = (token: string, query = '') =>
  getJson<Listing>(t, token, `/api/v0/repositories/all-findings${query ? `?${query}` : ''}`);
const titles = (res: { body: Listing }) => res.body.findings.map((f) => f.title).sort();

/** A company with one repository, a company user to look, and a few findings with known attributes. */
async function scenario() {
  const team = await buildRepositoryTeam(t);
  const { repository } = team;
  const db = t.container.database.db;
  const bug = await buildLabel(t, { repositoryId: repository.id, name: 'Bug' });
  const gas = await buildLabel(t, { repositoryId: repository.id, name: 'gas' });
  const a = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Alpha overflow',
    description: 'An integer 100% overflow',
    status: 'new',
    severity: 'high',
    createdBy: team.reviewer.id,
  });
  const b = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Bravo reentrancy',
    description: 'withdraw_all calls out',
    status: 'confirmed',
    severity: 'critical',
    createdBy: team.otherReviewer.id,
    assignedTo: team.judge.id,
  });
  const c = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Charlie gas',
    description: 'loop',
    status: 'fixed',
    severity: 'gas_optimization',
    createdBy: team.reviewer.id,
    duplicateOf: b.id,
  });
  const d = await buildFinding(t, {
    repositoryId: repository.id,
    title: 'Delta disputed',
    status: 'disputed',
    severity: 'low',
    createdBy: team.judge.id,
  });
  await db.insert(findingLabels).values([
    { findingId: a.id, labelId: bug.id },
    { findingId: b.id, labelId: gas.id },
    { findingId: b.id, labelId: bug.id },
  ]);
  await db.insert(findingRelatedFiles).values([
    { findingId: a.id, path: 'src/Token.sol', startLine: 1, endLine: 2 },
    { findingId: b.id, path: 'src/Vault.sol' },
    { findingId: b.id, path: 'src/Token.sol' },
  ]);
  return { ...team, a, b, c, d };
}

describe('GET /api/v0/repositories/all-findings filters', () => {
  it('filters by status and severity lists and rejects unknown values naming the parameter', async () => {
    const s = await scenario();
    const tok = s.companyUser.token;
    expect(titles(await list(tok, 'status=new,fixed'))).toEqual(['Alpha overflow', 'Charlie gas']);
    expect(titles(await list(tok, 'severity=critical,low'))).toEqual(['Bravo reentrancy', 'Delta disputed']);
    const bad = await list(tok, 'status=new,nope');
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/'status'/);
    const badSev = await list(tok, 'severity=urgent');
    expect(badSev.status).toBe(400);
    expect(badSev.body.msg).toMatch(/'severity'/);
    expect((await list(tok, 'status=,')).status).toBe(400);
  });

  it('filters duplicates, labels (OR), unlabeled, and refuses label with unlabeled', async () => {
    const s = await scenario();
    const tok = s.companyUser.token;
    expect(titles(await list(tok, 'duplicates=false'))).toEqual([
      'Alpha overflow',
      'Bravo reentrancy',
      'Delta disputed',
    ]);
    expect((await list(tok, 'duplicates=true')).body.filteredTotal).toBe(4);
    expect(titles(await list(tok, 'label=bug'))).toEqual(['Alpha overflow', 'Bravo reentrancy']);
    expect(titles(await list(tok, 'label=GAS,nothing'))).toEqual(['Bravo reentrancy']);
    expect(titles(await list(tok, 'unlabeled=true'))).toEqual(['Charlie gas', 'Delta disputed']);
    expect((await list(tok, 'unlabeled=false')).body.filteredTotal).toBe(4);
    const both = await list(tok, 'label=bug&unlabeled=true');
    expect(both.status).toBe(400);
    expect(both.body.msg).toMatch(/mutually exclusive/);
  });

  it('applies each filter_for', async () => {
    const s = await scenario();
    const tok = s.companyUser.token;
    expect(titles(await list(tok, 'filter_for=client_recommended'))).toEqual(['Bravo reentrancy']);
    const withDup = await list(tok, 'filter_for=with_duplicates');
    expect(withDup.status, JSON.stringify(withDup.body)).toBe(200);
    expect(titles(withDup)).toEqual(['Bravo reentrancy']);
    expect(titles(await list(tok, 'filter_for=require_review'))).toEqual([
      'Alpha overflow',
      'Delta disputed',
    ]);
    // With a status filter: the statuses in both, none in common giving no finding.
    const newOrFixed = await list(tok, 'filter_for=require_review&status=new,fixed');
    expect(titles(newOrFixed)).toEqual(['Alpha overflow']);
    expect(newOrFixed.body.filteredTotal).toBe(1);
    const none = await list(tok, 'filter_for=require_review&status=fixed,confirmed');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ findings: [], filteredTotal: 0, nextValue: null });
    expect((await list(tok, 'filter_for=everything')).status).toBe(400);
  });

  it('filters by created_by (OR), assigned_to, path and q', async () => {
    const s = await scenario();
    const tok = s.companyUser.token;
    expect(titles(await list(tok, `created_by=${s.reviewer.username.toUpperCase()}`))).toEqual([
      'Alpha overflow',
      'Charlie gas',
    ]);
    expect(titles(await list(tok, `created_by=${s.otherReviewer.username},${s.judge.username}`))).toEqual([
      'Bravo reentrancy',
      'Delta disputed',
    ]);
    expect(titles(await list(tok, `assigned_to=${s.judge.username}`))).toEqual(['Bravo reentrancy']);
    expect(titles(await list(tok, 'path=src/Token.sol'))).toEqual(['Alpha overflow', 'Bravo reentrancy']);
    expect(titles(await list(tok, 'path=src'))).toEqual([]);
    expect(titles(await list(tok, 'q=REENTRANCY'))).toEqual(['Bravo reentrancy']);
    expect(titles(await list(tok, 'q=withdraw_all'))).toEqual(['Bravo reentrancy']);
    // LIKE wildcards in q are literal.
    expect(titles(await list(tok, 'q=100%25'))).toEqual(['Alpha overflow']);
    expect(titles(await list(tok, 'q=_'))).toEqual(['Bravo reentrancy']);
    expect(titles(await list(tok, `q=${s.d.number}`))).toEqual(['Delta disputed']);
  });

  it('supports the s search syntax, combined by AND with the other parameters', async () => {
    const s = await scenario();
    const tok = s.companyUser.token;
    const q = (search: string, extra = '') => list(tok, `s=${encodeURIComponent(search)}${extra}`);
    expect(titles(await q('status:new,fixed severity:high'))).toEqual(['Alpha overflow']);
    expect(titles(await q('label:gas'))).toEqual(['Bravo reentrancy']);
    expect(titles(await q(`created_by:${s.reviewer.username}`))).toEqual(['Alpha overflow', 'Charlie gas']);
    expect(titles(await q(`assigned_to:${s.judge.username}`))).toEqual(['Bravo reentrancy']);
    expect(titles(await q(`repository:${s.repository.name} is:duplicate`))).toEqual(['Charlie gas']);
    expect(titles(await q(`repository:${s.repository.id} path:"src/Vault.sol"`))).toEqual([
      'Bravo reentrancy',
    ]);
    expect(titles(await q('"bravo reentrancy"'))).toEqual(['Bravo reentrancy']);
    expect(titles(await q('alpha overflow'))).toEqual(['Alpha overflow']);
    expect(titles(await q('status:new', '&severity=critical'))).toEqual([]);
    for (const bad of ['colour:red', 'status:nope', 'is:starred', 'label:"open', 'status:']) {
      const res = await q(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.msg, bad).toMatch(/'s'/);
    }
  });

  it('filters by unread comments (parameter and is:unread)', async () => {
    const s = await scenario();
    await buildComment(t, { findingId: s.a.id, authorId: s.judge.id, visibility: 'public' });
    await buildComment(t, { findingId: s.b.id, authorId: s.companyUser.id, visibility: 'public' });
    await buildComment(t, { findingId: s.c.id, authorId: s.judge.id, visibility: 'hidden' });
    const tok = s.companyUser.token;
    expect(titles(await list(tok, 'with_unread_comments=true'))).toEqual(['Alpha overflow']);
    expect(titles(await list(tok, 's=is:unread'))).toEqual(['Alpha overflow']);
    expect(titles(await list(tok, 'with_unread_comments=false'))).toEqual([
      'Bravo reentrancy',
      'Charlie gas',
      'Delta disputed',
    ]);
    const listed = await list(tok, 'with_unread_comments=true');
    expect(listed.body.findings[0]).toMatchObject({ hasUnreadComments: true, unreadCommentsNumber: 1 });
    await sendJson(t, tok, 'PUT', `/api/v0/repositories/${s.repository.id}/findings/${s.a.id}/read`);
    expect((await list(tok, 'with_unread_comments=true')).body.filteredTotal).toBe(0);
  });

  it('filters by repositories (repeated or comma-separated) and by role', async () => {
    const company = await buildCompany(t);
    const r1 = await buildRepository(t, { companyId: company.id, name: 'one' });
    const r2 = await buildRepository(t, { companyId: company.id, name: 'two' });
    const r3 = await buildRepository(t, { companyId: company.id, name: 'three' });
    for (const r of [r1, r2, r3]) await buildFinding(t, { repositoryId: r.id, title: r.name });
    const user = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    await addMember(t, r2.id, user.id, 'judge');
    await addMember(t, r3.id, user.id, 'client');
    expect(titles(await list(user.token, `repositories=${r1.id}&repositories=${r2.id}`))).toEqual([
      'one',
      'two',
    ]);
    expect(titles(await list(user.token, `repositories=${r1.id},${r3.id}`))).toEqual(['one', 'three']);
    expect(titles(await list(user.token, 'role=judge'))).toEqual(['two']);
    expect(titles(await list(user.token, 'role=admin'))).toEqual([]);
    const bad = await list(user.token, 'repositories=not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.msg).toMatch(/'repositories'/);
    const badRole = await list(user.token, 'role=owner');
    expect(badRole.status).toBe(400);
    expect(badRole.body.msg).toMatch(/role/);
  });

  it('enforces the limit bounds and hands back a continuing cursor for limit=0', async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const user = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    for (let i = 0; i < 25; i++) await buildFinding(t, { repositoryId: repository.id });
    const first = await list(user.token);
    expect(first.body.findings).toHaveLength(20);
    expect(first.body.filteredTotal).toBe(25);
    expect((await list(user.token, 'limit=100')).body.findings).toHaveLength(25);
    const zero = await list(user.token, 'limit=0');
    expect(zero.body).toMatchObject({ findings: [], filteredTotal: 25 });
    expect(zero.body.nextValue).toBeTruthy();
    const cont = await list(user.token, `limit=5&next=${zero.body.nextValue}`);
    expect(cont.body.findings.map((f) => f.number)).toEqual([1, 2, 3, 4, 5]);
    // A zero-size page continues only when something follows its position.
    const beforeLast = await list(user.token, 'limit=24');
    expect((await list(user.token, `limit=0&next=${beforeLast.body.nextValue}`)).body.nextValue).toBeTruthy();
    await t.container.database.executeSql('delete from findings where repository_id = $1 and number = 25', [
      repository.id,
    ]);
    const atEnd = await list(user.token, `limit=0&next=${beforeLast.body.nextValue}`);
    expect(atEnd.body).toMatchObject({ findings: [], filteredTotal: 24, nextValue: null });
    const unknown = await list(user.token, 'bogus=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.msg).toMatch(/bogus/);
    for (const bad of ['limit=101', 'limit=-1', 'limit=abc', 'limit=1.5']) {
      const res = await list(user.token, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.msg, bad).toMatch(/limit/);
    }
    for (const bad of [
      'order_by=title_asc',
      'with_unread_comments=maybe',
      'duplicates=perhaps',
      'unlabeled=2',
    ]) {
      const res = await list(user.token, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.msg, bad).toMatch(new RegExp(bad.split('=')[0] as string));
    }
    const empty = await list(user.token, 'status=spam');
    expect(empty.body).toEqual({ findings: [], filteredTotal: 0, nextValue: null });
  });

  it('rejects a cursor reused with other filters or ordering, and cursors that are not ours', async () => {
    const company = await buildCompany(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const user = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    for (let i = 0; i < 3; i++) await buildFinding(t, { repositoryId: repository.id, severity: 'high' });
    const page = await list(user.token, 'limit=1&severity=high');
    const next = page.body.nextValue as string;
    expect((await list(user.token, `limit=2&severity=high&next=${next}`)).status).toBe(200);
    // An equivalent filter (same set in another order and case) continues the pagination.
    expect((await list(user.token, `limit=2&severity=high,high&next=${next}`)).status).toBe(200);
    for (const other of ['severity=low', 'severity=high&order_by=number_desc', 'severity=high&q=x', '']) {
      const res = await list(user.token, `${other}&next=${next}`);
      expect(res.status, other).toBe(400);
      expect(res.body.msg).toMatch(/next/);
    }
    const forged = Buffer.from(JSON.stringify({ k: ['abc', 'x'], f: 'y' })).toString('base64url');
    for (const bad of ['garbage!', 'e30', forged])
      expect((await list(user.token, `next=${bad}`)).status).toBe(400);
  });
});

describe('GET /api/v0/repositories/all-findings access', () => {
  it('shows each user exactly the findings the access rules allow', async () => {
    const team = await buildRepositoryTeam(t);
    const mine = await buildFinding(t, {
      repositoryId: team.repository.id,
      title: 'mine',
      createdBy: team.reviewer.id,
    });
    await buildFinding(t, {
      repositoryId: team.repository.id,
      title: 'theirs',
      createdBy: team.otherReviewer.id,
    });
    await buildFinding(t, {
      repositoryId: team.repository.id,
      title: 'draft',
      createdBy: team.reviewer.id,
      published: false,
    });
    const all = ['mine', 'theirs'];
    expect(titles(await list(team.reviewer.token))).toEqual(['mine']);
    for (const user of [team.client, team.judge, team.triager, team.admin, team.companyUser]) {
      expect(titles(await list(user.token))).toEqual(all);
    }
    const stranger = await buildUser(t);
    expect((await list(stranger.token)).body).toEqual({ findings: [], filteredTotal: 0, nextValue: null });
    const reader = await buildUser(t);
    await t.container.database.db
      .insert(platformPermissions)
      .values({ userId: reader.id, permission: 'read_all_companies' });
    expect(titles(await list(reader.token, `repositories=${team.repository.id}`))).toEqual(all);
    // A reviewer removed from the repository loses access; showAllFindings opens the rest to reviewers.
    await addMember(t, team.repository.id, team.otherReviewer.id, 'reviewer', { deletedAt: new Date() });
    expect(titles(await list(team.otherReviewer.token))).toEqual([]);
    const open = await buildRepository(t, { companyId: team.company.id, showAllFindings: true });
    const openReviewer = await buildMember(t, { repositoryId: open.id, role: 'reviewer' });
    await buildFinding(t, { repositoryId: open.id, title: 'open-other', createdBy: team.reviewer.id });
    expect(titles(await list(openReviewer.token))).toEqual(['open-other']);
    // Private notes and reviewer-hidden labels stay hidden from reviewers.
    const hidden = await buildLabel(t, { repositoryId: team.repository.id, reviewerRead: false });
    await t.container.database.db.insert(findingLabels).values({ findingId: mine.id, labelId: hidden.id });
    expect((await list(team.reviewer.token)).body.findings[0]?.labels).toEqual([]);
    expect((await list(team.judge.token, `label=${hidden.name}`)).body.filteredTotal).toBe(1);
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    crossTenant: false,
    request: async (app, companyId) => {
      const user = await buildUser(app, { companyId, companyRole: 'member' });
      return { url: '/api/v0/repositories/all-findings', token: user.token };
    },
  });
});
