import type { SourceTree } from '../../engine/sources/tree.ts';

/** Options of {@link createKeptTrees}. */
export interface KeptTreesOptions {
  /** At most this many trees are kept; keeping one more closes the oldest. */
  max: number;
  /** A tree not taken within this time is closed (its scan job ran elsewhere, or never ran). */
  ttlMs: number;
}

/**
 * The source trees this process opened for a scan's threat model, kept for the same scan's run:
 * a sourcehost commit is fetched (and its files listed) once per scan, not once per job. Bounded
 * in number and time, because a tree holds a temporary repository on disk; a scan job taken by
 * another worker, or after the tree expired, opens the sources again.
 */
export function createKeptTrees(options: KeptTreesOptions) {
  const kept = new Map<string, { tree: SourceTree; timer: NodeJS.Timeout }>();

  function release(scanId: string): SourceTree | undefined {
    const entry = kept.get(scanId);
    if (!entry) return undefined;
    kept.delete(scanId);
    clearTimeout(entry.timer);
    return entry.tree;
  }

  const closeQuietly = (tree: SourceTree | undefined): Promise<void> =>
    tree ? tree.close().catch(() => undefined) : Promise.resolve();

  return {
    /** Keeps `tree` for the scan's run (replacing and closing one kept before for that scan). */
    keep(scanId: string, tree: SourceTree): void {
      void closeQuietly(release(scanId));
      while (kept.size >= options.max) {
        const oldest = kept.keys().next().value;
        if (oldest === undefined) break;
        void closeQuietly(release(oldest));
      }
      const timer = setTimeout(() => void closeQuietly(release(scanId)), options.ttlMs);
      // An expiry timer alone must not keep the process alive.
      timer.unref();
      kept.set(scanId, { tree, timer });
    },
    /** The tree kept for the scan, handed over to the caller (who closes it), or undefined. */
    take(scanId: string): SourceTree | undefined {
      return release(scanId);
    },
    /** Closes every kept tree (at shutdown). */
    async closeAll(): Promise<void> {
      await Promise.all([...kept.keys()].map((scanId) => closeQuietly(release(scanId))));
    },
  };
}

export type KeptTrees = ReturnType<typeof createKeptTrees>;
