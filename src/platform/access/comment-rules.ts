import type { RepositoryRole } from './repository-access.ts';

/**
 * The pure part of the comment rules of DESIGN §7: which visibilities a reader reads and which a
 * writer may create. No database here, so the console applies the same rules to offer only the
 * choices the server accepts (the server still decides).
 *
 * Readers by visibility (each set contains the next: public ⊃ private ⊃ internal ⊃ hidden):
 * - `public`: everyone who sees the finding;
 * - `private`: the finding's author, the company side (company users and cross-company
 *   readers), judges, triagers and admins;
 * - `internal`: the company side and admins;
 * - `hidden`: admins (repository admins and platform admins).
 */
export const COMMENT_VISIBILITIES = ['public', 'private', 'internal', 'hidden'] as const;
export type CommentVisibility = (typeof COMMENT_VISIBILITIES)[number];

/** How restricted a visibility is; a reply may not be less restricted than its thread. */
const RANK: Record<CommentVisibility, number> = { public: 0, private: 1, internal: 2, hidden: 3 };

/** What decides which comments of one finding a user reads. */
export interface CommentReader {
  platformAdmin: boolean;
  /**
   * A company user of the repository's company or a cross-company reader. A repository `client`
   * who is not a company user is not: DESIGN §7 names company users only.
   */
  companySide: boolean;
  /** The user's own repository role (not derived from company membership). */
  repositoryRole: RepositoryRole | null;
  isFindingAuthor: boolean;
}

/** The most restricted visibility the reader may read. */
function highestReadable(reader: CommentReader): CommentVisibility {
  if (reader.platformAdmin || reader.repositoryRole === 'admin') return 'hidden';
  if (reader.companySide) return 'internal';
  if (reader.repositoryRole === 'judge' || reader.repositoryRole === 'triager' || reader.isFindingAuthor)
    return 'private';
  return 'public';
}

/** Whether the reader may read comments of this visibility (they already see the finding). */
export function canReadComment(reader: CommentReader, visibility: CommentVisibility): boolean {
  return RANK[visibility] <= RANK[highestReadable(reader)];
}

/**
 * The visibilities a writer may create on a finding they see, given their effective role: none
 * without a role (cross-company readers only read), `public` for reviewers, otherwise the
 * visibilities they read.
 */
export function creatableVisibilities(
  effectiveRole: RepositoryRole | null,
  reader: CommentReader,
): CommentVisibility[] {
  if (effectiveRole === null) return [];
  if (effectiveRole === 'reviewer') return ['public'];
  return COMMENT_VISIBILITIES.filter((v) => canReadComment(reader, v));
}

/** Whether a reply of this visibility may go into a thread of that visibility (no widening). */
export function replyVisibilityAllowed(parent: CommentVisibility, reply: CommentVisibility): boolean {
  return RANK[reply] >= RANK[parent];
}
