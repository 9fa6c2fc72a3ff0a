import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CursorCodec, createCursorCodec, hashFilters } from '../../src/platform/pagination/cursor.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompany, buildFinding, buildRepositoryTeam } from '../helpers/factories.ts';

let other: TestApp;
let codec: CursorCodec;
const t = sharedTestApp();
beforeAll(async () => {
  other = await createTestApp();
  codec = createCursorCodec(t.config.secretKey!);
});
afterAll(async () => {
  await other?.close();
});

interface Payload {
  k: unknown[];
  f: string;
}
const payloadOf = (cursor: string): Payload =>
  JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8')) as Payload;
/** The cursor with its keys edited, keeping the old signature (what a client can do). */
const edited = (cursor: string, keys: unknown[]): string =>
  `${Buffer.from(JSON.stringify({ ...payloadOf(cursor), k: keys })).toString('base64url')}.${cursor.split('.')[1]}`;
/** The cursor re-signed with the service's key (what only the service can do): reaches the key checks. */
const resigned = (cursor: string, keys: unknown[]): string => codec.encode(keys, payloadOf(cursor).f);

async function get(token: string, url: string) {
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

function expectInvalid(res: { status: number; body: Record<string, unknown> }, label: string) {
  expect(res.status, label).toBe(400);
  expect(String(res.body.msg), label).toMatch(/cursor/);
}

describe('signed cursors', () => {
  it('all-findings: an edited, foreign or out-of-range cursor is 400 INVALID_CURSOR', async () => {
    const team = await buildRepositoryTeam(t);
    for (let i = 0; i < 3; i++)
      await buildFinding(t, { repositoryId: team.repository.id, title: `F${i}`, status: 'new' });
    const token = team.judge.token;
    const url = (query: string) => `/api/v0/repositories/all-findings?${query}`;
    const first = await get(token, url('limit=1&order_by=number_asc'));
    expect(first.status).toBe(200);
    const cursor = first.body.nextValue as string;
    expect((await get(token, url(`limit=1&order_by=number_asc&next=${cursor}`))).status).toBe(200);
    const [, id] = payloadOf(cursor).k;
    expectInvalid(
      await get(token, url(`limit=1&order_by=number_asc&next=${edited(cursor, ['40', id])}`)),
      'edited',
    );
    const foreign = createCursorCodec(other.config.secretKey!).encode(
      payloadOf(cursor).k,
      payloadOf(cursor).f,
    );
    expectInvalid(await get(token, url(`limit=1&order_by=number_asc&next=${foreign}`)), 'foreign');
    expectInvalid(
      await get(token, url(`limit=1&order_by=number_asc&next=${resigned(cursor, ['9999999999', id])}`)),
      'int range',
    );
    expectInvalid(
      await get(token, url(`limit=1&order_by=number_asc&next=${resigned(cursor, ['1', 'not-a-uuid'])}`)),
      'id',
    );
    const byDate = (await get(token, url('limit=1&order_by=created_at_asc'))).body.nextValue as string;
    expectInvalid(
      await get(
        token,
        url(`limit=1&order_by=created_at_asc&next=${resigned(byDate, ['9999999999999999999', id])}`),
      ),
      'timestamp range',
    );
  });

  it('audit log: an edited, foreign or impossible-date cursor is 400 INVALID_CURSOR', async () => {
    const company = await buildCompany(t);
    const url = (next: string) => `/api/v0/companies/${company.id}/audit-log?next=${next}`;
    const f = hashFilters({ companyId: company.id, order: 'desc' });
    const good = codec.encode(['2026-01-01T00:00:00.000000Z', '0b9c6a0e-7b43-4bb8-9b8b-1f8d3c2b6a11'], f);
    expect((await get(t.adminToken, url(good))).status).toBe(200);
    expectInvalid(
      await get(t.adminToken, url(edited(good, ['2025-01-01T00:00:00.000000Z', payloadOf(good).k[1]]))),
      'edited',
    );
    const foreign = createCursorCodec(other.config.secretKey!).encode(payloadOf(good).k, f);
    expectInvalid(await get(t.adminToken, url(foreign)), 'foreign');
    expectInvalid(
      await get(t.adminToken, url(resigned(good, ['2026-13-45T99:99:99.000000Z', payloadOf(good).k[1]]))),
      'date',
    );
  });

  it('reports: an edited, foreign or impossible-date cursor is 400 INVALID_CURSOR', async () => {
    const f = hashFilters({});
    const good = codec.encode(['2026-01-01T00:00:00.000000Z', '0b9c6a0e-7b43-4bb8-9b8b-1f8d3c2b6a11'], f);
    expect((await get(t.adminToken, `/api/v0/reports?next=${good}`)).status).toBe(200);
    expectInvalid(
      await get(t.adminToken, `/api/v0/reports?next=${edited(good, [null, payloadOf(good).k[1]])}`),
      'edited',
    );
    const foreign = createCursorCodec(other.config.secretKey!).encode(payloadOf(good).k, f);
    expectInvalid(await get(t.adminToken, `/api/v0/reports?next=${foreign}`), 'foreign');
    expectInvalid(
      await get(
        t.adminToken,
        `/api/v0/reports?next=${resigned(good, ['2026-13-45T99:99:99.000000Z', payloadOf(good).k[1]])}`,
      ),
      'date',
    );
  });
});
