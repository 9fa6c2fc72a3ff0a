import { Type } from '@sinclair/typebox';
import build from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import { namedSchemaTypes, serializerSchema } from './lazy-serializers.ts';

const Summary = Type.Object(
  { id: Type.String(), at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) },
  { $id: 'Summary' },
);
const Root = Type.Object({
  summary: Type.Union([Type.Ref('Summary'), Type.Null()]),
  when: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  count: Type.Union([Type.Integer(), Type.Null()]),
  either: Type.Union([Type.String(), Type.Integer()]),
  list: Type.Array(Type.Union([Type.Null(), Type.Boolean()])),
  role: Type.Union([Type.Literal('member'), Type.Literal('manager')]),
  maybeRole: Type.Union([Type.Union([Type.Literal('member'), Type.Literal('manager')]), Type.Null()]),
});

describe('response serializer schemas', () => {
  it('turns a nullable anyOf into a nullable schema, and leaves other unions and the original alone', () => {
    const before = JSON.stringify(Root);
    const rewritten: { properties: Record<string, Record<string, unknown>> } = JSON.parse(
      JSON.stringify(serializerSchema(Root, namedSchemaTypes({ Summary }))),
    );
    expect(rewritten.properties.summary).toEqual({ $ref: 'Summary', type: 'object', nullable: true });
    expect(rewritten.properties.when).toEqual({ type: 'string', format: 'date-time', nullable: true });
    expect(rewritten.properties.count).toEqual({ type: 'integer', nullable: true });
    expect(rewritten.properties.either!.anyOf).toHaveLength(2);
    expect((rewritten.properties.list!.items as Record<string, unknown>).nullable).toBe(true);
    expect(rewritten.properties.role).toEqual({ type: 'string' });
    expect(rewritten.properties.maybeRole).toEqual({ type: 'string', nullable: true });
    expect(JSON.stringify(Root)).toBe(before);
  });

  it('leaves a nullable reference whose target is unknown as a union', () => {
    const rewritten: { properties: Record<string, Record<string, unknown>> } = JSON.parse(
      JSON.stringify(serializerSchema(Root)),
    );
    expect(rewritten.properties.summary!.anyOf).toHaveLength(2);
  });

  it('serializes every value the schema allows exactly as the contract schema does', () => {
    const contract = build(Root as Parameters<typeof build>[0], {
      schema: { Summary } as Record<string, Parameters<typeof build>[0]>,
    });
    const types = namedSchemaTypes({ Summary });
    const fast = build(serializerSchema(Root, types) as Parameters<typeof build>[0], {
      schema: serializerSchema({ Summary }, types) as Record<string, Parameters<typeof build>[0]>,
    });
    const values = [
      { summary: null, when: null, count: null, either: 'x', list: [], role: 'member', maybeRole: null },
      {
        summary: { id: 'a', at: null },
        when: '2026-01-02T03:04:05.006Z',
        count: 0,
        either: 3,
        list: [null, true],
        role: 'manager',
        maybeRole: 'manager',
      },
      {
        summary: { id: 'b', at: '2026-01-02T03:04:05.006Z' },
        when: null,
        count: 7,
        either: '',
        list: [false],
        role: 'member',
        maybeRole: 'member',
      },
    ];
    for (const value of values) {
      expect(fast(value)).toBe(contract(value));
      expect(JSON.parse(fast(value))).toEqual(value);
    }
  });
});
