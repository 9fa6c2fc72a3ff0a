/** An error of the command line: its message is what the user sees. */
export class CliError extends Error {
  override name = 'CliError';
  /** The process exit code (default 1; 2 for usage and service errors of `vigil scan`). */
  exitCode?: number;
}

/** A usage mistake: exit 2 before any network call. */
export class UsageError extends CliError {
  override name = 'UsageError';
  override exitCode = 2;
}
