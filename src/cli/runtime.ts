import { buildApp } from '../app.ts';
import type { Config } from '../config.ts';
import { type Container, createContainer } from '../container.ts';
import { workerRegistrations } from '../jobs/worker.ts';

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
    'Try: curl -H "Authorization: Bearer <token>" http://localhost:PORT/api/v0/admin/... (see README)',
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Runs the API and/or the worker until SIGTERM or SIGINT, then drains: the server stops accepting,
 * in-flight requests finish, workers finish or release their jobs, and the process exits 0.
 */
export async function runProcesses(config: Config, options: RunOptions): Promise<void> {
  const container = await createContainer(config);
  const { log } = container;
  await container.queue.start({ supervise: options.worker });
  if (options.api) await bootstrap(container);

  const app = options.api ? await buildApp(container) : null;
  if (app) {
    const address = await app.listen({ port: config.port, host: config.host });
    log.info({ address, database: container.database.kind }, 'API listening');
  }
  if (options.worker) {
    await container.queue.work(workerRegistrations(container), {
      concurrency: config.jobs.concurrency,
      pollingSeconds: config.jobs.pollingSeconds,
    });
    log.info({ concurrency: config.jobs.concurrency }, 'worker started');
  }

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
          if (app) await app.close();
          await container.close();
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
