/**
 * Binds the scan lifecycle's ports to the engine and the archive store: a Solidity scan over the
 * tree (file by file, with progress and cancellation), a declaration-level threat model, and
 * local sources opened from verified archives.
 */
import { inArray } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { archives } from '../../db/schema/index.ts';
import { scanSolidityFile } from '../../engine/solidity/scan-file.ts';
import { openArchiveTree } from '../../engine/sources/archive-tree.ts';
import type { EngineVulnerability, ScanMessage } from '../../engine/types.ts';
import { AppError } from '../../errors.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { OpenScanSources, ScanEngine, ThreatModel } from './scans.ports.ts';

interface BasicThreatModel {
  files: string[];
  contracts: Array<{ file: string; name: string; kind: string }>;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

/** The engine port over the Solidity rules. */
export function createSolidityScanEngine(): ScanEngine {
  return {
    async buildThreatModel(tree) {
      const entries = (await tree.list()).filter((e) => e.path.endsWith('.sol'));
      const model: BasicThreatModel = { files: entries.map((e) => e.path), contracts: [] };
      for (const entry of entries) {
        const text = (await tree.read(entry.path)).toString('utf8');
        for (const m of text.matchAll(
          /^\s*(abstract\s+contract|contract|library|interface)\s+([A-Za-z_$][\w$]*)/gm,
        )) {
          model.contracts.push({
            file: entry.path,
            name: m[2] ?? '',
            kind: (m[1] ?? '').replace(/\s+/g, ' '),
          });
        }
      }
      return model;
    },

    renderThreatModelMarkdown(model: ThreatModel) {
      const m = model as Partial<BasicThreatModel>;
      const lines = ['# Threat model', '', '## Contracts', ''];
      for (const c of m.contracts ?? []) lines.push(`- \`${c.name}\` (${c.kind}) in \`${c.file}\``);
      if ((m.contracts ?? []).length === 0) lines.push('None found.');
      return `${lines.join('\n')}\n`;
    },

    async scanTree(tree, options) {
      const started = Date.now();
      const entries = (await tree.list()).filter((e) => e.path.endsWith('.sol'));
      const vulnerabilities: EngineVulnerability[] = [];
      const messages: ScanMessage[] = [];
      let lines = 0;
      options.onProgress?.({ filesDone: 0, filesTotal: entries.length });
      for (const [i, entry] of entries.entries()) {
        throwIfAborted(options.signal);
        const text = (await tree.read(entry.path)).toString('utf8');
        lines += text.split('\n').length;
        const result = await scanSolidityFile(entry.path, text, options.type);
        vulnerabilities.push(...result.vulnerabilities);
        messages.push(...result.messages);
        options.onProgress?.({ filesDone: i + 1, filesTotal: entries.length });
        // Yield between files so that timers (cancel polls, progress writes) run.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return {
        vulnerabilities,
        messages,
        stats: { files: entries.length, lines, durationMs: Date.now() - started },
      };
    },
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
