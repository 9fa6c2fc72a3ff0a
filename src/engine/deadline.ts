/**
 * The per-file analysis budget: a {@link Deadline} that the analysis loops which can grow faster
 * than the file (CFG fixpoints, taint, inter-procedural walks, rules × functions) check, and the
 * error it throws once the budget is spent (docs/adr/0001-per-file-analysis-budget.md).
 */
import { openSync, readSync } from 'node:fs';

/** Default budget of one file's analysis (parsing excluded), in milliseconds. */
export const DEFAULT_FILE_BUDGET_MS = 2_000;

/** Thrown by {@link Deadline.check} once the budget is spent; the file then gets the cheap passes. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
  constructor(readonly budgetMs: number) {
    super(`analysis exceeded its budget of ${budgetMs} ms`);
  }
}

/** Milliseconds of CPU time the calling thread has used, or `undefined` where it cannot be known. */
export type ThreadCpuClock = () => number | undefined;

/** Of the calls to {@link Deadline.check}, one in this many reads the clock. */
const CHECKS_PER_CLOCK_READ = 32;

/** Linux's clock ticks per second as /proc reports them (USER_HZ, fixed at 100 for user space). */
const USER_HZ = 100;

/**
 * This thread's CPU time: `process.threadCpuUsage` where Node has it (23.9 and later), else
 * `/proc/thread-self/stat` (Linux; opened by the calling thread, so it is this thread's entry),
 * else unknown. Reading it costs a system call: {@link Deadline} reads it only when the wall
 * clock says the budget may be spent.
 */
export const threadCpuMs: ThreadCpuClock = (() => {
  const native = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
  if (native) {
    return () => {
      const u = native.call(process);
      return (u.user + u.system) / 1000;
    };
  }
  // The file stays open: /proc/thread-self names the thread that opened it (this module is
  // loaded once per thread), and each reading is then one positioned read (~10 µs) instead of an
  // open, a read and a close (~80 µs), which a scan of many small files pays several times a file.
  let fd: number | undefined;
  const buffer = Buffer.alloc(1024);
  const fromProc = (): number | undefined => {
    try {
      fd ??= openSync('/proc/thread-self/stat', 'r');
      const stat = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
      // Fields after the command name (in parentheses, which may hold spaces): state is field 3,
      // utime and stime fields 14 and 15.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(rest[11]) + Number(rest[12]);
      return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : undefined;
    } catch {
      return undefined;
    }
  };
  return fromProc() === undefined ? () => undefined : fromProc;
})();

/** The last reading of {@link threadCpuMs} taken for a deadline's start, and when. */
let lastStart: { wall: number; cpu: number | undefined } | undefined;

/**
 * The thread's CPU time when a deadline starts. Of {@link threadCpuMs}, a reading taken less than
 * one clock tick ago is used again: the clock counts in ticks, so a new reading could differ by
 * at most one, and a scan of many small files (one deadline each) would otherwise spend a system
 * call and a file read on each.
 */
function startCpu(cpu: ThreadCpuClock, wallNow: number): number | undefined {
  if (cpu !== threadCpuMs) return cpu();
  if (lastStart && wallNow - lastStart.wall < 1000 / USER_HZ) return lastStart.cpu;
  const value = cpu();
  lastStart = { wall: wallNow, cpu: value };
  return value;
}

/**
 * A budget of analysis time, checked cooperatively. It counts the CPU time of the thread doing the
 * analysis, not the wall time: on a loaded machine (or beside other analysis threads) wall time
 * runs ahead of the work done, and a file would go over budget by the load, not by its shape. The
 * checks are cheap: they compare the monotonic clock with a wall-clock end, and only once that
 * end passes read the thread's CPU time, then either throw or push the end out by the CPU time
 * still left. Where the thread's CPU time cannot be read, the budget is wall time.
 */
export class Deadline {
  private readonly wallStart = performance.now();
  private wallEnd: number;
  private readonly cpuStart: number | undefined;
  /** Checks until the next clock read: the first check reads it. */
  private checksLeft = 1;

  private constructor(
    readonly budgetMs: number,
    private readonly cpu: ThreadCpuClock,
  ) {
    this.wallEnd = this.wallStart + budgetMs;
    this.cpuStart = Number.isFinite(budgetMs) && budgetMs > 0 ? startCpu(cpu, this.wallStart) : undefined;
  }

  /** A deadline `budgetMs` of this thread's analysis time from now (`Infinity`: never). */
  static after(budgetMs: number, cpu: ThreadCpuClock = threadCpuMs): Deadline {
    return new Deadline(budgetMs, cpu);
  }

  /** A deadline that never passes (analysis outside a scan: tests, the threat model alone). */
  static readonly none: Deadline = new Deadline(Number.POSITIVE_INFINITY, () => undefined);

  /** Milliseconds of analysis time left (0 once spent). */
  remainingMs(): number {
    if (!Number.isFinite(this.budgetMs)) return this.budgetMs;
    const spent = this.spentMs(performance.now());
    return Math.max(0, this.budgetMs - spent);
  }

  /**
   * Throws {@link BudgetExceededError} once the budget is spent. The analysis checks before each
   * step of its loops and each function it analyses (cached or not), tens of thousands of times a
   * file: the clock is read at one check in {@link CHECKS_PER_CLOCK_READ}, each step being small.
   */
  check(): void {
    if (--this.checksLeft > 0) return;
    this.checksLeft = CHECKS_PER_CLOCK_READ;
    const now = performance.now();
    if (now < this.wallEnd) return;
    const left = this.budgetMs - this.spentMs(now);
    if (left <= 0) throw new BudgetExceededError(this.budgetMs);
    // Not spent yet: the thread ran less than the wall clock went by. Look again when the rest
    // of the budget could be spent (at least one clock tick from now).
    this.wallEnd = now + Math.max(left, 1000 / USER_HZ);
  }

  private spentMs(now: number): number {
    const cpuNow = this.cpuStart === undefined ? undefined : this.cpu();
    if (this.cpuStart !== undefined && cpuNow !== undefined) return cpuNow - this.cpuStart;
    return now - this.wallStart;
  }
}

/** Whether `err` is the budget's error. */
export function isBudgetExceeded(err: unknown): err is BudgetExceededError {
  return err instanceof BudgetExceededError;
}
