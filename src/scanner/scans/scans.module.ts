import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { createLlmClient } from '../../integrations/llm/llm-client.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { CreditsService } from '../credits/credits.service.ts';
import { createIdempotencyService } from '../idempotency/idempotency.service.ts';
import { createArchiveSourceOpener, createEngineAdapter } from './scans.engine-adapter.ts';
import { createScansService } from './scans.service.ts';

/**
 * The scan services wired to their collaborators: idempotency records, the scan lifecycle, the
 * engine and the source opener. `queue` is read when a job is enqueued (the container creates
 * the queue after the services).
 */
export function createScanServices(deps: {
  database: Database;
  config: Pick<Config, 'idempotencyTtlHours' | 'llm'>;
  credits: CreditsService;
  objectStore: ObjectStore;
  queue: () => JobQueue;
  log: Logger;
}) {
  const idempotency = createIdempotencyService({
    database: deps.database,
    ttlHours: deps.config.idempotencyTtlHours,
  });
  const llm = deps.config.llm
    ? createLlmClient({
        baseUrl: deps.config.llm.baseUrl,
        model: deps.config.llm.model,
        ...(deps.config.llm.apiKey ? { apiKey: deps.config.llm.apiKey } : {}),
      })
    : undefined;
  const scans = createScansService({
    database: deps.database,
    queue: deps.queue,
    credits: deps.credits,
    idempotency,
    engine: createEngineAdapter({ llm }),
    openSources: createArchiveSourceOpener({ database: deps.database, objectStore: deps.objectStore }),
    log: deps.log,
  });
  return { idempotency, scans };
}
