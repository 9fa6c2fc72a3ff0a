import { Type } from '@sinclair/typebox';
import { defineJob } from '../../jobs/queue.ts';

/** What the session jobs need of the session service. */
export interface SessionJobDeps {
  services: { session: { purgeEndedSessions(): Promise<number> } };
}

/** Deletes console sessions that ended (expired or revoked) over a week ago, daily. */
export const sessionsCleanupJob = defineJob({
  name: 'session.cleanup',
  version: 1,
  payload: Type.Object({}),
  retryLimit: 1,
  schedule: '23 4 * * *',
  handler:
    ({ services }: SessionJobDeps) =>
    async (_payload, context) => {
      const removed = await services.session.purgeEndedSessions();
      if (removed > 0) context.log.info({ removed }, 'ended console sessions removed');
    },
});
