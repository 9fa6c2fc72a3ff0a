import { type SQL, sql } from 'drizzle-orm';
import { labels } from '../../db/schema/index.ts';
import { canSeeRepository, effectiveRole, type FindingAccess } from './repository-access.ts';

/**
 * Access rules of the repository assistant (v0 AI ask). What the assistant may read for a user is
 * exactly what the user may read: findings by `visibleFindingsCondition`, comments by
 * `visibleCommentsCondition`, labels by {@link readableLabelsCondition}; scope, instructions,
 * asset groups and safe harbor by seeing the repository.
 */

/** Whether the user reads only the labels marked `reviewerRead` on this repository (reviewers). */
export function readsReviewerLabelsOnly(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): boolean {
  return !access.readAll && effectiveRole(access, repository) === 'reviewer';
}

/** The labels of the repository the user may read, as a condition on `labels`. */
export function readableLabelsCondition(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): SQL {
  return readsReviewerLabelsOnly(access, repository) ? sql`${labels.reviewerRead}` : sql`true`;
}

/** Whether the user may ask the assistant about the repository: whoever may see the repository. */
export function canAskAssistant(
  access: FindingAccess,
  repository: { id: string; companyId: string },
): boolean {
  return canSeeRepository(access, repository);
}

/**
 * A conversation belongs to the user who started it, on the repository it was started on; nobody
 * else reads or continues it (not even admins: it holds what that user was allowed to see).
 */
export function ownsConversation(
  access: FindingAccess,
  conversation: { userId: string; repositoryId: string },
  repositoryId: string,
): boolean {
  return conversation.userId === access.userId && conversation.repositoryId === repositoryId;
}
