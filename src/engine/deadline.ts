/**
 * The per-file analysis budget: a {@link Deadline} that the analysis loops which can grow faster
 * than the file (CFG fixpoints, taint, inter-procedural walks, rules × functions) check, and the
 * error it throws once the budget is spent (docs/adr/0001-per-file-analysis-budget.md).
 */

/** Default budget of one file's analysis (parsing excluded), in milliseconds. */
export const DEFAULT_FILE_BUDGET_MS = 2_000;

/** Thrown by {@link Deadline.check} once the budget is spent; the file then gets the cheap passes. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
  constructor(readonly budgetMs: number) {
    super(`analysis exceeded its budget of ${budgetMs} ms`);
  }
}

type Clock = () => number;

/**
 * Milliseconds of this thread's CPU time where Node reports it (`process.threadCpuUsage`, Node
 * 23.9 and later), else the monotonic wall clock: the analysis between two checks is synchronous
 * on a thread of its own, so its wall time is its CPU time plus the time the OS ran other threads.
 */
const threadCpu = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage;
export const analysisClock: Clock = threadCpu
  ? () => {
      const u = threadCpu.call(process);
      return (u.user + u.system) / 1000;
    }
  : () => performance.now();

/** A budget of analysis time that loops check cooperatively. */
export class Deadline {
  private readonly end: number;

  private constructor(
    readonly budgetMs: number,
    private readonly clock: Clock,
  ) {
    this.end = Number.isFinite(budgetMs) ? clock() + budgetMs : Number.POSITIVE_INFINITY;
  }

  /** A deadline `budgetMs` from now (`Infinity`: never). */
  static after(budgetMs: number, clock: Clock = analysisClock): Deadline {
    return new Deadline(budgetMs, clock);
  }

  /** A deadline that never passes (analysis outside a scan: tests, the threat model alone). */
  static readonly none: Deadline = new Deadline(Number.POSITIVE_INFINITY, () => 0);

  /** Whether the budget is spent. */
  get expired(): boolean {
    return this.end !== Number.POSITIVE_INFINITY && this.clock() >= this.end;
  }

  /** Milliseconds left (0 once spent). */
  remainingMs(): number {
    return this.end === Number.POSITIVE_INFINITY ? this.end : Math.max(0, this.end - this.clock());
  }

  /** Throws {@link BudgetExceededError} once the budget is spent. */
  check(): void {
    if (this.end !== Number.POSITIVE_INFINITY && this.clock() >= this.end)
      throw new BudgetExceededError(this.budgetMs);
  }
}

/** Whether `err` is the budget's error (also after a structured clone from a worker). */
export function isBudgetExceeded(err: unknown): err is BudgetExceededError {
  return err instanceof BudgetExceededError;
}
