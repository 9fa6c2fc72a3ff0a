// Entry of the scan worker threads: loads the TypeScript worker through tsx when the engine runs
// from source (as `bin/vigil.js` does), or the built worker as is.
import { getPriority, setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

// Analysis is background work: the thread lowers its own priority (on Linux a nice value is per
// thread) so that the API thread of the same process comes first. Never raised; best effort.
if (workerData?.nice > 0) {
  try {
    if (getPriority(0) < workerData.nice) setPriority(0, workerData.nice);
  } catch {
    // Not permitted here: the analysis runs at the inherited priority.
  }
}

if (workerData?.tsx) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
