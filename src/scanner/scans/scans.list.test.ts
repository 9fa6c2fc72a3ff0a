import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  buildArchive,
  buildCompany,
  buildServiceKey,
  grantCredits,
} from '../../../test/helpers/factories.ts';
import { localScanBody, postScan, REENTRANT_BANK } from '../../../test/helpers/scan-helpers.ts';

const t = sharedTestApp();

async function list(key: string, query = '') {
  return t.app.inject({
    method: 'GET',
    url: `/api/scanner/v1/scans${query}`,
    headers: { authorization: `Bearer ${key}` },
  });
}

describe('GET /api/scanner/v1/scans (extension)', () => {
  it('lists the organization’s scans newest first, filters by status and limits the page', async () => {
    const company = await buildCompany(t);
    const key = (await buildServiceKey(t, { companyId: company.id })).key;
    await grantCredits(t, company.id, 10);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const archive = await buildArchive(t, {
        companyId: company.id,
        files: { [`contracts/B${i}.sol`]: REENTRANT_BANK },
      });
      const res = await postScan(t, key, localScanBody(archive));
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json().id);
    }
    const other = await buildCompany(t);
    const otherKey = (await buildServiceKey(t, { companyId: other.id })).key;

    const all = await list(key);
    expect(all.statusCode).toBe(200);
    const listed = all.json().scans as Array<{ id: string; status: string; type: string }>;
    expect(new Set(listed.map((s) => s.id))).toEqual(new Set(ids));
    expect(listed.every((s) => s.type === 'standard')).toBe(true);

    expect((await list(key, '?limit=2')).json().scans).toHaveLength(2);
    expect((await list(key, '?status=completed')).json().scans).toEqual([]);
    expect((await list(otherKey)).json().scans).toEqual([]);
    expect((await list(key, '?limit=0')).statusCode).toBe(400);
    expect((await list(key, '?status=done')).statusCode).toBe(400);
  });

  it('filters by workspace (foreign or unknown: nothing) and pages with a cursor bound to its filters', async () => {
    const company = await buildCompany(t);
    const key = (await buildServiceKey(t, { companyId: company.id })).key;
    await grantCredits(t, company.id, 40);
    const byWorkspace = new Map<string, string[]>();
    let home: string | undefined;
    let away: string | undefined;
    // Seven scans of one workspace interleaved with four of another.
    for (let i = 0; i < 11; i++) {
      const inHome = i % 3 !== 1;
      const archive = await buildArchive(t, {
        companyId: company.id,
        files: { [`contracts/B${i}.sol`]: REENTRANT_BANK },
        ...((inHome ? home : away) ? { workspaceId: (inHome ? home : away)! } : {}),
      });
      if (inHome) home = archive.workspaceId;
      else away = archive.workspaceId;
      const res = await postScan(t, key, localScanBody(archive));
      expect(res.statusCode, res.body).toBe(202);
      byWorkspace.set(archive.workspaceId, [res.json().id, ...(byWorkspace.get(archive.workspaceId) ?? [])]);
    }
    const homeIds = byWorkspace.get(home!)!;
    expect(homeIds).toHaveLength(7);
    expect(byWorkspace.get(away!)).toHaveLength(4);

    const first = await list(key, `?workspaceId=${home}`);
    expect(first.statusCode, first.body).toBe(200);
    expect((first.json().scans as Array<{ id: string }>).map((s) => s.id)).toEqual(homeIds);
    expect(first.json().nextValue).toBeNull();
    const upper = await list(key, `?workspaceId=${home!.toUpperCase()}&limit=100`);
    expect((upper.json().scans as Array<{ id: string }>).map((s) => s.id)).toEqual(homeIds);

    // Pages of 3: every scan of the workspace once, newest first, none of the other.
    const paged: string[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const res = await list(key, `?workspaceId=${home}&limit=3${next ? `&next=${next}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const items = res.json().scans as Array<{ id: string; workspaceId: string }>;
      expect(items.every((s) => s.workspaceId === home)).toBe(true);
      paged.push(...items.map((s) => s.id));
      next = res.json().nextValue;
      pages += 1;
    } while (next);
    expect(paged).toEqual(homeIds);
    expect(pages).toBe(3);

    // Without the filter the list is the company's, paged the same way.
    const all: string[] = [];
    next = null;
    do {
      const res = await list(key, `?limit=4${next ? `&next=${next}` : ''}`);
      all.push(...(res.json().scans as Array<{ id: string }>).map((s) => s.id));
      next = res.json().nextValue;
    } while (next);
    expect(all).toHaveLength(11);
    expect(all.filter((id) => homeIds.includes(id))).toEqual(homeIds);

    // A cursor serves only the filters it was made under.
    const cursor = (await list(key, `?workspaceId=${home}&limit=2`)).json().nextValue as string;
    expect(cursor).toEqual(expect.any(String));
    for (const query of [
      `?workspaceId=${away}&next=${cursor}`,
      `?next=${cursor}`,
      `?workspaceId=${home}&status=queued&next=${cursor}`,
    ]) {
      const res = await list(key, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('INVALID_CURSOR');
    }
    expect((await list(key, `?workspaceId=${home}&next=${cursor}x`)).json().code).toBe('INVALID_CURSOR');

    // Another organization's workspace, or none at all: an empty list, as for a status nobody is in.
    const other = await buildCompany(t);
    const otherKey = (await buildServiceKey(t, { companyId: other.id })).key;
    const foreign = await list(otherKey, `?workspaceId=${home}`);
    expect(foreign.statusCode).toBe(200);
    expect(foreign.json()).toEqual({ scans: [], nextValue: null });
    expect((await list(key, `?workspaceId=${randomUUID()}`)).json()).toEqual({ scans: [], nextValue: null });
    expect((await list(key, `?workspaceId=${home}&status=completed`)).json().scans).toEqual([]);
    const bad = await list(key, '?workspaceId=not-a-uuid');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBeTypeOf('string');
  });

  it('answers 401 without a key and 403 for a key without scans:read', async () => {
    const company = await buildCompany(t);
    const creator = (await buildServiceKey(t, { companyId: company.id, scopes: ['scans:create'] })).key;
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/scanner/v1/scans' });
    expect(anonymous.statusCode).toBe(401);
    const res = await list(creator);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBeTypeOf('string');
  });

  it('shows a scan alike in getScan, the list and a cancel: timestamps to the millisecond, the error of a failed scan', async () => {
    const company = await buildCompany(t);
    const key = (await buildServiceKey(t, { companyId: company.id })).key;
    await grantCredits(t, company.id, 10);
    const scanIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const archive = await buildArchive(t, {
        companyId: company.id,
        files: { 'contracts/B.sol': REENTRANT_BANK },
      });
      const res = await postScan(t, key, localScanBody(archive));
      expect(res.statusCode, res.body).toBe(202);
      scanIds.push(res.json().id);
    }
    const [failedId, runningId] = scanIds as [string, string];
    await t.container.database.executeSql(
      `update scans set status = 'failed', error_code = 'SCAN_FAILED', error_message = 'The engine stopped.',
         files_total = 3, files_done = 2, findings_count = 1,
         started_at = '2026-01-02 03:04:05.123456+00', completed_at = '2026-01-02 03:04:06.999999+00'
       where id = $1`,
      [failedId],
    );
    await t.container.database.executeSql(
      `update scans set status = 'running', started_at = '2026-01-02 03:04:07.5+00' where id = $1`,
      [runningId],
    );
    const get = async (id: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/scanner/v1/scans/${id}`,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const failed = await get(failedId);
    expect(failed).toMatchObject({
      id: failedId,
      status: 'failed',
      type: 'standard',
      startedAt: '2026-01-02T03:04:05.123Z',
      completedAt: '2026-01-02T03:04:06.999Z',
      cancelledAt: null,
      progress: { filesTotal: 3, filesDone: 2 },
      findingsCount: 1,
      error: { code: 'SCAN_FAILED', message: 'The engine stopped.' },
    });
    expect(failed.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const listed = (await list(key)).json().scans as Array<{ id: string }>;
    expect(listed.find((s) => s.id === failedId)).toEqual(failed);

    const cancel = await t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/scans/${runningId}/cancel`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const cancelled = await get(runningId);
    expect(cancelled).toMatchObject({ status: 'cancelled', startedAt: '2026-01-02T03:04:07.500Z' });
    expect(cancelled).not.toHaveProperty('error');
    expect(cancel.json()).toEqual(cancelled);
    expect((await list(key)).json().scans.find((s: { id: string }) => s.id === runningId)).toEqual(cancelled);
  });
});
