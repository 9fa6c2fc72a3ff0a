/**
 * The scan worker as one JavaScript module, for engines that run from TypeScript source. Loading
 * the worker through tsx makes every worker thread start its own loader thread and resolve each
 * module through it (about a third of a second of CPU per worker); the bundle of the worker's
 * modules (`bundle-cache.mjs`) loads in a few milliseconds. When it cannot be built the pool
 * boots the worker through tsx.
 */
import { bundleOf } from '../bundle-cache.mjs';

let pending: Promise<URL | undefined> | undefined;

/** The bundled worker (built or reused), or `undefined` when it cannot be built here. */
export function bundledWorker(): Promise<URL | undefined> {
  pending ??= bundleOf('scan-worker', 'src/engine/solidity/scan-worker.ts');
  return pending;
}
