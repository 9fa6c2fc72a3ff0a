import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Database, Tx } from '../../db/client.ts';
import { createLlmClient } from '../../integrations/llm/llm-client.ts';
import type { OutboundPolicy } from '../../integrations/outbound/outbound-policy.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { CreditsService } from '../../organization/credits/credits.service.ts';
import type { IntegrationsService } from '../../organization/integrations/integrations.service.ts';
import { createIdempotencyService } from '../idempotency/idempotency.service.ts';
import { openScanSources } from '../sources/scan-sources.ts';
import { createScanWork } from '../sources/scan-work.ts';
import { createEngineAdapter } from './scans.engine-adapter.ts';
import { createScansService, type ScansServiceDeps } from './scans.service.ts';

/**
 * The scan services wired to their collaborators: idempotency records, the scan lifecycle, the
 * engine and the source opener. `queue` is read when a job is enqueued (the container creates
 * the queue after the services).
 */
export function createScanServices(deps: {
  database: Database;
  config: Pick<Config, 'idempotencyTtlHours' | 'llm' | 'publicUrl' | 'port' | 'jobs'>;
  credits: CreditsService;
  objectStore: ObjectStore;
  integrations: Pick<IntegrationsService, 'getConnections'>;
  /** Every outbound connection (the LLM endpoint, the sourcehost) goes through it. */
  outbound: Pick<OutboundPolicy, 'fetch' | 'resolve'>;
  queue: () => JobQueue;
  log: Logger;
  cursors: ScansServiceDeps['cursors'];
  /** Called in the transaction that ends a scan (completed, failed, cancelled). */
  afterScanFinished?: (tx: Tx, scanId: string) => Promise<void>;
}) {
  const idempotency = createIdempotencyService({
    database: deps.database,
    ttlHours: deps.config.idempotencyTtlHours,
  });
  const llm = deps.config.llm
    ? createLlmClient({
        baseUrl: deps.config.llm.baseUrl,
        model: deps.config.llm.model,
        fetch: deps.outbound.fetch,
        ...(deps.config.llm.apiKey ? { apiKey: deps.config.llm.apiKey } : {}),
      })
    : undefined;
  const scans = createScansService({
    database: deps.database,
    queue: deps.queue,
    credits: deps.credits,
    idempotency,
    engine: createEngineAdapter({
      llm,
      fileBudgetMs: deps.config.jobs.fileBudgetMs,
    }),
    openSources: (input) =>
      openScanSources(
        {
          database: deps.database,
          objectStore: deps.objectStore,
          integrations: deps.integrations,
          outbound: deps.outbound,
          log: deps.log,
        },
        input,
      ),
    scanWork: createScanWork(deps.objectStore),
    log: deps.log,
    cursors: deps.cursors,
    ...(deps.config.publicUrl ? { rulesUrl: `${deps.config.publicUrl}/docs/rules` } : {}),
    ...(deps.afterScanFinished ? { afterScanFinished: deps.afterScanFinished } : {}),
  });
  return { idempotency, scans };
}
