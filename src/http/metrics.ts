import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** What the metrics say of the kept read answers (see kept-reads.ts), by read. */
export type KeptPageCounts = Record<string, { readonly hits: number; readonly misses: number }>;

/**
 * Prometheus metrics of one app: default process metrics, per-route latency histograms, and how
 * many reads were answered from kept answers.
 */
export function registerMetrics(app: FastifyInstance, keptPages: KeptPageCounts = {}): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'vigil_kept_page_reads',
    help: 'Reads that keep their answers (list pages, scan statuses, credit accounts) since the process started, by read and by whether a kept answer was sent (kept) or the statements ran (read)',
    labelNames: ['read', 'answer'],
    registers: [registry],
    collect() {
      for (const [read, counts] of Object.entries(keptPages)) {
        this.set({ read, answer: 'kept' }, counts.hits);
        this.set({ read, answer: 'read' }, counts.misses);
      }
    },
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });
  app.get(
    '/metrics',
    { schema: { hide: true }, config: { auth: { kind: 'none' } } },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
  return registry;
}
