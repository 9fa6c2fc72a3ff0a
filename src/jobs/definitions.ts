import { deliverNotificationJob, deliverySweepJob } from '../platform/notifications/notifications.jobs.ts';
import { sourcehostJobDefinitions } from '../platform/sourcehost/sourcehost.jobs.ts';
import { scanJobDefinitions } from '../scanner/scans/scans.jobs.ts';
import { scanSweepJob } from '../scanner/scans/scans.sweep.ts';
import { uploadsHousekeepingJob } from '../scanner/uploads/uploads.jobs.ts';
import type { JobDefinition } from './queue.ts';

/**
 * Every job definition of the service. Domain modules declare their definitions next to their
 * services and list them here so that the queue creates their queues at start.
 */
export function jobDefinitions(): JobDefinition[] {
  return [
    uploadsHousekeepingJob,
    ...scanJobDefinitions(),
    scanSweepJob,
    ...sourcehostJobDefinitions(),
    deliverNotificationJob,
    deliverySweepJob,
  ] as JobDefinition[];
}
