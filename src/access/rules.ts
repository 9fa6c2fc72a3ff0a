import type { findingStatuses, repositoryRoles } from '../db/schema/index.ts';

/**
 * The role-level rules of the access policy (DESIGN §7) that need no caller: which status
 * transitions a role may make and which comment visibilities a reader reads and a writer may
 * create. `policy.ts` decides with them; the console imports this file (it imports nothing of the
 * server) to offer only the choices the server accepts (the server still decides).
 */

export type RepositoryRole = (typeof repositoryRoles)[number];
export type FindingStatus = (typeof findingStatuses)[number];

/** Roles that judge findings: they change status and severity, assign, mark duplicates. */
export const JUDGING_ROLES: ReadonlySet<RepositoryRole> = new Set(['judge', 'triager', 'admin']);

/**
 * Status transitions by role. Judges, triagers and admins move a finding through review; the
 * client (and company users, who act as the client) disputes, acknowledges and fixes confirmed
 * findings; a reviewer may only withdraw a finding they filed while it is still under review.
 * `duplicate` is reached only by duplicate marking, never by a status change.
 */
const STAFF: Readonly<Partial<Record<FindingStatus, readonly FindingStatus[]>>> = {
  new: ['in_review', 'confirmed', 'rejected', 'spam', 'disputed'],
  in_review: ['new', 'confirmed', 'rejected', 'spam', 'disputed'],
  disputed: ['in_review', 'confirmed', 'rejected', 'spam'],
  rejected: ['new', 'in_review', 'confirmed', 'disputed'],
  spam: ['new', 'rejected'],
  confirmed: ['acknowledged', 'fixed', 'disputed', 'rejected'],
  acknowledged: ['confirmed', 'fixed', 'disputed'],
  fixed: ['confirmed', 'acknowledged'],
  withdrawn: ['new'],
  duplicate: [],
};
const CLIENT: Readonly<Partial<Record<FindingStatus, readonly FindingStatus[]>>> = {
  new: ['disputed'],
  in_review: ['disputed'],
  confirmed: ['acknowledged', 'fixed', 'disputed'],
  acknowledged: ['fixed', 'disputed'],
};
const REVIEWER_OWN: Readonly<Partial<Record<FindingStatus, readonly FindingStatus[]>>> = {
  new: ['withdrawn'],
  in_review: ['withdrawn'],
  disputed: ['withdrawn'],
};

/**
 * Whether a user of this effective role may move a finding from `from` to `to` (`isAuthor`: the
 * user filed it). Exported for the console, which offers only the transitions the server accepts.
 */
export function canTransition(
  role: RepositoryRole | null,
  from: FindingStatus,
  to: FindingStatus,
  isAuthor: boolean,
): boolean {
  if (role === null) return false;
  const table = JUDGING_ROLES.has(role) ? STAFF : role === 'client' ? CLIENT : isAuthor ? REVIEWER_OWN : {};
  return table[from]?.includes(to) ?? false;
}

/** Statuses that close a finding against its author or the client: a reason must be given. */
const NEEDS_REASON: ReadonlySet<FindingStatus> = new Set(['rejected', 'spam', 'disputed', 'withdrawn']);

/**
 * Whether a status change must carry a reason (ADR 0033): moving a finding to rejected, spam,
 * disputed or withdrawn, or reopening a fixed finding. The reason is posted on the finding so that
 * its author and the client read why.
 */
export function statusChangeNeedsReason(from: FindingStatus, to: FindingStatus): boolean {
  return NEEDS_REASON.has(to) || (from === 'fixed' && to !== 'fixed');
}

/**
 * Comment visibilities. Readers by visibility (each set contains the next: public ⊃ private ⊃
 * internal ⊃ hidden):
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
  effective: RepositoryRole | null,
  reader: CommentReader,
): CommentVisibility[] {
  if (effective === null) return [];
  if (effective === 'reviewer') return ['public'];
  return COMMENT_VISIBILITIES.filter((v) => canReadComment(reader, v));
}

/** Whether a reply of this visibility may go into a thread of that visibility (no widening). */
export function replyVisibilityAllowed(parent: CommentVisibility, reply: CommentVisibility): boolean {
  return RANK[reply] >= RANK[parent];
}
