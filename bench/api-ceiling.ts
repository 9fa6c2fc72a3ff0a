/**
 * The ceilings of bench/api.ts, run as a process of their own: `GET /bare` answers BENCH_BODY (the
 * credits JSON) from a bare Fastify route; `GET /db` answers the same after one `select 1` on a
 * node-postgres pool of BENCH_POOL_SIZE connections to DATABASE_URL. Prints `{"port":n}` once
 * listening on 127.0.0.1.
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
