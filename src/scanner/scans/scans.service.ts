import { createScanCreation } from './scans.create.ts';
import type { ScansServiceDeps } from './scans.deps.ts';
import { createScanReads } from './scans.reads.ts';
import { createScanJobs } from './scans.run.ts';
import { createScanWorkAccess } from './scans.work.ts';

export { CREATE_SCAN_PATH } from './scans.create.ts';
export type { JobRunContext, ScansServiceDeps } from './scans.deps.ts';
export { toScanStatus } from './scans.status.ts';

export function createScansService(deps: ScansServiceDeps) {
  const work = createScanWorkAccess(deps);
  return {
    sweepScanWork: work.sweepScanWork,
    ...createScanCreation(deps, work),
    ...createScanReads(deps, work),
    ...createScanJobs(deps, work),
  };
}

export type ScansService = ReturnType<typeof createScansService>;
