/**
 * Solidity files analysed in parallel on worker threads. The main thread reads the tree and hands
 * each worker one file at a time (at most one file in flight per worker, so memory stays bounded
 * by the number of workers); each worker parses, analyses and drops the file before the next.
 */
import { Worker } from 'node:worker_threads';
import type { EngineVulnerability, ScanMessage, ScanType } from '../types.ts';

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

export class SolidityScanPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(w: Worker) => void> = [];
  private readonly jobs = new Map<Worker, Job>();
  private readonly all: Worker[] = [];
  /** Set when a worker fails to start or dies: later jobs reject at once (callers fall back). */
  private broken: Error | undefined;

  /** `nice`: the priority each thread lowers itself to before analysing (0: unchanged). */
  constructor(size: number, nice = 0) {
    const { boot, entry, tsx } = workerEntry();
    for (let i = 0; i < size; i++) {
      const w = new Worker(boot, { workerData: { entry, tsx, nice } });
      w.on('message', (m: PoolResult) => {
        const job = this.jobs.get(w);
        this.jobs.delete(w);
        this.release(w);
        job?.resolve(m);
      });
      w.on('error', (err) => {
        this.broken ??= err;
        const job = this.jobs.get(w);
        this.jobs.delete(w);
        this.release(w);
        job?.reject(err);
      });
      this.all.push(w);
      this.idle.push(w);
    }
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
      this.jobs.set(w, { resolve, reject });
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
