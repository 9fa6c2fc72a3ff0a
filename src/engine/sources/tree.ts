/**
 * The engine's view of source code: a read-only tree of files addressed by POSIX relative paths
 * (`contracts/Vault.sol`, never absolute, never containing `..`). Implementations read from a
 * directory, from verified archives in the object store, or from a git commit; none of them
 * extracts untrusted paths to disk.
 */
export interface SourceEntry {
  /** POSIX path relative to the tree's root. */
  readonly path: string;
  /** Size in bytes. */
  readonly size: number;
}

/** A file a tree left out, with the reason (for example over its size limit). */
export interface SkippedEntry {
  readonly path: string;
  readonly size: number;
  readonly reason: string;
}

export interface SourceTree {
  /** Files the tree left out; a scan reports each as a message, so none disappears silently. */
  readonly skipped?: readonly SkippedEntry[];
  /** Every regular file of the tree, in a stable order (sorted by path). */
  list(): Promise<SourceEntry[]>;
  /** The content of one file listed by `list()`. Rejects for a path that is not listed. */
  read(path: string): Promise<Buffer>;
  /** Releases what the tree holds (temporary directories, open handles). Safe to call twice. */
  close(): Promise<void>;
}
