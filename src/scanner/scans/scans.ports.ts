import type { PreparedScan } from '../../engine/index.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import type { ScanProgress, ScanResult, ScanType, ThreatModel } from '../../engine/types.ts';
import type { ScanSource } from './scans.schemas.ts';

/** A threat model as the engine builds it: JSON, stored on the scan. */
export type { ThreatModel };

/** What the scan lifecycle needs of the scan engine (src/engine): pure functions over a source tree. */
export interface ScanEngine {
  /**
   * The one pass over the sources (each Solidity file parsed once): the threat model, and the
   * rule results of the scan type that `scanTree` takes over with `prepared`.
   */
  analyzeTree(
    tree: SourceTree,
    options: { type: ScanType; signal?: AbortSignal },
  ): Promise<{ threatModel: ThreatModel; prepared: PreparedScan }>;
  renderThreatModelMarkdown(model: ThreatModel): string;
  scanTree(
    tree: SourceTree,
    options: {
      type: ScanType;
      /** Absent for a scan without one stored (the engine then builds an empty one if it needs it). */
      threatModel?: ThreatModel;
      /** The pass of `analyzeTree` over the same sources, when it was kept: nothing is parsed again. */
      prepared?: PreparedScan;
      signal?: AbortSignal;
      onProgress?: (progress: ScanProgress) => void;
    },
  ): Promise<ScanResult>;
}

/**
 * Materializes a scan's sources (sourcehost commit or local archives) as a read-only tree,
 * filtered to the workspace prefix. Throws AppError for a definitive source failure
 * (SOURCEHOST_ERROR, ARCHIVE_NOT_FOUND, INVALID_ARCHIVE …).
 */
export type OpenScanSources = (input: {
  companyId: string;
  prefix: string;
  sources: ScanSource[];
  signal?: AbortSignal;
}) => Promise<SourceTree>;
