/**
 * What the size of an answer costs on this machine, whatever the server does: autocannon (20
 * connections, as in bench/api.ts) against a bare Fastify route, in a process of its own, that
 * answers a fixed JSON body of 0.4 to 40 KB. bench/api.ts prints the bytes of each read's answers
 * beside its ratio to the ceilings; this table says how fast the same machine moves answers of
 * those sizes at all.
 *
 *   npm run bench:answer-size [-- --duration S]
 *
 * Prints a table and writes bench/results/answer-size.json (BENCH_RESULTS: an absolute path outside bench/results).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { benchResultsPath } from './results-path.ts';

const SIZES_KB = [0.4, 2, 5, 10, 20, 30, 40];

if (process.argv[2] === 'serve') {
  const bodies = new Map(
    SIZES_KB.map((kb) => [String(kb), JSON.stringify({ x: 'a'.repeat(Math.round(kb * 1024) - 8) })]),
  );
  const app = Fastify({ logger: false });
  app.get<{ Params: { kb: string } }>('/answer/:kb', (request, reply) => {
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .send(bodies.get(request.params.kb) ?? '{}');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' ? address?.port : null })}\n`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
} else {
  const args = process.argv.slice(2);
  const durationArg = args.indexOf('--duration');
  const duration = durationArg >= 0 ? Number(args[durationArg + 1]) : 8;
  const server = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'serve'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout.once('data', (chunk: Buffer) =>
      resolve((JSON.parse(chunk.toString()) as { port: number }).port),
    );
    server.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
  const rows: Array<{ kb: number; bytesPerAnswer: number; requestsPerSecond: number; p99Ms: number }> = [];
  try {
    for (const kb of SIZES_KB) {
      const r = await autocannon({ url: `http://127.0.0.1:${port}/answer/${kb}`, connections: 20, duration });
      rows.push({
        kb,
        bytesPerAnswer: Math.round(r.throughput.average / r.requests.average),
        requestsPerSecond: Math.round(r.requests.average),
        p99Ms: r.latency.p99,
      });
      process.stdout.write(`${kb} KB: ${rows.at(-1)!.requestsPerSecond} req/s\n`);
    }
  } finally {
    server.kill('SIGTERM');
  }
  process.stdout.write('\nbody KB  bytes/answer  req/s   p99 ms\n');
  for (const r of rows)
    process.stdout.write(
      `${String(r.kb).padEnd(7)}  ${String(r.bytesPerAnswer).padEnd(12)}  ${String(r.requestsPerSecond).padEnd(6)}  ${r.p99Ms}\n`,
    );
  const file = benchResultsPath('answer-size');
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), connections: 20, durationSeconds: duration, cpus: os.availableParallelism(), loadAverage: os.loadavg(), rows }, null, 2)}\n`,
  );
  process.stdout.write(`wrote ${file}\n`);
}
