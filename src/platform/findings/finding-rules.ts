import type { findingStatuses } from '../../db/schema/index.ts';
import type { RepositoryRole } from '../access/repository-access.ts';

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

/** Whether `role` may move a finding from `from` to `to` (`isAuthor`: the user filed it). */
export function canTransition(
  role: RepositoryRole,
  from: FindingStatus,
  to: FindingStatus,
  isAuthor: boolean,
): boolean {
  const table = JUDGING_ROLES.has(role) ? STAFF : role === 'client' ? CLIENT : isAuthor ? REVIEWER_OWN : {};
  return table[from]?.includes(to) ?? false;
}
