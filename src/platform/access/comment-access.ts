import { inArray, type SQL, sql } from 'drizzle-orm';
import type { UserActor } from '../../auth/actor.ts';
import { comments, findings } from '../../db/schema/index.ts';
import { AppError } from '../../errors.ts';
import {
  type CommentReader,
  type CommentVisibility,
  canReadComment,
  creatableVisibilities,
} from './comment-rules.ts';
import { effectiveRole, type FindingAccess, type RepositoryRole } from './repository-access.ts';

export {
  COMMENT_VISIBILITIES,
  type CommentReader,
  type CommentVisibility,
  canReadComment,
  replyVisibilityAllowed,
} from './comment-rules.ts';

/**
 * The comment rules of DESIGN §7 that need the caller's access or SQL: who may write, edit and
 * delete, who may be pinged, and the SQL predicates of lists and counts (the same rules as the
 * functions of `comment-rules.ts`, computed in the database).
 */

/** Largest `content` accepted, in characters. */
export const MAX_COMMENT_CHARS = 65_536;

/** The caller as a reader of one finding's comments. */
export function commentReaderOf(
  access: FindingAccess,
  repository: { id: string; companyId: string },
  finding: { createdBy: string | null },
): CommentReader {
  const repositoryRole = access.memberships.get(repository.id)?.role ?? null;
  return {
    platformAdmin: access.platformAdmin,
    companySide: access.readAll || access.companyIds.includes(repository.companyId),
    repositoryRole,
    isFindingAuthor: finding.createdBy !== null && finding.createdBy === access.userId,
  };
}

/**
 * Checks that the caller may write a comment of this visibility on a finding they see: anyone
 * with a role on the repository (cross-company readers only read), reviewers only `public`
 * (DESIGN §7), everyone else the visibilities they read.
 */
export function requireCanCreateComment(
  access: FindingAccess,
  repository: { id: string; companyId: string },
  finding: { createdBy: string | null },
  visibility: CommentVisibility,
): void {
  const role = effectiveRole(access, repository);
  if (creatableVisibilities(role, commentReaderOf(access, repository, finding)).includes(visibility)) return;
  if (role === null)
    throw new AppError('FORBIDDEN', { message: 'You may read but not comment on this finding.' });
  if (role === 'reviewer') {
    throw new AppError('FORBIDDEN', { message: 'Reviewers may only write public comments.' });
  }
  throw new AppError('FORBIDDEN', { message: `You may not write ${visibility} comments on this finding.` });
}

/** Whether a reviewer's `@project` spends one of their pings: only the caller's role decides. */
export function projectPingSpendsPing(access: FindingAccess, repository: { id: string; companyId: string }) {
  return effectiveRole(access, repository) === 'reviewer';
}

/** Edits: the author only, while they still see the finding. */
export function canEditComment(access: FindingAccess, comment: { authorId: string | null }): boolean {
  return comment.authorId !== null && comment.authorId === access.userId;
}

/** Deletes: the author, and for moderation repository and platform admins. */
export function canDeleteComment(
  access: FindingAccess,
  repository: { id: string; companyId: string },
  comment: { authorId: string | null },
): boolean {
  return canEditComment(access, comment) || effectiveRole(access, repository) === 'admin';
}

/** Someone a comment could ping, with what decides whether they see the finding and the comment. */
export interface PingCandidate {
  userId: string;
  /** Active membership of the repository's company (joined, not disabled). */
  companyUser: boolean;
  /** Active repository role. */
  repositoryRole: RepositoryRole | null;
  showAllFindings: boolean;
  isFindingAuthor: boolean;
  platformAdmin: boolean;
  readAll: boolean;
  /** The account is neither disabled nor deleted. */
  active: boolean;
}

/** Repository roles whose members `@username` may ping (v0 §2.5: auditors of the repository). */
const PINGABLE_BY_NAME: ReadonlySet<RepositoryRole> = new Set(['reviewer', 'judge', 'triager']);

/**
 * Whether a ping notifies the candidate: `@project` reaches the active company users of the
 * repository's company, `@username` an active reviewer, judge or triager of the repository; in
 * both cases only when the candidate sees the finding and may read the comment, never the author.
 */
export function mayBePinged(
  candidate: PingCandidate,
  via: 'project' | 'username',
  comment: { authorId: string; visibility: CommentVisibility },
): boolean {
  if (!candidate.active || candidate.userId === comment.authorId) return false;
  if (via === 'project' && !candidate.companyUser) return false;
  if (via === 'username' && !(candidate.repositoryRole && PINGABLE_BY_NAME.has(candidate.repositoryRole)))
    return false;
  const seesFinding =
    candidate.platformAdmin ||
    candidate.readAll ||
    candidate.companyUser ||
    (candidate.repositoryRole !== null &&
      (candidate.repositoryRole !== 'reviewer' || candidate.showAllFindings || candidate.isFindingAuthor));
  if (!seesFinding) return false;
  return canReadComment(
    {
      platformAdmin: candidate.platformAdmin,
      companySide: candidate.readAll || candidate.companyUser,
      repositoryRole: candidate.repositoryRole,
      isFindingAuthor: candidate.isFindingAuthor,
    },
    comment.visibility,
  );
}

/**
 * For each restricted visibility, the condition on the `findings` row under which the user reads
 * comments of it (the SQL form of {@link canReadComment}). Repository sets are inlined as arrays
 * like {@link visibleFindingsCondition} so that no correlated membership subquery runs per row.
 */
function readableConditions(access: FindingAccess): { private: SQL; internal: SQL; hidden: SQL } {
  if (access.platformAdmin) return { private: sql`true`, internal: sql`true`, hidden: sql`true` };
  const judgingRepos: string[] = [];
  const adminRepos: string[] = [];
  for (const [repositoryId, m] of access.memberships) {
    if (m.role === 'judge' || m.role === 'triager') judgingRepos.push(repositoryId);
    if (m.role === 'admin') adminRepos.push(repositoryId);
  }
  const inRepos = (ids: string[]) => (ids.length > 0 ? inArray(findings.repositoryId, ids) : sql`false`);
  const hidden = inRepos(adminRepos);
  const internal = access.readAll
    ? sql`true`
    : sql`(${access.companyIds.length > 0 ? inArray(findings.companyId, access.companyIds) : sql`false`} or ${inRepos(adminRepos)})`;
  const priv = sql`(${internal} or ${findings.createdBy} = ${access.userId} or ${inRepos(judgingRepos)})`;
  return { private: priv, internal, hidden };
}

/**
 * Which comments the user may read, as a condition on `comments` joined to (or correlated with)
 * `findings`. The findings themselves must already be limited to those the user sees.
 */
export function visibleCommentsCondition(access: FindingAccess): SQL {
  if (access.platformAdmin) return sql`true`;
  const can = readableConditions(access);
  return sql`(${comments.visibility} = 'public'
    or (${comments.visibility} = 'private' and ${can.private})
    or (${comments.visibility} = 'internal' and ${can.internal})
    or (${comments.visibility} = 'hidden' and ${can.hidden}))`;
}

/**
 * The user's `lastCommentAt` of the outer `findings` row: the latest of the per-visibility
 * columns the user may read (`greatest` skips nulls). Used for the field and the
 * `last_comment_*` orders, so neither reveals comments the user may not read.
 */
export function visibleLastCommentAt(access: FindingAccess): SQL<Date | null> {
  const can = readableConditions(access);
  return sql<Date | null>`greatest(${findings.lastCommentAt},
    case when ${can.private} then ${findings.lastPrivateCommentAt} end,
    case when ${can.internal} then ${findings.lastInternalCommentAt} end,
    case when ${can.hidden} then ${findings.lastHiddenCommentAt} end)`;
}

/**
 * The outer `findings` row has at least one comment (of any visibility, not deleted): the predicate
 * of the partial indexes `findings_commented_*`. Implied by a non-null {@link visibleLastCommentAt}
 * and by {@link latestReadableByOthersAt}; stated next to them so that the planner uses those indexes.
 */
export const FINDING_HAS_COMMENTS: SQL = sql`(${findings.lastCommentAt} is not null or ${findings.lastPrivateCommentAt} is not null or ${findings.lastInternalCommentAt} is not null or ${findings.lastHiddenCommentAt} is not null)`;

/**
 * The time of the latest comment of the outer `findings` row that the user may read and did not
 * write (null: none). Per visibility, the finding keeps its last comment's time and author and
 * the time of the last one by anyone else; for a readable visibility the latest not by the user
 * is the last one when someone else wrote it, else that other one. Comments are unread when this
 * is later than the user's read marker. Computed from the user's current roles at query time, so
 * nothing per user is cached that a role change could leave stale.
 */
export function latestReadableByOthersAt(access: FindingAccess): SQL<Date | null> {
  const can = readableConditions(access);
  const notMine = (author: SQL, last: SQL, other: SQL) =>
    sql`case when ${author} is distinct from ${access.userId}::uuid then ${last} else ${other} end`;
  return sql<Date | null>`greatest(${notMine(sql`${findings.lastCommentAuthorId}`, sql`${findings.lastCommentAt}`, sql`${findings.lastCommentOtherAt}`)},
    case when ${can.private} then ${notMine(sql`${findings.lastPrivateCommentAuthorId}`, sql`${findings.lastPrivateCommentAt}`, sql`${findings.lastPrivateCommentOtherAt}`)} end,
    case when ${can.internal} then ${notMine(sql`${findings.lastInternalCommentAuthorId}`, sql`${findings.lastInternalCommentAt}`, sql`${findings.lastInternalCommentOtherAt}`)} end,
    case when ${can.hidden} then ${notMine(sql`${findings.lastHiddenCommentAuthorId}`, sql`${findings.lastHiddenCommentAt}`, sql`${findings.lastHiddenCommentOtherAt}`)} end)`;
}

/**
 * Whether a company's notification webhook may carry the notifications of a comment of this
 * visibility: the company reads it (its side reads everything but `hidden`).
 */
export function webhookMayCarry(visibility: CommentVisibility): boolean {
  return canReadComment(
    { platformAdmin: false, companySide: true, repositoryRole: null, isFindingAuthor: false },
    visibility,
  );
}

/** Who manages a company's notification webhook: its managers and platform admins. */
export function canManageCompanyWebhook(actor: UserActor, companyId: string): boolean {
  return actor.permissions.has('admin') || actor.companies.get(companyId) === 'manager';
}
