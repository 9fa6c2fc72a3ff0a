import { timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { requireCompany } from '../../access/access.service.ts';
import {
  can,
  companyNotFound,
  requireCompanyManager,
  requireCompanyOverseer,
  requireUser,
} from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { CredentialThrottle } from '../../auth/credential-throttle.ts';
import { hashSecret, issueInvitationSecret } from '../../auth/credentials.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { type Database, type Db, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { SendRefusedError } from '../../integrations/notify/send-errors.ts';
import type { Mailer } from '../../integrations/notify/smtp-mailer.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { usersRepo } from '../users/users.repo.ts';
import type { CompanyUser } from '../users/users.schemas.ts';
import { toCompanyUser } from '../users/users.views.ts';
import { mailInvitationJob } from './invitations.jobs.ts';
import { type InvitationRow, type InvitationWithCompany, invitationsRepo } from './invitations.repo.ts';
import type {
  CompanyInvitation,
  InviteUserRequest,
  ListInvitationsQuery,
  RespondToInvitationRequest,
} from './invitations.schemas.ts';

/** How long an invitation can be accepted. */
export const INVITATION_TTL_DAYS = 14;

export type InvitationMailOutcome = 'sent' | 'skipped' | 'failed' | 'unknown';

/** Where an answer to an invitation comes from, for the credential throttle. */
export interface AnswerOrigin {
  address: string;
}

function invitationNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Invitation not found.' });
}

/** The state an invitation reads as: a pending one past its expiry is `expired`. */
function effectiveState(row: InvitationRow, at: Date): InvitationRow['state'] {
  return row.state === 'pending' && row.expiresAt <= at ? 'expired' : row.state;
}

function secretMatches(row: InvitationRow, presented: string | undefined): boolean {
  if (!row.secretHash || !presented) return false;
  const a = Buffer.from(hashSecret(presented), 'hex');
  const b = Buffer.from(row.secretHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Company invitations (DESIGN §7b, ADR 0016): a manager invites by username or e-mail address;
 * the answer and the company's lists show only what the manager supplied, and no platform user
 * is looked up for the answer or created. The invitee accepts with their own token — the user of
 * the invited name, or, for an invitation by e-mail alone, whoever presents the one-time secret
 * its e-mail carries — and only then becomes a company user. Invitations, acceptances, declines
 * and revocations are audited; entries about an invitation nobody accepted have no target.
 */
export function createInvitationsService(deps: {
  database: Database;
  secretBox: SecretBox;
  queue: () => JobQueue;
  /** The SMTP mailer, or null when `VIGIL_SMTP_URL` is not set (invitations by e-mail are refused). */
  mailer: Mailer | null;
  /** Public base URL, for the link in the e-mail. */
  publicUrl: string | null;
  log: Logger;
  /** An answer that names no invitation the caller may answer (a wrong secret) is throttled. */
  throttle: CredentialThrottle;
  now?: () => Date;
}) {
  const { database } = deps;
  const now = deps.now ?? (() => new Date());

  async function render(db: Db, rows: InvitationWithCompany[]): Promise<CompanyInvitation[]> {
    const inviters = await usersRepo(db).shortSummaries(rows.map((r) => r.invitation.invitedBy));
    const at = now();
    return rows.map(({ invitation: i, company }) => ({
      id: i.id,
      company,
      role: i.role,
      username: i.username,
      email: i.email,
      name: i.name,
      state: effectiveState(i, at),
      invitedBy: (i.invitedBy && inviters.get(i.invitedBy)) || null,
      createdAt: i.createdAt.toISOString(),
      expiresAt: i.expiresAt.toISOString(),
      respondedAt: i.respondedAt?.toISOString() ?? null,
    }));
  }

  async function renderOne(db: Db, invitationId: string): Promise<CompanyInvitation> {
    const found = await invitationsRepo(db).find(invitationId);
    if (!found) throw invitationNotFound();
    return (await render(db, [found]))[0]!;
  }

  /** The details an audit entry of an invitation carries: what the inviter supplied. */
  /**
   * An answer through the credential throttle: one that names no invitation the caller may answer
   * (an unknown id, a wrong secret) spends from the caller's address and the invitation's bucket.
   */
  function answerThrottled<T>(
    origin: AnswerOrigin,
    invitationId: string,
    answer: () => Promise<T>,
  ): Promise<T> {
    return deps.throttle.attempt(
      'invitation-secret',
      { address: origin.address, target: { id: invitationId } },
      answer,
    );
  }

  function auditDetails(row: InvitationRow) {
    return { invitationId: row.id, username: row.username, email: row.email, role: row.role };
  }

  /**
   * The invitation the caller may answer, locked, or 404 — for an unknown id and for one the
   * caller may not answer alike, so that ids reveal nothing. A closed one → 409.
   */
  async function lockAnswerable(
    db: Db,
    actor: Actor,
    invitationId: string,
    secret: string | undefined,
  ): Promise<InvitationRow> {
    const row = await invitationsRepo(db).lock(invitationId);
    if (
      !row ||
      !can(actor, 'invitation.respond', { invitation: row, secretMatches: secretMatches(row, secret) })
    ) {
      throw invitationNotFound();
    }
    const state = effectiveState(row, now());
    if (state !== 'pending') {
      throw new AppError('INVITATION_NOT_PENDING', {
        message: `This invitation is ${state}.`,
        details: { state },
      });
    }
    return row;
  }

  return {
    /**
     * Invites someone by username and/or e-mail address (company managers). The answer is the
     * invitation, the same whether or not a platform user has that name or address. An e-mail
     * is queued in the same transaction. Audited `user_invited` without a target.
     */
    async invite(actor: Actor, companyId: string, input: InviteUserRequest): Promise<CompanyInvitation> {
      const manager = requireCompanyManager(actor, companyId);
      if (!input.username && !input.email) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'Give a username or an e-mail address of the person to invite.',
          details: { field: 'username' },
        });
      }
      if (!input.username && !deps.mailer) {
        throw new AppError('UNPROCESSABLE', {
          message:
            'E-mail is not configured on this server, so an invitation by e-mail address alone could not reach anyone: invite by username.',
          details: { field: 'email' },
        });
      }
      const at = now();
      try {
        const id = await database.transaction(async (tx) => {
          if (!(await usersRepo(tx.db).lockCompany(companyId))) throw companyNotFound();
          const repo = invitationsRepo(tx.db);
          if (await repo.companyHasUserNamed(companyId, input)) {
            throw new AppError('ALREADY_EXISTS', {
              message: 'A user of this company already has this username or e-mail address.',
            });
          }
          await repo.expirePending(companyId, at);
          // Only an invitation by e-mail alone is answered with a secret; it reaches the
          // invitee only through the e-mail, sealed until then.
          const secret = input.username ? null : issueInvitationSecret();
          const row = await repo.insert({
            companyId,
            role: input.role ?? 'member',
            username: input.username ?? null,
            email: input.email ?? null,
            name: input.name ?? null,
            secretHash: secret?.hash ?? null,
            mailSecretSealed: secret ? deps.secretBox.seal(secret.secret) : null,
            invitedBy: manager.userId,
            createdAt: at,
            expiresAt: new Date(at.getTime() + INVITATION_TTL_DAYS * 86_400_000),
          });
          await appendAuditEntry(tx.db, {
            companyId,
            action: 'user_invited',
            targetUserId: null,
            performedBy: manager.userId,
            details: auditDetails(row),
          });
          if (deps.mailer) {
            await deps.queue().enqueue(mailInvitationJob, { invitationId: row.id }, { tx });
          }
          return row.id;
        });
        return renderOne(database.db, id);
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new AppError('ALREADY_EXISTS', {
            message: 'A pending invitation of this company already names this username or e-mail address.',
          });
        }
        throw err;
      }
    },

    /** The company's invitations, newest first (company managers and cross-company readers). */
    async listCompanyInvitations(
      actor: Actor,
      companyId: string,
      query: ListInvitationsQuery,
    ): Promise<CompanyInvitation[]> {
      requireCompanyOverseer(actor, companyId);
      const stored = query.state === 'expired' ? 'pending' : query.state;
      const rows = await invitationsRepo(database.db).listForCompany(companyId, stored);
      if (rows.length === 0) {
        // Invitations exist only while their company does: only an empty list needs its 404.
        await requireCompany(database.db, companyId);
        return [];
      }
      const list = await render(database.db, rows);
      return query.state ? list.filter((i) => i.state === query.state) : list;
    },

    /** Revokes a pending invitation (company managers); audited `invitation_revoked`. */
    async revoke(actor: Actor, companyId: string, invitationId: string): Promise<CompanyInvitation> {
      const manager = requireCompanyManager(actor, companyId);
      await database.transaction(async (tx) => {
        const repo = invitationsRepo(tx.db);
        const row = await repo.lock(invitationId);
        if (!row || row.companyId !== companyId) throw invitationNotFound();
        if (row.state === 'revoked') return;
        const state = effectiveState(row, now());
        if (state !== 'pending') {
          throw new AppError('INVITATION_NOT_PENDING', {
            message: `This invitation is ${state}.`,
            details: { state },
          });
        }
        await repo.update(invitationId, { state: 'revoked', respondedAt: now(), mailSecretSealed: null });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'invitation_revoked',
          targetUserId: null,
          performedBy: manager.userId,
          details: auditDetails(row),
        });
      });
      return renderOne(database.db, invitationId);
    },

    /** The caller's pending invitations: those naming their username. */
    async listMine(actor: Actor): Promise<CompanyInvitation[]> {
      const user = requireUser(actor);
      const rows = await invitationsRepo(database.db).listPendingForUsername(user.username);
      return (await render(database.db, rows)).filter((i) => i.state === 'pending');
    },

    /**
     * Accepts an invitation: the caller becomes a company user with the invited role (audited
     * `user_auto_joined`, `details.via = "invitation"`). 404 for an invitation the caller may not
     * answer; 409 when it is closed or the caller already belongs to the company.
     */
    async accept(
      actor: Actor,
      invitationId: string,
      input: RespondToInvitationRequest,
      origin: AnswerOrigin,
    ): Promise<CompanyUser> {
      const caller = requireUser(actor);
      return answerThrottled(origin, invitationId, () =>
        database.transaction(async (tx) => {
          const row = await lockAnswerable(tx.db, caller, invitationId, input.secret);
          const users = usersRepo(tx.db);
          if (!(await users.lockCompany(row.companyId))) throw invitationNotFound();
          if (await users.findMember(row.companyId, caller.userId)) {
            throw new AppError('ALREADY_EXISTS', { message: 'You are already a user of this company.' });
          }
          const at = now();
          const member = await users.insertMember({
            companyId: row.companyId,
            userId: caller.userId,
            role: row.role,
            invitedAt: row.createdAt,
            joinedAt: at,
          });
          const user = await users.findUserById(caller.userId);
          if (!user) throw invitationNotFound();
          const activated = user.isActivated ? user : await users.updateUser(user.id, { isActivated: true });
          await invitationsRepo(tx.db).update(row.id, {
            state: 'accepted',
            acceptedBy: caller.userId,
            respondedAt: at,
            mailSecretSealed: null,
          });
          await appendAuditEntry(tx.db, {
            companyId: row.companyId,
            action: 'user_auto_joined',
            targetUserId: caller.userId,
            performedBy: caller.userId,
            details: { via: 'invitation', invitationId: row.id, role: row.role },
          });
          return toCompanyUser(activated, member);
        }),
      );
    },

    /** Declines an invitation (the invitee); audited `invitation_declined` without a target. */
    async decline(
      actor: Actor,
      invitationId: string,
      input: RespondToInvitationRequest,
      origin: AnswerOrigin,
    ): Promise<CompanyInvitation> {
      const caller = requireUser(actor);
      await answerThrottled(origin, invitationId, () =>
        database.transaction(async (tx) => {
          const row = await lockAnswerable(tx.db, caller, invitationId, input.secret);
          await invitationsRepo(tx.db).update(row.id, {
            state: 'declined',
            respondedAt: now(),
            mailSecretSealed: null,
          });
          // Declining makes nobody a company user: the entry names the invitation, not the user.
          await appendAuditEntry(tx.db, {
            companyId: row.companyId,
            action: 'invitation_declined',
            targetUserId: null,
            performedBy: null,
            details: auditDetails(row),
          });
        }),
      );
      return renderOne(database.db, invitationId);
    },

    /**
     * Sends an invitation's e-mail once: to the address the inviter gave, else to the invited
     * user's own address (which the inviter never sees). An invitation by e-mail alone carries
     * its one-time secret, which is then forgotten (only its hash stays). A refusal the mail
     * server may lift is thrown for the job to retry; any other outcome is final.
     */
    async mailInvitation(invitationId: string): Promise<InvitationMailOutcome> {
      return database.transaction(async (tx) => {
        const repo = invitationsRepo(tx.db);
        // The row stays locked during the send (bounded by the mailer's timeout): two runs of
        // the job never send one invitation twice.
        const row = await repo.lock(invitationId);
        if (!row || row.mailedAt || row.mailError || effectiveState(row, now()) !== 'pending')
          return 'skipped';
        const found = await repo.find(invitationId);
        const to = row.email ?? (row.username ? await repo.emailOfUsername(row.username) : null);
        const finish = async (values: { mailedAt?: Date; mailError?: string }) => {
          await repo.update(invitationId, { ...values, mailSecretSealed: null });
        };
        if (!deps.mailer || !to || !found) {
          await finish({ mailError: !deps.mailer ? 'e-mail is not configured' : 'no e-mail address' });
          return 'skipped';
        }
        const secret = row.mailSecretSealed ? deps.secretBox.open(row.mailSecretSealed) : null;
        const inviter = row.invitedBy ? (await usersRepo(tx.db).findUserById(row.invitedBy))?.username : null;
        const accept = `${deps.publicUrl ?? ''}/api/v0/invitations/${row.id}/accept`;
        try {
          await deps.mailer.send({
            to,
            subject: `You are invited to join ${found.company.name} on Vigil`,
            text: [
              `${inviter ? `@${inviter}` : 'A manager'} invited you to join ${found.company.name} (${found.company.handle}) as ${row.role}.`,
              '',
              `Invitation: ${row.id}`,
              ...(secret
                ? [
                    `One-time secret: ${secret}`,
                    '',
                    `Sign in and accept with: POST ${accept} {"secret": "<the one-time secret>"}`,
                  ]
                : ['', `Sign in as ${row.username} and accept with: POST ${accept}`]),
              `The invitation expires on ${row.expiresAt.toISOString()}.`,
              'If you do not know this company, ignore this message.',
            ].join('\n'),
            messageId: `<${row.id}@vigil.invitations>`,
          });
        } catch (err) {
          if (err instanceof SendRefusedError && !err.permanent) throw err;
          const error =
            err instanceof SendRefusedError ? err.message : `outcome unknown: ${(err as Error).message}`;
          deps.log.warn({ invitationId, error }, 'invitation e-mail not sent');
          await finish({ mailError: error });
          return err instanceof SendRefusedError ? 'failed' : 'unknown';
        }
        await finish({ mailedAt: now() });
        return 'sent';
      });
    },
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
