import { describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildCompany,
  buildRepositoryTeam,
  buildUser,
  fileFinding,
} from '../../../test/helpers/factories.ts';
import type { Notification } from './notifications.schemas.ts';

const t = sharedTestApp();

type Page = { notifications: Notification[]; nextValue: string | null };

describe('GET /api/v0/notifications', () => {
  itEnforcesUserAuth(() => t, {
    method: 'GET',
    crossTenant: false,
    async request(app, companyId) {
      const user = await buildUser(app, { companyId });
      return { url: '/api/v0/notifications', token: user.token };
    },
  });

  it('lists the caller’s ping notifications newest first, pages by cursor, filters unread, marks read', async () => {
    const s = await buildRepositoryTeam(t);
    const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
    const url = `/api/v0/repositories/${s.repository.id}/findings/${finding.id}/comment`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await sendJson<{ id: string }>(t, s.judge.token, 'POST', url, {
        content: `@${s.triager.username} look #${i}`,
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const pages: Notification[][] = [];
    let next: string | null = null;
    do {
      const res: { status: number; body: Page } = await getJson<Page>(
        t,
        s.triager.token,
        `/api/v0/notifications?limit=2${next ? `&next=${next}` : ''}`,
      );
      expect(res.status).toBe(200);
      pages.push(res.body.notifications);
      next = res.body.nextValue;
    } while (next);
    const all = pages.flat();
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(all.map((n) => n.commentId)).toEqual([...ids].reverse());
    expect(all[0]).toMatchObject({
      kind: 'comment_ping',
      readAt: null,
      payload: {
        findingId: finding.id,
        findingNumber: finding.number,
        repositoryId: s.repository.id,
        authorId: s.judge.id,
        authorUsername: s.judge.username,
        visibility: 'public',
        excerpt: `@${s.triager.username} look #4`,
      },
    });

    // Another user cannot read or mark them.
    expect((await getJson<Page>(t, s.judge.token, '/api/v0/notifications')).body.notifications).toEqual([]);
    const first = all[0] as Notification;
    expect((await sendJson(t, s.judge.token, 'PUT', `/api/v0/notifications/${first.id}/read`)).status).toBe(
      404,
    );
    expect((await sendJson(t, s.triager.token, 'PUT', `/api/v0/notifications/${first.id}/read`)).status).toBe(
      204,
    );
    const unread = await getJson<Page>(t, s.triager.token, '/api/v0/notifications?unread=true');
    expect(unread.body.notifications).toHaveLength(4);
    const read = await getJson<Page>(t, s.triager.token, '/api/v0/notifications?unread=false');
    expect(read.body.notifications.map((n) => n.id)).toEqual([first.id]);
    const all2 = await sendJson<{ marked: number }>(t, s.triager.token, 'PUT', '/api/v0/notifications/read');
    expect(all2.body).toEqual({ marked: 4 });
    expect(
      (await getJson<Page>(t, s.triager.token, '/api/v0/notifications?unread=true')).body.notifications,
    ).toEqual([]);
  });

  it('answers 400 {msg} for a cursor reused with another filter', async () => {
    const s = await buildRepositoryTeam(t);
    const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
    for (let i = 0; i < 2; i++) {
      await sendJson(
        t,
        s.judge.token,
        'POST',
        `/api/v0/repositories/${s.repository.id}/findings/${finding.id}/comment`,
        {
          content: `@${s.triager.username}`,
        },
      );
    }
    const page = await getJson<Page>(t, s.triager.token, '/api/v0/notifications?limit=1');
    const reused = await getJson<{ msg: string }>(
      t,
      s.triager.token,
      `/api/v0/notifications?limit=1&unread=true&next=${page.body.nextValue}`,
    );
    expect(reused.status).toBe(400);
    expect(typeof reused.body.msg).toBe('string');
  });
});

describe('PUT /api/v0/companies/{company_id}/notification-webhook', () => {
  it('lets company managers and platform admins set it (secret shown once) and remove it', async () => {
    const company = await buildCompany(t);
    const manager = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    const member = await buildUser(t, { companyId: company.id, companyRole: 'member' });
    const outsider = await buildUser(t, { companyId: (await buildCompany(t)).id, companyRole: 'manager' });
    const url = `/api/v0/companies/${company.id}/notification-webhook`;
    const body = { url: 'https://hooks.example.test/vigil' };
    const set = await sendJson<{ url: string; secret: string }>(t, manager.token, 'PUT', url, body);
    expect(set.status).toBe(200);
    expect(set.body.url).toBe(body.url);
    expect(set.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect((await sendJson(t, member.token, 'PUT', url, body)).status).toBe(403);
    expect((await sendJson(t, outsider.token, 'PUT', url, body)).status).toBe(404);
    expect((await sendJson(t, manager.token, 'PUT', url, { url: 'ftp://x' })).status).toBe(400);
    const again = await sendJson<{ secret: string }>(t, t.adminToken, 'PUT', url, body);
    expect(again.status).toBe(200);
    expect(again.body.secret).not.toBe(set.body.secret);
    expect((await sendJson(t, manager.token, 'DELETE', url)).status).toBe(204);
    expect((await sendJson(t, manager.token, 'DELETE', url)).status).toBe(404);
  });
});
