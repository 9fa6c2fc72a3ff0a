import type { Db, Tx } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { parseRepositoryRef, type RepositoryRef } from '../../integrations/sourcehost/repository-ref.ts';
import { type WorkspaceRow, workspacesRepo } from './workspaces.repo.ts';

/** A workspace as the API and the other scanner modules see it. */
export interface Workspace {
  id: string;
  companyId: string;
  name: string;
  /** Path within the source repository, POSIX, without leading or trailing slash; '' = the root. */
  prefix: string;
  /** `owner/name` of the linked sourcehost repository, or null for an upload-only workspace. */
  repository: string | null;
  active: boolean;
  createdAt: Date;
}

/** How a source-upload request names its workspace: by id, or by name and prefix. */
export type WorkspaceSelector = { workspaceId: string } | { workspace: { name: string; prefix?: string } };

const MAX_PREFIX_LENGTH = 1024;
const MAX_NAME_LENGTH = 200;

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    companyId: row.companyId,
    name: row.name,
    prefix: row.prefix,
    repository: row.repository,
    active: row.active,
    createdAt: row.createdAt,
  };
}

/**
 * Normalizes a workspace prefix (a path inside the source repository) to POSIX form without
 * leading or trailing slashes: `/src//contracts/` → `src/contracts`, `.` and `` → ``.
 * `..` segments, backslashes, NUL and drive letters are refused with VALIDATION_FAILED: a prefix
 * selects files inside the tree and must never point outside it.
 */
export function normalizePrefix(prefix: string | undefined | null): string {
  if (prefix === undefined || prefix === null) return '';
  const raw = prefix.trim();
  if (raw.length > MAX_PREFIX_LENGTH) {
    throw new AppError('VALIDATION_FAILED', {
      message: `prefix must be at most ${MAX_PREFIX_LENGTH} characters.`,
      details: { field: 'prefix' },
    });
  }
  if (raw.includes('\\') || raw.includes('\0') || /^[A-Za-z]:/.test(raw)) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'prefix must be a relative POSIX path (no backslashes or drive letters).',
      details: { field: 'prefix' },
    });
  }
  const segments: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      throw new AppError('VALIDATION_FAILED', {
        message: 'prefix must not contain "..".',
        details: { field: 'prefix' },
      });
    }
    segments.push(segment);
  }
  return segments.join('/');
}

/**
 * Parses a sourcehost repository reference: only `owner/name` (an optional `.git` suffix is
 * dropped); a URL, a path with more segments or another provider's notation answers 422
 * UNSUPPORTED_REPOSITORY_TYPE.
 */
export function parseRepository(ref: string): RepositoryRef {
  return parseRepositoryRef(ref);
}

/** The name given to a workspace created for a sourcehost repository and prefix. */
export function linkedWorkspaceName(repository: string, prefix: string): string {
  return prefix === '' ? repository : `${repository}:${prefix}`;
}

/** A workspace of this organization; NOT_FOUND when it does not exist or belongs to another one. */
export async function getWorkspace(db: Db, companyId: string, id: string): Promise<Workspace> {
  const row = await workspacesRepo(db).findById(companyId, id);
  if (!row)
    throw new AppError('NOT_FOUND', { message: 'Workspace not found.', details: { workspaceId: id } });
  return toWorkspace(row);
}

/**
 * The workspace a source-upload request names, inside the caller's transaction. By id: that
 * workspace if it is this organization's and active (NOT_FOUND otherwise). By name and prefix: the
 * organization's active workspace with the same name and normalized prefix, else a new
 * upload-only workspace.
 */
export async function findOrCreateForUpload(
  tx: Tx,
  companyId: string,
  selector: WorkspaceSelector,
): Promise<Workspace> {
  const repo = workspacesRepo(tx.db);
  if ('workspaceId' in selector) {
    const row = await repo.findById(companyId, selector.workspaceId);
    if (!row?.active) {
      throw new AppError('NOT_FOUND', {
        message: 'Workspace not found in this organization.',
        details: { workspaceId: selector.workspaceId },
      });
    }
    return toWorkspace(row);
  }
  const name = selector.workspace.name.trim();
  if (name === '' || name.length > MAX_NAME_LENGTH) {
    throw new AppError('VALIDATION_FAILED', {
      message: `workspace.name must be 1 to ${MAX_NAME_LENGTH} characters.`,
      details: { field: 'workspace.name' },
    });
  }
  const prefix = normalizePrefix(selector.workspace.prefix);
  await repo.lockKey(companyId, `name:${JSON.stringify([name, prefix])}`);
  const existing = await repo.findActiveByName(companyId, name, prefix);
  if (existing) return toWorkspace(existing);
  return toWorkspace(await repo.insert({ companyId, name, prefix, repository: null }));
}

/**
 * The organization's active workspaces linked to `repository` (`owner/name`), filtered by the
 * normalized `prefix` when one is given; oldest first.
 */
export async function listActiveLinked(
  db: Db,
  companyId: string,
  repository: string,
  prefix?: string,
): Promise<Array<{ id: string; prefix: string; name: string }>> {
  const linked = await findActiveLinked(db, companyId, repository, prefix);
  return linked.map((w) => ({ id: w.id, prefix: w.prefix, name: w.name }));
}

/** The active workspaces linked to `repository` (and `prefix`, when given), whole, oldest first. */
export async function findActiveLinked(
  db: Db,
  companyId: string,
  repository: string,
  prefix?: string,
): Promise<Workspace[]> {
  const fullName = parseRepository(repository).fullName;
  const rows = await workspacesRepo(db).listActiveLinked(
    companyId,
    fullName,
    prefix === undefined ? undefined : normalizePrefix(prefix),
  );
  return rows.map(toWorkspace);
}

/**
 * Creates (inside the caller's transaction) a workspace linked to a sourcehost repository and
 * prefix, named after them. Concurrent calls for the same repository and prefix are serialized and
 * the second returns the workspace the first created, so a race of two scans never leaves two
 * linked workspaces behind (which would make later scans ambiguous).
 */
export async function createLinked(
  tx: Tx,
  companyId: string,
  input: { repository: string; prefix?: string },
): Promise<Workspace> {
  const repository = parseRepository(input.repository).fullName;
  const prefix = normalizePrefix(input.prefix);
  const repo = workspacesRepo(tx.db);
  await repo.lockKey(companyId, `repo:${JSON.stringify([repository, prefix])}`);
  const [existing] = await repo.listActiveLinked(companyId, repository, prefix);
  if (existing) return toWorkspace(existing);
  return toWorkspace(
    await repo.insert({ companyId, name: linkedWorkspaceName(repository, prefix), prefix, repository }),
  );
}
