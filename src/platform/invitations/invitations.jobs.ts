import { Type } from '@sinclair/typebox';
import { defineJob } from '../../jobs/queue.ts';

/**
 * What the invitation job needs of the invitations service. Declared here rather than imported,
 * so that the service can enqueue the job without an import cycle.
 */
export interface InvitationJobDeps {
  services: { invitations: { mailInvitation(invitationId: string): Promise<string> } };
}

/**
 * Sends one invitation's e-mail. Enqueued in the transaction that creates the invitation; a
 * refused attempt (the mail server said "try later" or was not reached) is retried with backoff.
 */
export const mailInvitationJob = defineJob({
  name: 'invitation.mail',
  version: 1,
  payload: Type.Object({ invitationId: Type.String({ minLength: 36, maxLength: 36 }) }),
  retryLimit: 5,
  retryDelaySeconds: 15,
  leaseSeconds: 120,
  handler:
    ({ services }: InvitationJobDeps) =>
    async ({ invitationId }, context) => {
      const outcome = await services.invitations.mailInvitation(invitationId);
      context.log.info({ invitationId, outcome }, 'invitation e-mail');
    },
});
