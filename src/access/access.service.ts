import type { Actor, UserActor } from '../auth/actor.ts';
import type { Db } from '../db/client.ts';
import { AppError } from '../errors.ts';
import { accessRepo } from './access.repo.ts';
import {
  can,
  companyNotFound,
  type FindingAccess,
  findingAccessOf,
  type RepositoryMembership,
  requireCompanyManager,
  requireUser,
} from './policy.ts';

/**
 * The access checks that need the database: loading what the policy decides on, and loading a
 * company or repository only when the policy lets the caller see it. Services call these within
 * their own transaction (`db` is the transaction's).
 */

/** Loads what decides the user's access to repositories (401 for callers that are not users). */
export async function loadFindingAccess(db: Db, actor: Actor): Promise<FindingAccess> {
  const user = requireUser(actor);
  return findingAccessOf(user, await accessRepo(db).findMemberships(user.userId));
}

/**
 * The repository memberships read for a resolved user actor. The credential cache hands every
 * request of a token the same actor object until a `vigil_credentials` notification (a change of
 * repository memberships or of a repository's `show_all_findings` sends one, migration 0017; this
 * process's own commits at once) empties it; the next request then resolves a new actor and reads
 * the memberships again. Memberships therefore live exactly as long as the credential they were
 * read with, and are read on every request when the cache is off.
 */
const membershipsOfActor = new WeakMap<UserActor, [string, RepositoryMembership][]>();

/**
 * {@link loadFindingAccess} for reads outside a transaction: the memberships are read once per
 * resolved credential (see {@link membershipsOfActor}) instead of once per request. Writes keep
 * {@link loadFindingAccess}, which reads them in their own transaction.
 */
export async function loadFindingAccessForRead(db: Db, actor: Actor): Promise<FindingAccess> {
  const user = requireUser(actor);
  let memberships = membershipsOfActor.get(user);
  if (!memberships) {
    memberships = await accessRepo(db).findMemberships(user.userId);
    membershipsOfActor.set(user, memberships);
  }
  return findingAccessOf(user, memberships);
}

/** Loads the company row; 404 when it does not exist. */
export async function requireCompany(db: Db, companyId: string) {
  const row = await accessRepo(db).findCompany(companyId);
  if (!row) throw companyNotFound();
  return row;
}

/**
 * The company exists and the actor manages it (its manager, or a platform admin); 404 when the
 * actor may not see the company or it does not exist, 403 when they see it but do not manage it.
 */
export async function requireManagedCompany(db: Db, actor: Actor, companyId: string): Promise<UserActor> {
  const user = requireCompanyManager(actor, companyId);
  await requireCompany(db, companyId);
  return user;
}

/** Loads a repository whose findings the user may see; another company's (or an unknown) repository is 404. */
export async function requireVisibleRepository(db: Db, access: FindingAccess, repositoryId: string) {
  const repository = await accessRepo(db).findRepository(repositoryId);
  if (!repository || !can(access, 'repository.read_findings', { repository })) {
    throw new AppError('NOT_FOUND', { message: 'Repository not found.' });
  }
  return repository;
}
