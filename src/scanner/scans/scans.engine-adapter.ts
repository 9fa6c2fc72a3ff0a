/** Binds the scan lifecycle's engine port to the engine (src/engine). */
import { buildThreatModel, type LlmClient, renderThreatModelMarkdown, scanTree } from '../../engine/index.ts';
import type { ScanEngine } from './scans.ports.ts';

/** The engine port over src/engine; `llm` is used by `audit` scans when configured. */
export function createEngineAdapter(
  deps: { llm?: LlmClient | undefined; threadNice?: number } = {},
): ScanEngine {
  return {
    buildThreatModel: (tree) => buildThreatModel(tree),
    renderThreatModelMarkdown: (model) => renderThreatModelMarkdown(model),
    scanTree: (tree, options) =>
      scanTree(tree, {
        type: options.type,
        ...(options.threatModel ? { threatModel: options.threatModel } : {}),
        ...(deps.llm ? { llm: deps.llm } : {}),
        ...(deps.threadNice ? { threadNice: deps.threadNice } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      }),
  };
}
