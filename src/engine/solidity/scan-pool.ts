/**
 * Solidity files analysed in parallel on worker threads. The main thread reads the tree and hands
 * each worker at most `FILES_PER_WORKER` files at a time (so memory stays bounded by the number of
 * workers); each worker parses, analyses and drops a file before the next.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { EngineVulnerability, ScanMessage, ScanType } from '../types.ts';
import { bundledWorker } from './worker-bundle.ts';

export interface PoolResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
}

interface Job {
  resolve: (r: PoolResult) => void;
  reject: (e: Error) => void;
}

/** The worker's module, and whether it is TypeScript (then the boot script loads tsx first). */
function workerEntry(): { boot: URL; entry: string; tsx: boolean } {
  const tsx = import.meta.url.endsWith('.ts');
  const entry = new URL(`./scan-worker${tsx ? '.ts' : '.js'}`, import.meta.url).href;
  return { boot: new URL('./scan-worker-boot.mjs', import.meta.url), entry, tsx };
}

const runsFromSource = import.meta.url.endsWith('.ts');

/**
 * Files queued per worker: the next files are already there when the worker finishes one, instead
 * of waiting for the main thread to hear back and send one. Two were not enough: a collection of
 * the main thread's heap (~20 ms) outlasted two small files, and the worker waited (~4% of its
 * time on the SolidiFI half; docs/performance.md).
 */
const FILES_PER_WORKER = 6;

/**
 * Workers for a tree large enough to be analysed in parallel: one per core but one (this thread
 * reads the files, runs the secret rules and writes the report meanwhile), at most 4.
 */
export function defaultWorkerCount(): number {
  return Math.min(4, availableParallelism() - 1);
}

/** A pool started before the scan asked for it (see {@link SolidityScanPool.startEarly}). */
let early: { size: number; nice: number; pool: Promise<SolidityScanPool> } | undefined;

export class SolidityScanPool {
  /** Free slots (a worker appears once per free slot). */
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(w: Worker) => void> = [];
  /** Jobs of each worker in the order they were sent (a worker answers them in that order). */
  private readonly jobs = new Map<Worker, Job[]>();
  private readonly all: Worker[] = [];
  /** Set when a worker fails to start or dies: later jobs reject at once (callers fall back). */
  private broken: Error | undefined;

  /**
   * Starts `size` workers, each lowering its thread to `nice` before analysing (0: unchanged). Run
   * from TypeScript source, they load the bundled worker (`worker-bundle.ts`) when it can be
   * built, and boot through tsx otherwise.
   */
  static async start(size: number, nice = 0): Promise<SolidityScanPool> {
    if (early && early.size === size && early.nice === nice) {
      const { pool } = early;
      early = undefined;
      // An early start that failed is left behind: this start tries again.
      const taken = await pool.catch(() => undefined);
      if (taken) {
        for (const w of taken.all) w.ref();
        return taken;
      }
    }
    const bundle = runsFromSource ? await bundledWorker() : undefined;
    return new SolidityScanPool(size, bundle, nice);
  }

  /**
   * Starts the workers a coming scan will likely ask for, so that they load while the process is
   * still starting (a worker takes about as long to load the parser and the rules as the command
   * takes to reach the scan). `start` with the same size and nice value takes them over. Until
   * then they do not keep the process alive, so a scan that needs none (a small tree) exits as
   * before. Returns the pool started early (the one already started, if any).
   */
  static startEarly(size: number, nice = 0): Promise<SolidityScanPool> | undefined {
    if (early || size < 1) return early?.pool;
    const pool = SolidityScanPool.start(size, nice).then((p) => {
      for (const w of p.all) w.unref();
      return p;
    });
    early = { size, nice, pool };
    pool.catch(() => {
      if (early?.pool === pool) early = undefined;
    });
    return pool;
  }

  constructor(size: number, bundle?: URL, nice = 0) {
    const { boot, entry, tsx } = workerEntry();
    for (let i = 0; i < size; i++) {
      const w = bundle
        ? new Worker(bundle, { workerData: { nice } })
        : new Worker(boot, { workerData: { entry, tsx, nice } });
      this.jobs.set(w, []);
      w.on('message', (m: PoolResult) => {
        const job = this.jobs.get(w)?.shift();
        this.release(w);
        job?.resolve(m);
      });
      w.on('error', (err) => {
        this.broken ??= err;
        const pending = this.jobs.get(w)?.splice(0) ?? [];
        for (const job of pending) {
          this.release(w);
          job.reject(err);
        }
      });
      this.all.push(w);
    }
    for (let slot = 0; slot < FILES_PER_WORKER; slot++) this.idle.push(...this.all);
  }

  /** Waits for a free worker (back-pressure), then scans the file on it. */
  async acquire(): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return w;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  run(w: Worker, path: string, source: string, type: ScanType): Promise<PoolResult> {
    return new Promise((resolve, reject) => {
      if (this.broken) {
        this.release(w);
        reject(this.broken);
        return;
      }
      this.jobs.get(w)?.push({ resolve, reject });
      w.postMessage({ path, source, type });
    });
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  async close(): Promise<void> {
    await Promise.all(this.all.map((w) => w.terminate()));
  }
}
