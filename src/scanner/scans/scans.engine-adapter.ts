/**
 * Binds the scan lifecycle's ports to the engine (src/engine) and to the sources: sourcehost
 * commits over git, local archives from the object store.
 */
import { inArray } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { archives } from '../../db/schema/index.ts';
import {
  buildThreatModel,
  type ThreatModel as EngineThreatModel,
  type LlmClient,
  renderThreatModelMarkdown,
  scanTree,
} from '../../engine/index.ts';
import { openArchiveTree } from '../../engine/sources/archive-tree.ts';
import { AppError } from '../../errors.ts';
import { openGitCommitTree } from '../../integrations/sourcehost/git-source.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { IntegrationsService } from '../../platform/integrations/integrations.service.ts';
import type { OpenScanSources, ScanEngine } from './scans.ports.ts';

/** The engine port over src/engine; `llm` is used by `audit` scans when configured. */
export function createEngineAdapter(deps: { llm?: LlmClient | undefined } = {}): ScanEngine {
  return {
    buildThreatModel: (tree) => buildThreatModel(tree),
    renderThreatModelMarkdown: (model) => renderThreatModelMarkdown(model as EngineThreatModel),
    scanTree: (tree, options) =>
      scanTree(tree, {
        type: options.type,
        threatModel: options.threatModel as EngineThreatModel,
        ...(deps.llm ? { llm: deps.llm } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      }),
  };
}

/**
 * Opens a scan's sources: a sourcehost commit through the organization's sourcehost integration
 * (git over smart HTTP; settings `baseUrl` and optional `authScheme`, credential `token`), or
 * local archives from the object store.
 */
export function createScanSourceOpener(deps: {
  database: Database;
  objectStore: ObjectStore;
  integrations: Pick<IntegrationsService, 'getConnections'>;
}): OpenScanSources {
  return async (input) => {
    const [commit] = input.sources.filter((s) => s.kind === 'sourcehost');
    if (commit) {
      const [connection] = await deps.integrations.getConnections(input.companyId, 'sourcehost');
      const baseUrl = connection?.settings.baseUrl;
      const token = connection?.credentials.token;
      if (!connection || typeof baseUrl !== 'string' || !token) {
        throw new AppError('SOURCEHOST_ERROR', {
          message: 'The sourcehost integration is not connected or has no baseUrl.',
          details: { reason: 'not_connected' },
        });
      }
      return openGitCommitTree({
        baseUrl,
        token,
        repository: commit.repository,
        commit: commit.commit,
        prefix: input.prefix,
        authScheme: connection.settings.authScheme === 'bearer' ? 'bearer' : 'basic',
        signal: input.signal,
      });
    }
    const local = input.sources.filter((s) => s.kind === 'local');
    const rows = await deps.database.db
      .select()
      .from(archives)
      .where(
        inArray(
          archives.id,
          local.map((s) => s.archiveId),
        ),
      );
    const byId = new Map(rows.filter((r) => r.companyId === input.companyId).map((r) => [r.id, r]));
    const specs = local.map((s) => {
      const row = byId.get(s.archiveId);
      if (!row) throw new AppError('ARCHIVE_NOT_FOUND', { details: { archiveId: s.archiveId } });
      return { open: () => deps.objectStore.getStream(row.objectKey), mountPath: s.path ?? '' };
    });
    return openArchiveTree(specs, {
      prefix: input.prefix,
      ...(input.signal ? { signal: input.signal } : {}),
    });
  };
}
