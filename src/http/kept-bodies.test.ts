import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { sendKeptBody } from './kept-bodies.ts';

const app = Fastify();
const kept = { items: [{ id: 'a', at: new Date('2026-01-02T03:04:05.678Z'), secret: 'not in the schema' }] };
let current: typeof kept = kept;
app.get(
  '/list',
  {
    schema: {
      response: {
        200: Type.Object({
          items: Type.Array(Type.Object({ id: Type.String(), at: Type.String({ format: 'date-time' }) })),
        }),
      },
    },
  },
  async (_request, reply) => sendKeptBody(reply, current.items, (items) => ({ items })),
);
afterAll(() => app.close());

describe('sendKeptBody', () => {
  it("writes the body with the route's schema once per value, and sends it as JSON", async () => {
    const first = await app.inject({ method: 'GET', url: '/list' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    // The route's serializer wrote it: the date formatted, the property outside the schema left out.
    expect(first.body).toBe('{"items":[{"id":"a","at":"2026-01-02T03:04:05.678Z"}]}');

    // The same object again: the kept body, even though the object changed meanwhile (the values
    // it is used with are never changed, so this only shows that it was not serialized again).
    kept.items[0]!.id = 'changed';
    expect((await app.inject({ method: 'GET', url: '/list' })).body).toBe(first.body);

    // Another object: its own body.
    current = { items: [{ id: 'b', at: new Date('2026-02-03T04:05:06.000Z'), secret: 'x' }] };
    expect((await app.inject({ method: 'GET', url: '/list' })).json()).toEqual({
      items: [{ id: 'b', at: '2026-02-03T04:05:06.000Z' }],
    });
  });

  it('sends text outside ASCII as UTF-8, with its length in bytes', async () => {
    current = { items: [{ id: 'naïve – “quoted” ✓', at: new Date('2026-03-04T05:06:07.000Z'), secret: '' }] };
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ method: 'GET', url: '/list' });
      expect(res.json()).toEqual({ items: [{ id: 'naïve – “quoted” ✓', at: '2026-03-04T05:06:07.000Z' }] });
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body, 'utf8'));
      expect(Buffer.byteLength(res.body, 'utf8')).toBeGreaterThan(res.body.length);
    }
  });
});
