/**
 * A scan's sources as one read-only tree: completed local archives from the object store, or a
 * sourcehost commit fetched through the company's sourcehost integration. Nothing is ever
 * extracted to disk under a name taken from the sources (see openArchiveTree and
 * openGitCommitTree).
 */
import type { Logger } from 'pino';
import type { Database, Db } from '../../db/client.ts';
import { openArchiveTree } from '../../engine/sources/archive-tree.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import { AppError } from '../../errors.ts';
import type { OutboundPolicy } from '../../integrations/outbound/outbound-policy.ts';
import { openGitCommitTree } from '../../integrations/sourcehost/git-source.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import type { IntegrationsService } from '../../organization/integrations/integrations.service.ts';
import { normalizePrefix } from '../../organization/workspaces/workspaces.service.ts';
import { uploadsRepo } from '../uploads/uploads.repo.ts';

/** A completed upload, optionally mounted at a repository folder. */
export interface LocalScanSource {
  kind: 'local';
  archiveId: string;
  sha256: string;
  /** Repository folder the archive's root is placed at. Default: the root. */
  path?: string;
}

/** One commit of a sourcehost repository (`owner/name`, full 40-hex commit id). */
export interface SourcehostScanSource {
  kind: 'sourcehost';
  repository: string;
  commit: string;
}

export type ScanSourceInput = LocalScanSource | SourcehostScanSource;

/** An archive a local source names, checked to be this organization's and completed. */
export interface ValidatedLocalSource {
  archiveId: string;
  workspaceId: string;
  sha256: string;
  objectKey: string;
  /** Normalized mount path ('' = the root). */
  mountPath: string;
}

/** Dependencies of {@link openScanSources}. */
export interface ScanSourcesDeps {
  database: Database;
  objectStore: ObjectStore;
  integrations: Pick<IntegrationsService, 'getConnections'>;
  /** Checks and pins the sourcehost's address before git connects. */
  outbound: Pick<OutboundPolicy, 'resolve'>;
  log: Logger;
}

/**
 * Checks that every local source names a completed archive of this organization with the same
 * sha256, and returns them in order with normalized mount paths. Errors: ARCHIVE_NOT_FOUND (404)
 * naming the archive — for an unknown archive, another organization's, and a sha256 that differs
 * alike, so that nothing about other organizations' archives can be learnt; VALIDATION_FAILED for
 * a mount path with `..`. Called by createScan (inside its transaction: pass `tx.db`).
 */
export async function validateLocalSources(
  db: Db,
  companyId: string,
  sources: readonly LocalScanSource[],
): Promise<ValidatedLocalSource[]> {
  const rows = await uploadsRepo(db).findArchives(companyId, [...new Set(sources.map((s) => s.archiveId))]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return sources.map((source, i) => {
    const row = byId.get(source.archiveId);
    if (!row || row.sha256 !== source.sha256.trim().toLowerCase()) {
      throw new AppError('ARCHIVE_NOT_FOUND', {
        message: row
          ? `The sha256 of archive ${source.archiveId} differs from the one given.`
          : `Archive ${source.archiveId} was not found in this organization, or its upload is not completed.`,
        details: { archiveId: source.archiveId, field: `scanSources/${i}` },
      });
    }
    return {
      archiveId: row.id,
      workspaceId: row.workspaceId,
      sha256: row.sha256,
      objectKey: row.objectKey,
      mountPath: normalizePrefix(source.path),
    };
  });
}

/**
 * Opens a scan's sources as one tree limited to the workspace `prefix`. Local archives (several,
 * each at its `path`) are read in order, a later file replacing an earlier one at the same path;
 * a sourcehost source is fetched with the company's sourcehost integration (`credentials.token`,
 * `settings.baseUrl`). Sources must be all local or exactly one sourcehost commit.
 * Errors: VALIDATION_FAILED (no sources, a mix, several commits), ARCHIVE_NOT_FOUND,
 * INTEGRATION_NOT_CONNECTED, SOURCEHOST_ERROR (with `details.reason`), and the archive codes for
 * an archive that no longer reads as verified. The caller closes the tree.
 */
export async function openScanSources(
  deps: ScanSourcesDeps,
  input: { companyId: string; prefix: string; sources: readonly ScanSourceInput[]; signal?: AbortSignal },
): Promise<SourceTree> {
  const prefix = normalizePrefix(input.prefix);
  const local = input.sources.filter((s): s is LocalScanSource => s.kind === 'local');
  const remote = input.sources.filter((s): s is SourcehostScanSource => s.kind === 'sourcehost');
  if (input.sources.length === 0 || (local.length > 0 && remote.length > 0) || remote.length > 1) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'A scan reads either local archives or exactly one sourcehost commit.',
      details: { field: 'scanSources' },
    });
  }
  const signal = input.signal ? { signal: input.signal } : {};

  if (local.length > 0) {
    const archives = await validateLocalSources(deps.database.db, input.companyId, local);
    deps.log.debug({ companyId: input.companyId, archives: archives.length }, 'opening archive sources');
    return openArchiveTree(
      archives.map((archive) => ({
        open: () => deps.objectStore.getStream(archive.objectKey),
        mountPath: archive.mountPath,
      })),
      { prefix, ...signal },
    );
  }

  const source = remote[0]!;
  const [connection] = await deps.integrations.getConnections(input.companyId, 'sourcehost');
  if (!connection) {
    throw new AppError('INTEGRATION_NOT_CONNECTED', {
      message: 'The sourcehost integration is not connected for this organization.',
      details: { provider: 'sourcehost' },
    });
  }
  const baseUrl = connection.settings.baseUrl;
  const token = connection.credentials.token;
  if (!baseUrl || !token) {
    throw new AppError('INTEGRATION_NOT_CONNECTED', {
      message: 'The sourcehost integration needs settings.baseUrl and credentials.token.',
      details: { provider: 'sourcehost' },
    });
  }
  deps.log.debug({ companyId: input.companyId, repository: source.repository }, 'opening sourcehost commit');
  return openGitCommitTree({
    baseUrl,
    token,
    repository: source.repository,
    commit: source.commit,
    prefix,
    outbound: deps.outbound,
    ...signal,
  });
}
