export interface WaitForOptions {
  /** What is awaited, for the timeout message (a function to describe the last state seen). */
  what?: string | (() => string);
  /** Fails after this long (default 30 s). */
  timeoutMs?: number;
  /** Pause between two reads of the condition (default 20 ms). */
  intervalMs?: number;
}

/**
 * Polls `read` until it gives a value other than `false`, `undefined` or `null`, and returns that
 * value; fails with `what` after `timeoutMs`. The one way tests wait for something another
 * process, worker or listener does: never a fixed sleep.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, false | undefined | null>> {
  const { what = 'the condition', timeoutMs = 30_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== false && value !== undefined && value !== null)
      return value as Exclude<T, false | undefined | null>;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
