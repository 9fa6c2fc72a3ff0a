import type { Container } from '../container.ts';
import {
  deliverNotificationRegistration,
  deliverySweepRegistration,
} from '../platform/notifications/notifications.jobs.ts';
import { sourcehostJobRegistrations } from '../platform/sourcehost/sourcehost.jobs.ts';
import { scanJobRegistrations } from '../scanner/scans/scans.jobs.ts';
import { scanSweepRegistration } from '../scanner/scans/scans.sweep.ts';
import { uploadsHousekeepingRegistration } from '../scanner/uploads/uploads.jobs.ts';
import type { JobRegistration } from './queue.ts';

/** The handlers this worker runs, wired to the container's services. */
export function workerRegistrations(container: Container): JobRegistration[] {
  return [
    uploadsHousekeepingRegistration(container.services.uploads),
    ...scanJobRegistrations(container.services),
    scanSweepRegistration(container),
    ...sourcehostJobRegistrations(container.services),
    deliverNotificationRegistration(container.services.notificationDelivery),
    deliverySweepRegistration(container.services.notificationDelivery),
  ];
}
