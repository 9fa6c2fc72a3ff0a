import { type InvitationJobDeps, mailInvitationJob } from '../platform/invitations/invitations.jobs.ts';
import type { NotificationJobDeps } from '../platform/notifications/notifications.jobs.ts';
import { deliverNotificationJob, deliverySweepJob } from '../platform/notifications/notifications.jobs.ts';
import { type SessionJobDeps, sessionsCleanupJob } from '../platform/session/session.jobs.ts';
import {
  type SourcehostJobDeps,
  sourcehostCommitStatusJob,
  sourcehostDeliveriesCleanupJob,
  sourcehostStatusSweepJob,
} from '../platform/sourcehost/sourcehost.jobs.ts';
import {
  idempotencyCleanupJob,
  type ScanJobDeps,
  scanRunJob,
  scanThreatModelJob,
} from '../scanner/scans/scans.jobs.ts';
import { type ScanSweepJobDeps, scanSweepJob } from '../scanner/scans/scans.sweep.ts';
import { uploadsHousekeepingJob } from '../scanner/uploads/uploads.jobs.ts';
import type { UploadsService } from '../scanner/uploads/uploads.service.ts';
import type { RegisteredJob } from './queue.ts';

/**
 * What a worker gives the handlers: the union of what each job declares it needs. The container
 * is passed as is (`queue.work(container, …)`), so it must provide all of it.
 */
export type JobDeps = ScanJobDeps &
  ScanSweepJobDeps &
  SourcehostJobDeps &
  SessionJobDeps &
  NotificationJobDeps &
  InvitationJobDeps & { services: { uploads: Pick<UploadsService, 'sweep'> } };

/**
 * Every job of the service, declared once each (name, version, payload schema, retry policy,
 * handler) next to the service it drives. The queue creates their queues and schedules from
 * this list, and a worker runs their handlers from it.
 */
export const jobRegistry: readonly RegisteredJob<JobDeps>[] = [
  uploadsHousekeepingJob,
  scanThreatModelJob,
  scanRunJob,
  idempotencyCleanupJob,
  scanSweepJob,
  sourcehostCommitStatusJob,
  sourcehostDeliveriesCleanupJob,
  sourcehostStatusSweepJob,
  sessionsCleanupJob,
  deliverNotificationJob,
  deliverySweepJob,
  mailInvitationJob,
];
