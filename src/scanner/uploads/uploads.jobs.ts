import { Type } from '@sinclair/typebox';
import { defineJob } from '../../jobs/queue.ts';
import type { UploadsService } from './uploads.service.ts';

/**
 * Every 5 minutes: expires unfinished upload sessions and removes their objects, and deletes
 * archives no scan references once past their retention. Idempotent; overlapping runs on two
 * workers only share the work.
 */
export const uploadsHousekeepingJob = defineJob({
  name: 'uploads.housekeeping',
  version: 1,
  payload: Type.Object({}),
  schedule: '*/5 * * * *',
  retryLimit: 0,
  handler:
    ({ services }: { services: { uploads: Pick<UploadsService, 'sweep'> } }) =>
    async (_payload, context) => {
      const result = await services.uploads.sweep();
      context.log.info(result, 'upload housekeeping done');
    },
});
