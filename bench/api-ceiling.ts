/**
 * The ceilings of bench/api.ts, run as a process of their own: `GET /bare` answers BENCH_BODY (the
 * credits JSON) from a bare Fastify route; `GET /db` answers the same after one `select 1` on a
 * node-postgres pool of BENCH_POOL_SIZE connections to DATABASE_URL; `GET /page?ids=…` answers a
 * page of the all-findings listing's shape from the bodies (`finding_bodies`) of the given finding
 * ids, read by one prepared statement, with the reader's own fields left empty: the least work a
 * page read from the database can be. Prints `{"port":n}` once listening on 127.0.0.1.
 */
import Fastify from 'fastify';
import pg from 'pg';

const body = JSON.parse(process.env.BENCH_BODY ?? '{}') as unknown;
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BENCH_POOL_SIZE ?? 10),
});
pool.on('error', () => {});
const app = Fastify({ logger: false });
app.get('/bare', async () => body);
app.get('/db', async () => {
  await pool.query('select 1');
  return body;
});
app.get<{ Querystring: { ids: string } }>('/page', async (request, reply) => {
  const ids = request.query.ids.split(',');
  const { rows } = await pool.query<{ body: Record<string, unknown> }>({
    name: 'page',
    text: 'select body from finding_bodies where finding_id = any($1::uuid[])',
    values: [ids],
  });
  if (rows.length !== ids.length) return reply.code(500).send();
  const findings = rows.map(({ body: { reviewerLabels: _reviewerLabels, ...shared } }) => ({
    ...shared,
    hasUnreadComments: false,
    unreadCommentsNumber: 0,
    duplicateOf: null,
    duplicates: [],
    duplicateGroup: null,
    lastCommentAt: null,
    note: null,
  }));
  return { findings, filteredTotal: 0, nextValue: null };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : null })}\n`);
const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
