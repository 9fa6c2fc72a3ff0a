import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { payloadScenario } from '../../../test/helpers/finding-payload-scenario.ts';
import { FINDING_BODY_SOURCES, FINDING_BODY_VIEW, findingBodyTriggers } from './finding-bodies.source.ts';
import { FindingSchema } from './findings.schemas.ts';

const t = sharedTestApp();
const sql = (text: string, values?: unknown[]) => t.container.database.executeSql(text, values);

describe('the declarative table of finding bodies (finding-bodies.source.ts)', () => {
  it('lists every column the view reads, and no other', async () => {
    // PostgreSQL records each column a view's query reads, in subqueries too.
    const { rows } = await sql(
      `select table_name as "table", column_name as "column" from information_schema.view_column_usage
        where view_name = 'finding_body_source' order by 1, 2`,
    );
    const read = new Map<string, string[]>();
    for (const r of rows)
      read.set(r.table as string, [...(read.get(r.table as string) ?? []), r.column as string]);
    const declared = new Map(FINDING_BODY_SOURCES.map((s) => [s.table, [...s.columns].sort()]));
    expect(read.size).toBeGreaterThan(5);
    for (const [table, columns] of read) {
      // A column the payload reads that no trigger follows would leave bodies stale.
      expect({ table, missing: columns.filter((c) => !declared.get(table)?.includes(c)) }).toEqual({
        table,
        missing: [],
      });
    }
    for (const [table, columns] of declared)
      expect({ table, columns }).toEqual({ table, columns: read.get(table) });
  });

  it('is what the database runs: the view and the generated triggers as the table makes them', async () => {
    const database = t.container.database;
    const viewDefinitions = await database
      .transaction(async (tx) => {
        await tx.executeSql(`create temporary view finding_body_expected as ${FINDING_BODY_VIEW}`);
        const { rows } = await tx.executeSql(
          `select pg_get_viewdef('finding_body_expected'::regclass) as expected,
              pg_get_viewdef('finding_body_source'::regclass) as installed`,
        );
        throw Object.assign(new Error('roll back'), { rows });
      })
      .catch((err: { rows?: Array<{ expected: string; installed: string }> }) => err.rows?.[0]);
    expect(viewDefinitions?.installed).toBe(viewDefinitions?.expected);

    const { rows } = await sql(
      `select c.relname as "table", tg.tgname as name,
          case when tg.tgtype & 4 <> 0 then 'insert' when tg.tgtype & 8 <> 0 then 'delete'
            when tg.tgtype & 16 <> 0 then 'update' else 'truncate' end as event,
          convert_from(substring(tg.tgargs from 1 for length(tg.tgargs) - 1), 'UTF8') as query
        from pg_trigger tg join pg_class c on c.oid = tg.tgrelid
        where tg.tgfoid = 'vigil_finding_bodies_refresh'::regproc order by 2`,
    );
    const expected = findingBodyTriggers().sort((a, b) => a.name.localeCompare(b.name));
    expect(rows).toEqual(expected);
  });

  it("builds a body of every field of the Finding schema that is not the reader's", async () => {
    const s = await payloadScenario(t);
    const { rows } = await sql('select body from finding_bodies where finding_id = $1', [s.root.id]);
    const readerFields = [
      'hasUnreadComments',
      'unreadCommentsNumber',
      'duplicateOf',
      'duplicates',
      'duplicateGroup',
      'lastCommentAt',
      'note',
    ];
    const expected = Object.keys(FindingSchema.properties)
      .filter((key) => !readerFields.includes(key))
      .concat('reviewerLabels')
      .sort();
    expect(Object.keys(rows[0]?.body as object).sort()).toEqual(expected);
  });
});
