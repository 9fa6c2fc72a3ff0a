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

  it('answers 401 without a key and 403 for a key without scans:read', async () => {
    const company = await buildCompany(t);
    const creator = (await buildServiceKey(t, { companyId: company.id, scopes: ['scans:create'] })).key;
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/scanner/v1/scans' });
    expect(anonymous.statusCode).toBe(401);
    const res = await list(creator);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBeTypeOf('string');
  });
});
