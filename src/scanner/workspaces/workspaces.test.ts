import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompanyWorld, buildServiceKey } from '../../../test/helpers/factories.ts';
import { signInToConsole } from '../../../test/security/access-world.ts';
import { workspaces } from '../../db/schema/index.ts';

const t = sharedTestApp();

async function addWorkspace(
  companyId: string,
  values: { name: string; prefix?: string; repository?: string | null; createdAt: Date; active?: boolean },
): Promise<string> {
  const [row] = await t.container.database.db
    .insert(workspaces)
    .values({ companyId, prefix: '', repository: null, ...values })
    .returning({ id: workspaces.id });
  return row!.id;
}

function get(url: string, headers: Record<string, string>) {
  return t.app.inject({ method: 'GET', url, headers });
}

describe('GET /api/scanner/v1/workspaces (extension)', () => {
  it('lists the organization’s workspaces newest first, in cursor pages; another organization’s are not listed', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const key = { authorization: `Bearer ${(await buildServiceKey(t, { companyId: company.id })).key}` };
    const base = Date.parse('2026-03-01T00:00:00Z');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        await addWorkspace(company.id, {
          name: `ws-${i}`,
          prefix: i === 1 ? 'contracts/core' : '',
          repository: i === 1 ? 'acme/vault' : null,
          active: i !== 3,
          // Two workspaces made in the same microsecond: the id orders them.
          createdAt: new Date(base + Math.min(i, 3) * 1000),
        }),
      );
    }
    const other = await buildCompanyWorld(t);
    const foreignId = await addWorkspace(other.company.id, { name: 'foreign', createdAt: new Date(base) });

    const all = await get('/api/scanner/v1/workspaces?limit=100', key);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().nextValue).toBeNull();
    const listed = all.json().workspaces as Array<Record<string, unknown>>;
    expect(listed.map((w) => w.id)).not.toContain(foreignId);
    expect(new Set(listed.map((w) => w.id))).toEqual(new Set(ids));
    expect(listed.slice(2).map((w) => w.name)).toEqual(['ws-2', 'ws-1', 'ws-0']);
    expect(listed.find((w) => w.id === ids[1])).toEqual({
      id: ids[1],
      name: 'ws-1',
      prefix: 'contracts/core',
      repository: 'acme/vault',
      active: true,
      createdAt: '2026-03-01T00:00:01.000Z',
    });
    expect(listed.find((w) => w.id === ids[3])).toMatchObject({ repository: null, active: false });

    // Pages of two reach every workspace once, in the same order.
    const paged: string[] = [];
    let next: string | null = null;
    do {
      const res = await get(`/api/scanner/v1/workspaces?limit=2${next ? `&next=${next}` : ''}`, key);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().workspaces.length).toBeLessThanOrEqual(2);
      paged.push(...res.json().workspaces.map((w: { id: string }) => w.id));
      next = res.json().nextValue;
    } while (next);
    expect(paged).toEqual(listed.map((w) => w.id));

    const bad = await get('/api/scanner/v1/workspaces?next=forged.cursor', key);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_CURSOR');
    expect((await get('/api/scanner/v1/workspaces?limit=101', key)).statusCode).toBe(400);

    // A member's console session acting for the company lists the same.
    const session = await signInToConsole(t, member.token);
    const viaConsole = await get('/api/scanner/v1/workspaces?limit=100', {
      cookie: session.cookie,
      'x-vigil-company': company.id,
    });
    expect(viaConsole.statusCode, viaConsole.body).toBe(200);
    expect(viaConsole.json()).toEqual(all.json());

    const otherKey = {
      authorization: `Bearer ${(await buildServiceKey(t, { companyId: other.company.id })).key}`,
    };
    const theirs = (await get('/api/scanner/v1/workspaces', otherKey)).json().workspaces;
    expect(theirs.map((w: { id: string }) => w.id)).toEqual([foreignId]);
  });

  it('reads one workspace; another organization’s or an unknown one → 404', async () => {
    const { company, member } = await buildCompanyWorld(t);
    const key = { authorization: `Bearer ${(await buildServiceKey(t, { companyId: company.id })).key}` };
    const id = await addWorkspace(company.id, {
      name: 'acme/vault:core',
      prefix: 'core',
      repository: 'acme/vault',
      createdAt: new Date('2026-03-02T10:00:00.123456Z'),
    });
    const res = await get(`/api/scanner/v1/workspaces/${id}`, key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id,
      name: 'acme/vault:core',
      prefix: 'core',
      repository: 'acme/vault',
      active: true,
      createdAt: '2026-03-02T10:00:00.123Z',
    });

    const session = await signInToConsole(t, member.token);
    const viaConsole = await get(`/api/scanner/v1/workspaces/${id}`, {
      cookie: session.cookie,
      'x-vigil-company': company.id,
    });
    expect(viaConsole.statusCode, viaConsole.body).toBe(200);
    expect(viaConsole.json().name).toBe('acme/vault:core');

    const other = await buildCompanyWorld(t);
    const otherKey = {
      authorization: `Bearer ${(await buildServiceKey(t, { companyId: other.company.id })).key}`,
    };
    for (const [url, headers] of [
      [`/api/scanner/v1/workspaces/${id}`, otherKey],
      [`/api/scanner/v1/workspaces/${randomUUID()}`, key],
    ] as const) {
      const missing = await get(url, headers);
      expect(missing.statusCode).toBe(404);
      expect(missing.json().code).toBe('NOT_FOUND');
    }
    const otherSession = await signInToConsole(t, other.manager.token);
    const crossSession = await get(`/api/scanner/v1/workspaces/${id}`, {
      cookie: otherSession.cookie,
      'x-vigil-company': other.company.id,
    });
    expect(crossSession.statusCode).toBe(404);
    expect((await get(`/api/scanner/v1/workspaces/not-a-uuid`, key)).statusCode).toBe(400);
  });

  it('answers 401 without a key and 403 for a key without scans:read', async () => {
    const { company } = await buildCompanyWorld(t);
    const creator = (await buildServiceKey(t, { companyId: company.id, scopes: ['scans:create'] })).key;
    expect((await get('/api/scanner/v1/workspaces', {})).statusCode).toBe(401);
    const res = await get('/api/scanner/v1/workspaces', { authorization: `Bearer ${creator}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBeTypeOf('string');
  });
});
