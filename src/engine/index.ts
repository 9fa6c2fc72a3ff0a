/**
 * The Vigil scan engine: a read-only source tree in, a threat model and vulnerabilities out.
 * Pure — no database, no HTTP (an LLM client is injected for `audit` scans). Files are read one
 * at a time and their syntax trees dropped after analysis, so memory stays bounded.
 */

import { availableParallelism } from 'node:os';
import type { LlmClient } from '../integrations/llm/llm-client.ts';
import { FindingCollector } from './findings.ts';
import { RiskiestFunctions, reviewWithLlm } from './llm/review.ts';
import { triageWithLlm } from './llm/triage.ts';
import { isProbablyText, MAX_SECRET_FILE_BYTES, scanSecretsInText } from './secrets/secrets.ts';
import { FileAnalysis } from './solidity/analysis.ts';
import { SolFile } from './solidity/model.ts';
import { parseSolidity } from './solidity/parser.ts';
import { scanSolidityFile } from './solidity/scan-file.ts';
import { SolidityScanPool } from './solidity/scan-pool.ts';
import type { SourceTree } from './sources/tree.ts';
import { addFileToThreatModel, emptyThreatModel, finalizeThreatModel } from './threat-model/threat-model.ts';
import type {
  EngineVulnerability,
  ScanMessage,
  ScanProgress,
  ScanResult,
  ScanType,
  ThreatModel,
} from './types.ts';

export type { LlmClient } from '../integrations/llm/llm-client.ts';
export { toSarifReport } from './report/sarif.ts';
export { toSastReport } from './report/sast.ts';
export { allRuleMetas } from './rules-catalogue.ts';
export { openDirectoryTree } from './sources/directory-tree.ts';
export type { SourceEntry, SourceTree } from './sources/tree.ts';
export { renderThreatModelMarkdown } from './threat-model/markdown.ts';
export type * from './types.ts';

/** Solidity files larger than this are skipped with a warning (generated flattenings of whole repos). */
export const MAX_SOLIDITY_FILE_BYTES = 4 * 1024 * 1024;
/** How many functions an `audit` scan sends to the LLM. */
export const LLM_REVIEW_LIMIT = 8;

export interface ScanOptions {
  type: ScanType;
  /** The threat model built before the scan; `audit` builds one on the fly when it is absent. */
  threatModel?: ThreatModel;
  /** An OpenAI-compatible client; only `audit` scans use it. */
  llm?: LlmClient;
  /** Checked between files: an aborted scan rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called after each file. */
  onProgress?: (p: ScanProgress) => void | Promise<void>;
  /**
   * Worker threads for Solidity analysis: by default one per core (at most 4) when the tree has at
   * least `PARALLEL_MIN_FILES` Solidity files totalling `PARALLEL_MIN_BYTES`, and the scan is not
   * `audit`; 0 analyses in this thread.
   */
  workers?: number;
  /** Nice value the analysis threads lower themselves to (never raise); 0 leaves them alone. */
  threadNice?: number;
  /**
   * LLM triage of the rule findings (needs `llm`; off by default): the model may lower the
   * confidence of or dismiss a finding with a recorded reason, never add or raise one.
   */
  llmTriage?: boolean;
  /** How many findings the triage sends to the model (the most severe first); default `LLM_TRIAGE_LIMIT`. */
  llmTriageLimit?: number;
}

/** Below this many Solidity files, starting workers costs more than it saves. */
export const PARALLEL_MIN_FILES = 24;
/** Each worker loads the parser and the rules (about a second of CPU): worth it from about 30,000 lines. */
export const PARALLEL_MIN_BYTES = 1024 * 1024;

const isSolidity = (p: string): boolean => p.endsWith('.sol');

/** Builds the threat model of every Solidity file in the tree. */
export async function buildThreatModel(
  tree: SourceTree,
  options: { signal?: AbortSignal } = {},
): Promise<ThreatModel> {
  const model = emptyThreatModel();
  const entries = await tree.list();
  let solidityFiles = 0;
  let lines = 0;
  for (const e of entries) {
    options.signal?.throwIfAborted();
    if (!isSolidity(e.path) || e.size > MAX_SOLIDITY_FILE_BYTES) continue;
    const buf = await tree.read(e.path);
    if (!isProbablyText(buf)) continue;
    const source = buf.toString('utf8');
    solidityFiles++;
    lines += countLines(source);
    const parsed = await parseSolidity(source);
    addFileToThreatModel(model, new FileAnalysis(new SolFile(e.path, source, parsed.root, parsed.errors)));
  }
  return finalizeThreatModel(model, { files: entries.length, solidityFiles, lines });
}

/** Runs the rules of the scan type on every file of the tree. */
export async function scanTree(tree: SourceTree, options: ScanOptions): Promise<ScanResult> {
  const started = performance.now();
  const entries = await tree.list();
  const vulnerabilities: EngineVulnerability[] = [];
  const messages: ScanMessage[] = (tree.skipped ?? []).map((s) => ({
    level: 'warning' as const,
    value: `${s.path}: not scanned (${s.reason}, ${s.size} bytes).`,
  }));
  const audit = options.type === 'audit';
  // `audit` without a given model builds one file by file (per-file threats only).
  const ownModel = audit && !options.threatModel ? emptyThreatModel() : undefined;
  const threatModel = options.threatModel ?? ownModel;
  const riskiest = audit && options.llm ? new RiskiestFunctions(LLM_REVIEW_LIMIT) : undefined;
  let files = 0;
  let lines = 0;
  let done = 0;
  let skipped = 0;
  const solEntries = entries.filter((e) => isSolidity(e.path) && e.size <= MAX_SOLIDITY_FILE_BYTES);
  const solBytes = solEntries.reduce((n, e) => n + e.size, 0);
  // `audit` keeps each file's analysis for the threat model and the LLM review: one thread.
  const workerCount = audit
    ? 0
    : (options.workers ??
      (solEntries.length >= PARALLEL_MIN_FILES && solBytes >= PARALLEL_MIN_BYTES && availableParallelism() > 1
        ? Math.min(4, availableParallelism())
        : 0));
  const pool =
    workerCount > 0 ? await SolidityScanPool.start(workerCount, options.threadNice ?? 0) : undefined;
  // Per-file messages keep the order of the tree whatever order workers finish in.
  const fileMessages: ScanMessage[][] = [];
  // Sources of Solidity files, kept only when findings are to be triaged by the LLM.
  const triageSources = new Map<string, string>();
  const inFlight = new Set<Promise<void>>();
  const finish = async (): Promise<void> => {
    done++;
    await options.onProgress?.({ filesDone: done, filesTotal: entries.length });
  };
  try {
    for (const [i, entry] of entries.entries()) {
      options.signal?.throwIfAborted();
      const own: ScanMessage[] = [];
      fileMessages[i] = own;
      let deferred = false;
      try {
        const sol = isSolidity(entry.path);
        if (sol && entry.size > MAX_SOLIDITY_FILE_BYTES) {
          own.push({
            level: 'warning',
            value: `${entry.path}: skipped, ${entry.size} bytes is over the ${MAX_SOLIDITY_FILE_BYTES}-byte limit.`,
          });
        } else if (!sol && entry.size > MAX_SECRET_FILE_BYTES) {
          skipped++;
        } else {
          const buf = await tree.read(entry.path);
          if (!isProbablyText(buf)) skipped++;
          else {
            const text = buf.toString('utf8');
            files++;
            lines += countLines(text);
            vulnerabilities.push(...secretFindings(entry.path, text));
            if (sol && options.llmTriage && options.llm) triageSources.set(entry.path, text);
            if (sol && pool) {
              const worker = await pool.acquire();
              deferred = true;
              const job = pool
                .run(worker, entry.path, text, options.type)
                .then(
                  (r) => {
                    vulnerabilities.push(...r.vulnerabilities);
                    own.push(...r.messages);
                  },
                  // A worker that cannot run: analyse the file in this thread instead.
                  async () => {
                    const r = await scanSolidityFile(entry.path, text, options.type);
                    vulnerabilities.push(...r.vulnerabilities);
                    own.push(...r.messages);
                  },
                )
                .then(finish);
              inFlight.add(job);
              const forget = (): boolean => inFlight.delete(job);
              job.then(forget, forget);
            } else if (sol) {
              const r = await scanSolidityFile(entry.path, text, options.type, threatModel);
              vulnerabilities.push(...r.vulnerabilities);
              own.push(...r.messages);
              if (r.analysis) {
                if (ownModel) addFileToThreatModel(ownModel, r.analysis);
                riskiest?.addFile(r.analysis, r.vulnerabilities, threatModel);
              }
            }
          }
        }
      } catch (err) {
        options.signal?.throwIfAborted();
        own.push({
          level: 'error',
          value: `${entry.path}: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
      if (!deferred) await finish();
    }
    await Promise.all(inFlight);
  } finally {
    await pool?.close();
  }
  for (const m of fileMessages) if (m) messages.push(...m);
  if (skipped > 0) {
    messages.push({
      level: 'info',
      value: `${skipped} binary or very large file(s) were not scanned for secrets.`,
    });
  }
  if (riskiest && options.llm && riskiest.candidates.length > 0) {
    const review = await reviewWithLlm(options.llm, riskiest.candidates, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(threatModel ? { threatModel } : {}),
    });
    vulnerabilities.push(...review.vulnerabilities);
    messages.push(...review.messages);
    messages.push({
      level: 'info',
      value: `LLM review (${options.llm.model}) of ${riskiest.candidates.length} function(s): ${review.vulnerabilities.length} finding(s).`,
    });
  }
  if (options.llmTriage && options.llm) {
    const triage = await triageWithLlm(
      options.llm,
      vulnerabilities,
      (file, start, end) => {
        const text = triageSources.get(file);
        if (!text) return '';
        return text
          .split('\n')
          .slice(start - 1, end)
          .map((l, i) => `${start + i}: ${l}`)
          .join('\n');
      },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.llmTriageLimit !== undefined ? { limit: options.llmTriageLimit } : {}),
      },
    );
    vulnerabilities.splice(0, vulnerabilities.length, ...triage.vulnerabilities);
    messages.push(...triage.messages, {
      level: 'info',
      value: `LLM triage (${options.llm.model}): ${triage.kept} kept, ${triage.lowered} lowered, ${triage.dismissed} dismissed.`,
    });
  }
  vulnerabilities.sort(
    (a, b) =>
      (a.location.file < b.location.file ? -1 : a.location.file > b.location.file ? 1 : 0) ||
      a.location.startLine - b.location.startLine ||
      a.ruleId.localeCompare(b.ruleId),
  );
  return {
    vulnerabilities,
    messages,
    stats: { files, lines, durationMs: Math.round(performance.now() - started) },
  };
}

function secretFindings(path: string, text: string): EngineVulnerability[] {
  const matches = scanSecretsInText(path, text);
  if (matches.length === 0) return [];
  const collector = new FindingCollector();
  for (const m of matches) {
    collector.add({
      meta: m.meta,
      file: path,
      startLine: m.line,
      endLine: m.line,
      snippet: m.maskedLine,
      message: m.message,
      ...(m.severity ? { severity: m.severity } : {}),
    });
  }
  return collector.vulnerabilities;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return text.endsWith('\n') ? n - 1 : n;
}
