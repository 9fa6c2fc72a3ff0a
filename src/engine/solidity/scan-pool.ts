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
  /** The file's analysis went over its budget: only the cheap passes ran. */
  overBudget: boolean;
}

interface Job {
  message: { path: string; source: string; type: ScanType; budgetMs: number };
  /** How long the worker may spend on the file before it is stopped. */
  limitMs: number;
  resolve: (r: PoolResult) => void;
  reject: (e: Error) => void;
}

/**
 * A worker held one file past the pool's hard limit: it was terminated (and replaced), and the
 * file gets the cheap passes in the calling thread.
 */
export class WorkerTimeoutError extends Error {
  override readonly name = 'WorkerTimeoutError';
  constructor(
    readonly path: string,
    readonly limitMs: number,
  ) {
    super(`${path}: the analysis thread was stopped after ${limitMs} ms`);
  }
}

/**
 * How long (wall time) a worker may spend on one file before it is terminated. The budget counts
 * the thread's CPU time, twice over at most (the full pass, then the cheap passes with a budget
 * of their own); on a loaded machine wall time runs several times ahead of it, and parsing is not
 * in the budget (a 4 MB file takes a few seconds): five times the budget and
 * `HARD_LIMIT_GRACE_MS`. Without a budget there is no limit.
 */
export function hardLimitMs(budgetMs: number): number {
  return Number.isFinite(budgetMs) ? 5 * budgetMs + HARD_LIMIT_GRACE_MS : Number.POSITIVE_INFINITY;
}
export const HARD_LIMIT_GRACE_MS = 30_000;

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

  private readonly bundle: URL | undefined;
  private readonly nice: number;
  /** A worker that was terminated → the one that took its place (callers may hold the old one). */
  private readonly replaced = new Map<Worker, Worker>();
  /** The watchdog of the file each worker is on. */
  private readonly watchdogs = new Map<Worker, NodeJS.Timeout>();
  /** Overrides {@link hardLimitMs} (`ScanOptions.workerHardLimitMs`). */
  hardLimitOverrideMs: number | undefined;

  constructor(size: number, bundle?: URL, nice = 0) {
    this.bundle = bundle;
    this.nice = nice;
    for (let i = 0; i < size; i++) this.all.push(this.spawn());
    for (let slot = 0; slot < FILES_PER_WORKER; slot++) this.idle.push(...this.all);
  }

  private spawn(): Worker {
    const { boot, entry, tsx } = workerEntry();
    const nice = this.nice;
    const w = this.bundle
      ? new Worker(this.bundle, { workerData: { nice } })
      : new Worker(boot, { workerData: { entry, tsx, nice } });
    this.jobs.set(w, []);
    w.on('message', (m: PoolResult | { started: true }) => {
      if ('started' in m) {
        this.watch(w);
        return;
      }
      this.unwatch(w);
      const job = this.jobs.get(w)?.shift();
      this.release(w);
      job?.resolve(m);
    });
    w.on('error', (err) => {
      this.unwatch(w);
      this.broken ??= err;
      const pending = this.jobs.get(w)?.splice(0) ?? [];
      for (const job of pending) {
        this.release(w);
        job.reject(err);
      }
    });
    return w;
  }

  /** Starts the watchdog of the file `w` just started. */
  private watch(w: Worker): void {
    const head = this.jobs.get(w)?.[0];
    if (!head) return;
    const limit = head.limitMs;
    if (!Number.isFinite(limit)) return;
    const timer = setTimeout(() => this.stop(w, limit), limit);
    timer.unref();
    this.watchdogs.set(w, timer);
  }

  private unwatch(w: Worker): void {
    const timer = this.watchdogs.get(w);
    if (timer) clearTimeout(timer);
    this.watchdogs.delete(w);
  }

  /**
   * The safety net behind the cooperative deadline: a worker still on one file `limit` ms after it
   * started it is terminated and replaced; that file's job rejects with {@link WorkerTimeoutError}
   * and the files queued behind it go to the new worker.
   */
  private stop(w: Worker, limit: number): void {
    this.watchdogs.delete(w);
    const queued = this.jobs.get(w)?.splice(0) ?? [];
    this.jobs.delete(w);
    w.removeAllListeners('message');
    w.removeAllListeners('error');
    // An error after terminate (none is expected) must not break the pool.
    w.on('error', () => {});
    void w.terminate();
    const next = this.spawn();
    this.replaced.set(w, next);
    this.all[this.all.indexOf(w)] = next;
    for (let i = 0; i < this.idle.length; i++) if (this.idle[i] === w) this.idle[i] = next;
    const [stuck, ...rest] = queued;
    for (const job of rest) {
      this.jobs.get(next)!.push(job);
      next.postMessage(job.message);
    }
    if (stuck) {
      this.release(next);
      stuck.reject(new WorkerTimeoutError(stuck.message.path, limit));
    }
  }

  /** The worker now in the place of `w` (itself unless it was replaced). */
  private current(w: Worker): Worker {
    let cur = w;
    for (let next = this.replaced.get(cur); next; next = this.replaced.get(cur)) cur = next;
    return cur;
  }

  /** Waits for a free worker (back-pressure), then scans the file on it. */
  async acquire(): Promise<Worker> {
    const w = this.idle.pop();
    if (w) return w;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Scans the file on `w` (from {@link acquire}) within `budgetMs` of analysis; rejects with
   * {@link WorkerTimeoutError} when the worker had to be stopped.
   */
  run(
    w: Worker,
    path: string,
    source: string,
    type: ScanType,
    budgetMs = Number.POSITIVE_INFINITY,
  ): Promise<PoolResult> {
    const worker = this.current(w);
    return new Promise((resolve, reject) => {
      if (this.broken) {
        this.release(worker);
        reject(this.broken);
        return;
      }
      const message = { path, source, type, budgetMs };
      const limitMs = this.hardLimitOverrideMs ?? hardLimitMs(budgetMs);
      this.jobs.get(worker)?.push({ message, limitMs, resolve, reject });
      worker.postMessage(message);
    });
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  async close(): Promise<void> {
    for (const w of [...this.watchdogs.keys()]) this.unwatch(w);
    await Promise.all(this.all.map((w) => w.terminate()));
  }
}
