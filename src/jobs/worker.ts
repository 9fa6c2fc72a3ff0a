import type { Container } from '../container.ts';
import type { JobRegistration } from './queue.ts';

/** The handlers this worker runs, wired to the container's services. */
export function workerRegistrations(_container: Container): JobRegistration[] {
  return [];
}
