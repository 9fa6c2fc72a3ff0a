// Entry of the scan worker threads: loads the TypeScript worker through tsx when the engine runs
// from source (as `bin/vigil.js` does), or the built worker as is.
import { workerData } from 'node:worker_threads';

if (workerData?.tsx) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
