import os from 'node:os';
import { type App, buildApp } from '../app.ts';
import { type Config, ConfigError, publicBaseUrl } from '../config.ts';
import { type Container, createContainer, MigrationError } from '../container.ts';
import { isConnectionError } from '../db/client.ts';
import { EmbeddedServerError } from '../db/embedded-server.ts';
import { sweepSpillFolders } from '../engine/sources/archive-tree.ts';
import { AppError } from '../errors.ts';
import { serveMetrics } from '../http/metrics.ts';

/** A start that cannot go on: one line for the operator (what is wrong, what to do), no stack. */
export class StartupError extends Error {
  override name = 'StartupError';
}

function innermostMessage(err: unknown): string {
  let message = (err as Error)?.message ?? String(err);
  let current: unknown = err;
  for (let depth = 0; depth < 6 && current && typeof current === 'object'; depth++) {
    const m = (current as { message?: unknown }).message;
    if (typeof m === 'string' && m.trim()) message = m;
    current = (current as { cause?: unknown }).cause;
  }
  return message.split('\n')[0]!.trim();
}

/** Turns a failure while starting into the one line an operator needs. */
export function describeStartupError(err: unknown, config: Config): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (err instanceof StartupError || err instanceof ConfigError || err instanceof EmbeddedServerError) {
    return err.message;
  }
  if (code === 'EADDRINUSE') {
    return `port ${config.port} on ${config.host} is already in use; stop the program using it or set PORT to another port`;
  }
  if (code === 'EACCES' && (err as { syscall?: string }).syscall === 'listen') {
    return `listening on port ${config.port} is not allowed; set PORT to a port above 1023`;
  }
  if (
    config.database.kind === 'postgres' &&
    (isConnectionError(err) ||
      /password authentication|(database|role) "[^"]*" does not exist|getaddrinfo/i.test(
        innermostMessage(err),
      ))
  ) {
    const url = new URL(config.database.url);
    return `cannot reach the database at ${url.hostname}:${url.port || 5432}${url.pathname} (DATABASE_URL): ${innermostMessage(err)}; start the server or fix DATABASE_URL`;
  }
  if (err instanceof MigrationError) {
    return `applying the database migrations failed: ${innermostMessage(err.cause)}; the database is unchanged by the failed step — fix it (or point DATABASE_URL elsewhere) and start again`;
  }
  if (err instanceof AppError) return err.message;
  return `could not start: ${innermostMessage(err)}`;
}

/** Runs `fn`; on failure closes what it opened within a short budget and rethrows as one line. */
async function starting<T>(config: Config, cleanup: () => Promise<void>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await Promise.race([
      cleanup().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 3000).unref()),
    ]);
    throw new StartupError(describeStartupError(err, config), { cause: err });
  }
}

/**
 * Lowers this process's scheduling priority to `nice` (never raises it): scan work then yields the
 * CPU to API processes and the database on the same machine.
 */
function lowerPriority(container: Container, nice: number): void {
  try {
    if (os.getPriority() < nice) os.setPriority(nice);
  } catch (err) {
    container.log.warn({ err, nice }, 'scheduling priority not lowered');
  }
}

export interface RunOptions {
  api: boolean;
  worker: boolean;
}

/** Prints the bootstrap admin token once, on the first start of an empty database. */
async function bootstrap(container: Container): Promise<void> {
  const created = await container.services.admin.bootstrapAdmin({ token: container.config.adminToken });
  if (!created) return;
  const lines = [
    '',
    'Created the platform admin "admin".',
    container.config.adminToken
      ? 'Its API token is the one given in VIGIL_ADMIN_TOKEN.'
      : `Its API token (shown once, store it now): ${created.token}`,
    `The token expires ${created.expiresAt.toISOString()}.`,
    `Try: curl -H "Authorization: Bearer <token>" ${publicBaseUrl(container.config)}/api/v0/admin/companies (see README)`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Runs the API and/or the worker until SIGTERM or SIGINT, then drains: the server stops accepting,
 * in-flight requests finish, workers finish or release their jobs, and the process exits 0.
 */
export async function runProcesses(config: Config, options: RunOptions): Promise<void> {
  let container: Container | null = null;
  let app: App | null = null;
  let metricsServer: { close(): Promise<void> } | null = null;
  const cleanup = async () => {
    if (metricsServer) await metricsServer.close().catch(() => undefined);
    if (app) await app.close().catch(() => undefined);
    if (container) await container.close();
  };
  const started = await starting(config, cleanup, async () => {
    const created = await createContainer(config);
    container = created;
    // After the container: an embedded server this process starts must not inherit the priority.
    if (options.worker && !options.api && config.jobs.nice > 0) lowerPriority(created, config.jobs.nice);
    await created.queue.start({ supervise: options.worker });
    if (options.api) await bootstrap(created);
    if (options.worker) {
      const removed = await sweepSpillFolders();
      if (removed.length > 0) created.log.info({ removed }, 'removed spill folders of stopped processes');
    }
    app = options.api ? await buildApp(created) : null;
    if (app) {
      const address = await app.listen({ port: config.port, host: config.host });
      created.log.info({ address, database: created.database.kind }, 'API listening');
      if (config.metrics.port !== null) {
        const served = await serveMetrics(app.metricsRegistry, config.metrics.port).catch((err) => {
          const code = (err as NodeJS.ErrnoException).code;
          throw new StartupError(
            code === 'EADDRINUSE'
              ? `VIGIL_METRICS_PORT ${config.metrics.port} on 127.0.0.1 is already in use; set it to another port`
              : `cannot listen on VIGIL_METRICS_PORT ${config.metrics.port}: ${(err as Error).message}`,
          );
        });
        metricsServer = served;
        created.log.info({ address: `${served.address}/metrics` }, 'metrics listening (loopback only)');
      }
    }
    if (options.worker) {
      await created.queue.work(created, {
        concurrency: config.jobs.concurrency,
        pollingSeconds: config.jobs.pollingSeconds,
      });
      created.log.info({ concurrency: config.jobs.concurrency }, 'worker started');
    }
    return created;
  });
  const { log } = started;

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down: draining requests and jobs');
      const force = setTimeout(() => {
        log.error('shutdown budget exceeded; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs + 15_000);
      force.unref();
      void (async () => {
        try {
          await cleanup();
        } catch (err) {
          log.error({ err }, 'error during shutdown');
        }
        resolve();
      })();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log.info('stopped');
}
