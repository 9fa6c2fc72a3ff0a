import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompanyWorld, buildUser, type TestUser } from '../../../test/helpers/factories.ts';
import { auditLog } from '../../db/schema/index.ts';
import type { AuditAction } from '../../organization/audit/audit.repo.ts';
import { createCursorCodec } from '../pagination/cursor.ts';

const t = sharedTestApp();

interface Entry {
  type: string;
  id: string;
  action: AuditAction;
  target: {
    userId: string;
    username: string;
    name: string;
    avatar: string | null;
    disabledAt: string | null;
  } | null;
  createdBy: { userId: string } | null;
  createdAt: string;
  sourcehost_account_name: string | null;
}
interface Page {
  items: Entry[];
  nextValue: string | null;
}

const url = (companyId: string, query = '') => `/api/v0/companies/${companyId}/audit-log${query}`;

async function page(companyId: string, query: string, token = t.adminToken): Promise<Page> {
  return apiOk<Page>(t, 'GET', url(companyId, query), token);
}

/** Every entry, page by page, following nextValue. */
async function all(
  companyId: string,
  query: string,
  between?: (pageNo: number) => Promise<void>,
): Promise<Entry[]> {
  const out: Entry[] = [];
  let next: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = query ? '&' : '';
    const p = await page(companyId, `?${query}${next ? `${sep}next=${encodeURIComponent(next)}` : ''}`);
    out.push(...p.items);
    if (!p.nextValue) return out;
    next = p.nextValue;
    await between?.(i);
  }
  throw new Error('pagination did not end');
}

/** Inserts entries directly, with chosen timestamps (to make ties). */
async function insertEntries(
  companyId: string,
  rows: Array<{ action?: AuditAction; at: Date; target?: string | null; by?: string | null }>,
): Promise<string[]> {
  const inserted = await t.container.database.db
    .insert(auditLog)
    .values(
      rows.map((r) => ({
        companyId,
        action: r.action ?? 'user_disabled',
        targetUserId: r.target ?? null,
        performedBy: r.by ?? null,
        createdAt: r.at,
      })),
    )
    .returning({ id: auditLog.id });
  return inserted.map((r) => r.id);
}

/** The entries sorted as the API sorts them: createdAt, then id, in one direction. */
function sorted(entries: Array<{ id: string; createdAt: string }>, order: 'asc' | 'desc') {
  const s = [...entries].sort((a, b) =>
    a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
  );
  return order === 'asc' ? s : s.reverse();
}

describe('GET /api/v0/companies/{company_id}/audit-log', () => {
  it('renders entries with type, target, createdBy, createdAt and sourcehost_account_name', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    await apiOk(t, 'POST', `/api/v0/companies/${company.id}/users/${member.id}/disable`, manager.token);
    const put = await api(
      t,
      'PUT',
      `/api/v0/companies/${company.id}/integrations/sourcehost`,
      manager.token,
      {
        credentials: { token: 'ghp_secret' },
        settings: { accountName: 'acme-org' },
      },
    );
    expect(put.statusCode).toBeLessThan(300);
    const { items, nextValue } = await page(company.id, '', manager.token);
    expect(nextValue).toBeNull();
    const [integration, disabled] = items;
    expect(integration).toMatchObject({
      type: 'company_audit_log',
      action: 'sourcehost_integration_added',
      target: null,
      createdBy: { userId: manager.id },
      sourcehost_account_name: 'acme-org',
    });
    expect(disabled).toMatchObject({
      type: 'company_audit_log',
      action: 'user_disabled',
      target: { userId: member.id, username: member.username, avatar: null, disabledAt: null },
      createdBy: { userId: manager.id, username: manager.username },
      sourcehost_account_name: null,
    });
    expect(new Date(disabled!.createdAt).toISOString()).toBe(disabled!.createdAt);
    expect(disabled!.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('orders by createdAt descending by default and ascending on request, ties broken by id, across pages', async () => {
    const { company } = await buildCompanyWorld(t); // writes two user_invited entries
    // Their times can differ by less than the millisecond an entry shows: pin them to one
    // millisecond (a tie broken by id), so that the expected order is computable from the payload.
    await t.container.database.db
      .update(auditLog)
      .set({ createdAt: new Date('2026-05-01T10:00:00.000Z') })
      .where(eq(auditLog.companyId, company.id));
    const tie = new Date('2026-05-01T12:00:00.000Z');
    await insertEntries(company.id, [
      { at: new Date('2026-05-01T11:00:00.000Z') },
      ...Array.from({ length: 5 }, () => ({ at: tie })),
      { at: new Date('2026-05-01T13:00:00.000Z') },
    ]);
    const everything = (await page(company.id, '?limit=100')).items;
    expect(everything).toHaveLength(9);
    expect(everything.map((e) => e.id)).toEqual(sorted(everything, 'desc').map((e) => e.id));
    for (const limit of [1, 2, 3, 4]) {
      expect((await all(company.id, `limit=${limit}`)).map((e) => e.id)).toEqual(
        sorted(everything, 'desc').map((e) => e.id),
      );
      expect((await all(company.id, `limit=${limit}&order_by=created_at_asc`)).map((e) => e.id)).toEqual(
        sorted(everything, 'asc').map((e) => e.id),
      );
    }
    expect((await page(company.id, '?order_by=created_at_desc&limit=100')).items).toEqual(everything);
  });

  it('never skips or repeats entries while new ones are written between pages', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const base = Date.parse('2026-06-01T00:00:00.000Z');
    await insertEntries(
      company.id,
      Array.from({ length: 12 }, (_, i) => ({ at: new Date(base + Math.floor(i / 3) * 1000) })),
    );
    const before = (await page(company.id, '?limit=100')).items.map((e) => e.id);
    for (const order of ['created_at_desc', 'created_at_asc']) {
      const newcomers: string[] = [];
      const seen = await all(company.id, `limit=4&order_by=${order}`, async (i) => {
        // New entries land at the newest end, and also exactly at the tie timestamp of existing ones.
        const invited = await buildUser(t);
        await apiOk(t, 'POST', `/api/v0/companies/${company.id}/users`, manager.token, {
          username: invited.username,
        });
        newcomers.push(...(await insertEntries(company.id, [{ at: new Date(base + (i % 4) * 1000) }])));
      });
      const ids = seen.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of before) expect(ids).toContain(id);
    }
  });

  it('filters by target users, performing users (ids or usernames, repeated or comma-separated), actions and since', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const other = await buildUser(t, { companyId: company.id });
    const d = (u: TestUser) =>
      apiOk(t, 'POST', `/api/v0/companies/${company.id}/users/${u.id}/disable`, t.adminToken);
    const r = (u: TestUser) =>
      apiOk(t, 'POST', `/api/v0/companies/${company.id}/users/${u.id}/reenable`, manager.token);
    await d(member);
    await r(member);
    await d(other);
    const actionsOf = (p: Page) =>
      p.items.map(
        (e) =>
          `${e.action}:${e.target?.userId === member.id ? 'member' : e.target?.userId === other.id ? 'other' : e.target?.userId === manager.id ? 'manager' : '?'}`,
      );

    expect(actionsOf(await page(company.id, `?target_users=${member.id}&limit=100`))).toEqual([
      'user_reenabled:member',
      'user_disabled:member',
      'user_invited:member',
    ]);
    const both = [
      `?target_users=${member.username}&target_users=${other.id}&limit=100`,
      `?target_users=${member.username.toUpperCase()},${other.id}&limit=100`,
    ];
    for (const q of both) expect((await page(company.id, q)).items).toHaveLength(5);
    expect(actionsOf(await page(company.id, `?performing_users=${manager.username}&limit=100`))).toEqual([
      'user_reenabled:member',
    ]);
    expect(actionsOf(await page(company.id, `?actions=user_disabled&limit=100`))).toEqual([
      'user_disabled:other',
      'user_disabled:member',
    ]);
    expect(
      (await page(company.id, `?actions=user_disabled,user_reenabled&target_users=${member.id}&limit=100`))
        .items,
    ).toHaveLength(2);
    expect((await page(company.id, '?target_users=nosuchuser&limit=100')).items).toEqual([]);
    expect((await page(company.id, '?target_users=00000000-0000-4000-8000-000000000000')).items).toEqual([]);

    const all3 = (await page(company.id, '?limit=100')).items;
    const since = all3[1]!.createdAt;
    const after = (await page(company.id, `?since=${encodeURIComponent(since)}&limit=100`)).items;
    expect(after.map((e) => e.id)).toEqual(all3.filter((e) => e.createdAt >= since).map((e) => e.id));
    expect((await page(company.id, '?since=2999-01-01T00:00:00Z')).items).toEqual([]);
  });

  it('leaves entries without a target or a performer out of user filters, and keeps them otherwise', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const [anonymous] = await insertEntries(company.id, [
      { action: 'sourcehost_integration_removed', at: new Date(), target: null, by: null },
    ]);
    const everything = (await page(company.id, '?limit=100')).items;
    expect(everything.find((e) => e.id === anonymous)).toMatchObject({ target: null, createdBy: null });
    expect(
      (await page(company.id, `?target_users=${manager.id}&limit=100`)).items.map((e) => e.id),
    ).not.toContain(anonymous);
    expect(
      (await page(company.id, `?performing_users=admin&limit=100`)).items.map((e) => e.id),
    ).not.toContain(anonymous);
    expect(
      (await page(company.id, '?actions=sourcehost_integration_removed')).items.map((e) => e.id),
    ).toEqual([anonymous]);
  });

  it('applies the limits: default 5, 0 gives no entries and a cursor from the same place, 100 at most', async () => {
    const { company } = await buildCompanyWorld(t);
    await insertEntries(
      company.id,
      Array.from({ length: 8 }, (_, i) => ({ at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) })),
    );
    const first = await page(company.id, '');
    expect(first.items).toHaveLength(5);
    expect(first.nextValue).toEqual(expect.any(String));

    const zero = await page(company.id, '?limit=0');
    expect(zero.items).toEqual([]);
    const fromZero = await page(company.id, `?limit=3&next=${zero.nextValue}`);
    expect(fromZero.items.map((e) => e.id)).toEqual(first.items.slice(0, 3).map((e) => e.id));
    const zeroMid = await page(company.id, `?limit=0&next=${first.nextValue}`);
    expect(zeroMid).toEqual({ items: [], nextValue: first.nextValue });
    expect((await page(company.id, '?limit=100')).items).toHaveLength(10);

    const { company: empty } = await buildCompanyWorld(t);
    expect(await page(empty.id, '?limit=0&actions=sourcehost_integration_added')).toEqual({
      items: [],
      nextValue: null,
    });
    const last = await page(company.id, `?limit=5&next=${first.nextValue}`);
    expect(last.items).toHaveLength(5);
    expect(last.nextValue).toBeNull();
  });

  it('answers 400 naming the parameter for invalid values', async () => {
    const { company } = await buildCompanyWorld(t);
    const cases: Array<[string, string]> = [
      ['?limit=101', 'limit'],
      ['?limit=-1', 'limit'],
      ['?limit=abc', 'limit'],
      ['?order_by=created_at', 'order_by'],
      ['?actions=user_deleted', 'actions'],
      ['?actions=user_invited,nope', 'actions'],
      ['?target_users=not%20a%20user', 'target_users'],
      ['?performing_users=%40home', 'performing_users'],
      ['?since=yesterday', 'since'],
      ['?unknown=1', 'unknown'],
      [`?target_users=${Array.from({ length: 101 }, (_, i) => `u${i}`).join(',')}`, 'target_users'],
    ];
    for (const [query, name] of cases) {
      const res = await api(t, 'GET', url(company.id, query), t.adminToken);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().msg, query).toContain(name);
    }
  });

  it('refuses a cursor used with other filters, another order, another company, or garbage', async () => {
    const { company } = await buildCompanyWorld(t);
    const { company: other } = await buildCompanyWorld(t);
    const first = await page(company.id, '?limit=1&actions=user_invited');
    expect(first.nextValue).not.toBeNull();
    const next = encodeURIComponent(first.nextValue!);
    for (const target of [
      url(company.id, `?limit=1&next=${next}`),
      url(company.id, `?limit=1&actions=user_disabled&next=${next}`),
      url(company.id, `?limit=1&actions=user_invited&order_by=created_at_asc&next=${next}`),
      url(other.id, `?limit=1&actions=user_invited&next=${next}`),
      url(company.id, '?next=garbage'),
      url(
        company.id,
        `?next=${Buffer.from(JSON.stringify({ k: ['x', 'y'], f: 'z' })).toString('base64url')}`,
      ),
    ]) {
      const res = await api(t, 'GET', target, t.adminToken);
      expect(res.statusCode, target).toBe(400);
      expect(res.json()).toEqual({ msg: expect.stringContaining('next') });
    }
    expect(
      (await api(t, 'GET', url(company.id, `?limit=1&actions=user_invited&next=${next}`), t.adminToken))
        .statusCode,
    ).toBe(200);
  });

  it('refuses a well-formed cursor whose keys are not ours', async () => {
    const { company } = await buildCompanyWorld(t);
    const first = await page(company.id, '?limit=1');
    const [body, mac] = first.nextValue!.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString()) as {
      k: unknown[];
      f: string;
    };
    // Signed with the service's own key, so that it reaches the key checks; unsigned, edited keys
    // fail the signature (test/security/cursors.test.ts).
    const forged = createCursorCodec(t.config.secretKey!).encode(
      ["'; drop table audit_log; --", decoded.k[1]],
      decoded.f,
    );
    const unsigned = `${Buffer.from(JSON.stringify({ ...decoded, k: ['2020-01-01T00:00:00.000000Z', decoded.k[1]] })).toString('base64url')}.${mac}`;
    expect((await api(t, 'GET', url(company.id, `?limit=1&next=${unsigned}`), t.adminToken)).statusCode).toBe(
      400,
    );
    const res = await api(t, 'GET', url(company.id, `?limit=1&next=${forged}`), t.adminToken);
    expect(res.statusCode).toBe(400);
  });

  it('is for company managers and read_all_companies admins: members 403, others 404', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    const stranger = await buildUser(t);
    expect((await api(t, 'GET', url(company.id), manager.token)).statusCode).toBe(200);
    expect((await api(t, 'GET', url(company.id), reader.token)).statusCode).toBe(200);
    expect((await api(t, 'GET', url(company.id), member.token)).statusCode).toBe(403);
    expect((await api(t, 'GET', url(company.id), stranger.token)).statusCode).toBe(404);
    expect((await api(t, 'GET', url('00000000-0000-4000-8000-000000000000'), t.adminToken)).statusCode).toBe(
      404,
    );
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const manager = await buildUser(app, { companyId, companyRole: 'manager' });
      return { url: url(companyId), token: manager.token };
    },
  });
});
