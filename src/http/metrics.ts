import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus registry (served on the metrics port by `serveMetrics`). */
    metricsRegistry: Registry;
  }
}

/** Who may read `/metrics` on the API port: bearers of this token; null: no one. */
export interface MetricsAccess {
  token: string | null;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** True when the Authorization header carries the metrics token (compared in constant time). */
function presentsToken(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Prometheus metrics of one app: default process metrics, and per-route latency histograms. `/metrics` on the app answers only a bearer of
 * `access.token` (401 otherwise); without a token it answers 404 everywhere but on the metrics
 * port ({@link serveMetrics}), so that a process listening on every interface tells no one its
 * routes, traffic and internals.
 */
export function registerMetrics(app: FastifyInstance, access: MetricsAccess = { token: null }): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
    async (request, reply) => {
      if (access.token === null) {
        return reply.code(404).send({
          msg: 'Metrics are not served on this port: set VIGIL_METRICS_TOKEN (bearer token) or VIGIL_METRICS_PORT (loopback).',
        });
      }
      if (!presentsToken(request.headers.authorization, access.token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .send({ msg: 'Metrics need the VIGIL_METRICS_TOKEN bearer token.' });
      }
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
  app.decorate('metricsRegistry', registry);
  return registry;
}

/**
 * Serves `GET /metrics` of `registry` on its own listener bound to 127.0.0.1:`port`
 * (`VIGIL_METRICS_PORT`): a scraper on this machine (or a sidecar sharing its loopback) reads
 * them without a token, and nothing outside the machine reaches it.
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
): Promise<{ address: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"msg":"Not found."}');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'application/json' }).end('{"msg":"Metrics failed."}'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
