/** Binds the scan lifecycle's engine port to the engine (src/engine). */
import { engineFileBudgetMs } from '../../config.ts';
import { analyzeTree, type LlmClient, renderThreatModelMarkdown, scanTree } from '../../engine/index.ts';
import type { ScanEngine } from './scans.ports.ts';

/**
 * The engine port over src/engine; `llm` is used by `audit` scans when configured. `onParse` is
 * told each time the engine hands a Solidity file to the parser. `fileBudgetMs` is the per-file
 * analysis budget (`jobs.fileBudgetMs`; 0: no limit; absent: the engine's default).
 */
export function createEngineAdapter(
  deps: { llm?: LlmClient | undefined; onParse?: (path: string) => void; fileBudgetMs?: number } = {},
): ScanEngine {
  const onParse = deps.onParse ? { onParse: deps.onParse } : {};
  const budget =
    deps.fileBudgetMs !== undefined ? { fileBudgetMs: engineFileBudgetMs(deps.fileBudgetMs) } : {};
  return {
    analyzeTree: (tree, options) =>
      analyzeTree(tree, {
        type: options.type,
        ...(options.signal ? { signal: options.signal } : {}),
        ...budget,
        ...onParse,
      }),
    renderThreatModelMarkdown: (model) => renderThreatModelMarkdown(model),
    scanTree: (tree, options) =>
      scanTree(tree, {
        type: options.type,
        ...(options.threatModel ? { threatModel: options.threatModel } : {}),
        ...(options.prepared ? { prepared: options.prepared } : {}),
        ...(deps.llm ? { llm: deps.llm } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...budget,
        ...onParse,
      }),
  };
}
