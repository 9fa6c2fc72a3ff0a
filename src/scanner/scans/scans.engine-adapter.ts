/**
 * Binds the scan lifecycle's ports to the engine (src/engine) and, for local sources, to the
 * verified archives in the object store.
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
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
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

/** Opens local sources from the object store; sourcehost commits are not readable here. */
export function createArchiveSourceOpener(deps: {
  database: Database;
  objectStore: ObjectStore;
}): OpenScanSources {
  return async (input) => {
    const local = input.sources.filter((s) => s.kind === 'local');
    if (local.length !== input.sources.length) {
      throw new AppError('SOURCEHOST_ERROR', { message: 'The sourcehost commit could not be fetched.' });
    }
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
