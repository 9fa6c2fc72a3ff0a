import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { createLlmClient } from '../../integrations/llm/llm-client.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { IntegrationsService } from '../../platform/integrations/integrations.service.ts';
import type { CreditsService } from '../credits/credits.service.ts';
import { createIdempotencyService } from '../idempotency/idempotency.service.ts';
import { openScanSources } from '../sources/scan-sources.ts';
import { createEngineAdapter } from './scans.engine-adapter.ts';
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
  integrations: Pick<IntegrationsService, 'getConnections'>;
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
    openSources: (input) =>
      openScanSources(
        {
          database: deps.database,
          objectStore: deps.objectStore,
          integrations: deps.integrations,
          log: deps.log,
        },
        input,
      ),
    log: deps.log,
  });
  return { idempotency, scans };
}
