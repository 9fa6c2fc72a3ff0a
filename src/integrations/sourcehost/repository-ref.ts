/**
 * The sourcehost's names for things: a repository is `owner/name`, a commit is its full
 * 40-hex object id. Anything else (a URL of another host, `a/b/c`, a branch name, a short id) is
 * refused before a git process ever sees it.
 */
import { AppError } from '../../errors.ts';

/** A parsed `owner/name`. */
export interface RepositoryRef {
  readonly owner: string;
  readonly name: string;
  /** `owner/name`, as used in URLs and stored links. */
  readonly fullName: string;
}

/** One owner or name: starts with a letter or digit; letters, digits, `.`, `-`, `_`; at most 100. */
const REPOSITORY_PART = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const FULL_COMMIT_ID = /^[0-9a-fA-F]{40}$/;

/**
 * Parses a sourcehost repository reference. Only `owner/name` is accepted (an optional `.git`
 * suffix is dropped); a URL, a path with more segments or another provider's notation throws
 * 422 UNSUPPORTED_REPOSITORY_TYPE, which the API answers as is.
 */
export function parseRepositoryRef(ref: string): RepositoryRef {
  const parts = ref.trim().split('/');
  const owner = parts[0] ?? '';
  const name = (parts[1] ?? '').replace(/\.git$/, '');
  if (
    parts.length !== 2 ||
    !REPOSITORY_PART.test(owner) ||
    !REPOSITORY_PART.test(name) ||
    // Hosts refuse names ending in a dot, and `name.` + `.git` would read as a different path.
    name.endsWith('.')
  ) {
    throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
      message: 'Only sourcehost repositories given as "owner/name" are supported.',
      details: { repository: ref.slice(0, 300) },
    });
  }
  return { owner, name, fullName: `${owner}/${name}` };
}

/**
 * The commit id in lower case when `commit` is a full 40-hex object id, else null. Branch names,
 * tags and abbreviated ids are not commits: a scan must name exactly what it reviewed.
 */
export function normalizeCommitId(commit: string): string | null {
  return FULL_COMMIT_ID.test(commit) ? commit.toLowerCase() : null;
}
