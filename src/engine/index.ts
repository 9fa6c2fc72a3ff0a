/**
 * The Vigil scan engine: a read-only source tree in, a threat model and vulnerabilities out.
 * Pure — no database, no HTTP (an LLM client is injected for `audit` scans). Files are read one
 * at a time and their syntax trees dropped after analysis, so memory stays bounded.
 */

import type { LlmClient } from '../integrations/llm/llm-client.ts';
import { DEFAULT_FILE_BUDGET_MS, isBudgetExceeded } from './deadline.ts';
import { compactStrings, FindingCollector, isWide } from './findings.ts';
import {
  LLM_REVIEW_LIMIT,
  type PendingCandidate,
  pendingCandidates,
  type ReviewCandidate,
  RiskiestFunctions,
  reviewWithLlm,
} from './llm/review.ts';
import { triageWithLlm } from './llm/triage.ts';
import { isProbablyText, MAX_SECRET_FILE_BYTES, scanSecretsInText } from './secrets/secrets.ts';
import { type LoadedProject, loadProject } from './solidity/load-project.ts';
import { rulesFor } from './solidity/rules/index.ts';
import {
  countLines,
  type ParsedSolidityFile,
  runSolidityRules,
  runSolidityRulesWithinBudget,
} from './solidity/scan-file.ts';
import {
  classifyPath,
  loadSelectionSettings,
  type PathClass,
  SelectionSummary,
} from './sources/selection.ts';
import type { SourceEntry, SourceTree } from './sources/tree.ts';
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
export { DEFAULT_FILE_BUDGET_MS } from './deadline.ts';
export { toSarifReport } from './report/sarif.ts';
export { SastReportText, toSastReport } from './report/sast.ts';
export { allRuleMetas } from './rules-catalogue.ts';
export { restoreParserTiering, tierParserForShortRun } from './solidity/parser.ts';
export { openDirectoryTree } from './sources/directory-tree.ts';
export {
  classifyPath,
  loadSelectionSettings,
  type PathClass,
  ProjectSettingsError,
  type SelectionSettings,
} from './sources/selection.ts';
export type { SourceEntry, SourceTree } from './sources/tree.ts';
export { renderThreatModelMarkdown } from './threat-model/markdown.ts';
export type * from './types.ts';

/** Solidity files larger than this are skipped with a warning (generated flattenings of whole repos). */
export const MAX_SOLIDITY_FILE_BYTES = 4 * 1024 * 1024;
export { LLM_REVIEW_LIMIT } from './llm/review.ts';

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
   * What {@link analyzeTree} produced for this tree and scan type: its Solidity files are not
   * parsed again (their rule results and the review candidates are taken from it). Pass the
   * threat model of the same pass as `threatModel`.
   */
  prepared?: PreparedScan;
  /** Called each time a Solidity file is handed to the parser. */
  onParse?: (path: string) => void;
  /**
   * Called once before the first Solidity file is parsed, with the bytes of the Solidity files the
   * rules will run on (the files their imports name come on top): `vigil engine scan` picks the
   * parser's tier there.
   */
  beforeParse?: (solidityBytes: number) => void;
  /**
   * Called once per file when its findings are complete, with the file's position in the tree and
   * its findings in report order (files complete in tree order). The result's `vulnerabilities`
   * are these objects, files in tree order, unless an LLM pass changed them.
   */
  onFileFindings?: (fileIndex: number, findings: readonly EngineVulnerability[]) => void;
  /**
   * LLM triage of the rule findings (needs `llm`; off by default): the model may lower the
   * confidence of or dismiss a finding with a recorded reason, never add or raise one.
   */
  llmTriage?: boolean;
  /** How many findings the triage sends to the model (the most severe first); default `LLM_TRIAGE_LIMIT`. */
  llmTriageLimit?: number;
  /**
   * Run the Solidity rules on tests, mocks and scripts too (`--include-tests`); `vigil.toml` can
   * ask for it as well. See sources/selection.ts.
   */
  includeTests?: boolean;
  /**
   * Analysis time each Solidity file may take (parsing excluded), in milliseconds; default
   * `DEFAULT_FILE_BUDGET_MS`, `Infinity` for none. A file over it is analysed by the cheap passes
   * only (lite rules, secret rules) and a warning names it (docs/adr/0001-per-file-analysis-budget.md).
   */
  fileBudgetMs?: number;
}

const isSolidity = (p: string): boolean => p.endsWith('.sol');

/**
 * The Solidity files the rules run on: within the size limit and reported by the tree's selection
 * (not tests, scripts, vendored or ignored files), in tree order.
 */
async function solidityPaths(
  tree: SourceTree,
  entries: readonly SourceEntry[],
  includeTests: boolean | undefined,
): Promise<string[]> {
  const selection = await loadSelectionSettings(tree, entries, { includeTests: includeTests === true });
  return entries
    .filter(
      (e) =>
        isSolidity(e.path) &&
        e.size <= MAX_SOLIDITY_FILE_BYTES &&
        classifyPath(e.path, selection) === 'report',
    )
    .map((e) => e.path);
}

/**
 * Parses the Solidity files the rules run on and the files their imports name (vendored
 * packages, test helpers: read for context, never reported): the project model.
 */
async function loadTreeProject(
  tree: SourceTree,
  entries: readonly SourceEntry[],
  options: { signal?: AbortSignal; onParse?: (path: string) => void; includeTests?: boolean },
): Promise<{ loaded: LoadedProject; paths: string[] }> {
  const paths = await solidityPaths(tree, entries, options.includeTests);
  const loaded = await loadProject(tree, entries, paths, {
    maxFileBytes: MAX_SOLIDITY_FILE_BYTES,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onParse ? { onParse: options.onParse } : {}),
  });
  return { loaded, paths };
}

/** Builds the threat model of every Solidity file in the tree. */
export async function buildThreatModel(
  tree: SourceTree,
  options: { signal?: AbortSignal; includeTests?: boolean } = {},
): Promise<ThreatModel> {
  const model = emptyThreatModel();
  const entries = await tree.list();
  let solidityFiles = 0;
  let lines = 0;
  const { loaded, paths } = await loadTreeProject(tree, entries, options);
  for (const path of paths) {
    await yieldBetweenFiles(options.signal);
    const parsed = loaded.take(path);
    if (!parsed) continue;
    solidityFiles++;
    lines += parsed.lineCount;
    addFileToThreatModel(model, parsed.analysis);
  }
  return finalizeThreatModel(model, { files: entries.length, solidityFiles, lines });
}

/** The rule results of one Solidity file, from {@link analyzeTree}. */
export interface PreparedFile {
  path: string;
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  /** The file's analysis went over its budget: the findings are the cheap passes' only. */
  overBudget?: boolean;
}

/**
 * What the one pass of {@link analyzeTree} leaves for {@link scanTree} (JSON: it is stored
 * between the two, which may run on different workers).
 */
export interface PreparedScan {
  version: 1;
  type: ScanType;
  /** Every Solidity file the pass parsed, in tree order, with its rule findings and messages. */
  files: PreparedFile[];
  /** `audit`: the functions for the LLM review, scored with the whole threat model. */
  reviewCandidates?: ReviewCandidate[];
}

/** Options of {@link analyzeTree}. */
export interface AnalyzeOptions {
  type: ScanType;
  signal?: AbortSignal;
  /** Called each time a Solidity file is handed to the parser. */
  onParse?: (path: string) => void;
  /** As {@link ScanOptions.includeTests}; give both calls the same value. */
  includeTests?: boolean;
  /** As {@link ScanOptions.fileBudgetMs}: it covers the file's share of the threat model too. */
  fileBudgetMs?: number;
}

/**
 * One pass over the tree that parses each Solidity file once and produces both the threat model
 * (as {@link buildThreatModel}) and the Solidity rule results of the scan type (as
 * {@link scanTree} given that model), for `scanTree` to take over with `prepared`.
 *
 * The rules that read the threat model need the model of the whole tree: they run on a file once
 * the pass is over. Without a model they report a superset of what they report with one, so a
 * file on which they report nothing without it is done when the pass leaves it; only the (rare)
 * files on which they do report are kept parsed until the end. `audit` review candidates are
 * scored the same way: their share of the threat model is added at the end.
 */
export async function analyzeTree(
  tree: SourceTree,
  options: AnalyzeOptions,
): Promise<{ threatModel: ThreatModel; prepared: PreparedScan }> {
  const model = emptyThreatModel();
  const entries = await tree.list();
  const rules = rulesFor(options.type);
  const fileRules = rules.filter((r) => !r.readsThreatModel);
  const modelRules = rules.filter((r) => r.readsThreatModel);
  const audit = options.type === 'audit';
  const files: PreparedFile[] = [];
  // Per Solidity file, in tree order: its review candidates before the threat model's share.
  const pending: PendingCandidate[][] = [];
  const deferred: Array<{ index: number; parsed: ParsedSolidityFile; remainingMs: number }> = [];
  const budgetMs = options.fileBudgetMs ?? DEFAULT_FILE_BUDGET_MS;
  let solidityFiles = 0;
  let lines = 0;
  const { loaded, paths } = await loadTreeProject(tree, entries, options);
  for (const path of paths) {
    await yieldBetweenFiles(options.signal);
    const parsed = loaded.take(path);
    if (!parsed) continue;
    solidityFiles++;
    lines += parsed.lineCount;
    // The file's share of the threat model, its rules and the probe of the model's rules count
    // against one budget; over it, the file's share is taken back and it gets the cheap passes.
    const lengths = modelLengths(model);
    const r = runSolidityRulesWithinBudget(parsed, fileRules, options.type, budgetMs, {
      first: () => addFileToThreatModel(model, parsed.analysis),
      more: (fileResult) => {
        const probe = modelRules.length > 0 ? runSolidityRules(parsed, modelRules, options.type) : undefined;
        const defer = probe !== undefined && (probe.vulnerabilities.length > 0 || probe.messages.length > 0);
        const candidates =
          audit && !defer ? pendingCandidates(parsed.analysis, fileResult.vulnerabilities) : [];
        return { defer, candidates, remainingMs: parsed.analysis.deadline.remainingMs() };
      },
    });
    if (r.overBudget) restoreModelLengths(model, lengths);
    const file: PreparedFile = {
      path,
      vulnerabilities: r.vulnerabilities,
      messages: [...parsed.messages, ...r.messages],
      ...(r.overBudget ? { overBudget: true } : {}),
    };
    const index = files.push(file) - 1;
    if (!r.more) continue;
    if (r.more.defer) {
      deferred.push({ index, parsed, remainingMs: r.more.remainingMs });
      continue;
    }
    if (audit) pending[index] = r.more.candidates;
  }
  const threatModel = finalizeThreatModel(model, { files: entries.length, solidityFiles, lines });
  for (const { index, parsed, remainingMs } of deferred) {
    const file = files[index]!;
    // The rules reading the model come last in every profile: their results go last too. They
    // get what the file's pass left of its budget: over it, the file's findings become the cheap
    // passes' (its share of the threat model, complete, stays).
    const r = runSolidityRulesWithinBudget(parsed, modelRules, options.type, budgetMs, {
      threatModel,
      remainingMs,
      more: (modelResult) =>
        audit
          ? pendingCandidates(parsed.analysis, [...file.vulnerabilities, ...modelResult.vulnerabilities])
          : [],
    });
    if (r.overBudget) {
      files[index] = {
        path: file.path,
        vulnerabilities: r.vulnerabilities,
        messages: [...parsed.messages, ...r.messages],
        overBudget: true,
      };
      continue;
    }
    file.vulnerabilities.push(...r.vulnerabilities);
    file.messages.push(...r.messages);
    if (audit) pending[index] = r.more ?? [];
  }
  const prepared: PreparedScan = { version: 1, type: options.type, files };
  if (audit) {
    const riskiest = new RiskiestFunctions(LLM_REVIEW_LIMIT);
    for (const candidates of pending) for (const c of candidates ?? []) riskiest.addPending(c, threatModel);
    prepared.reviewCandidates = [...riskiest.candidates];
  }
  return { threatModel, prepared };
}

/** One {@link scanTree} run: what it was asked, and what it gathers file by file. */
interface TreeScan {
  tree: SourceTree;
  options: ScanOptions;
  /** Per entry of the tree: reported, test, vendored or ignored. */
  classes: PathClass[];
  /** The project model of the Solidity files still to analyse (none were, or all were prepared). */
  loaded: LoadedProject | undefined;
  /** Rule results of analyzeTree's pass for the same scan type, by path. */
  preparedFiles: Map<string, PreparedFile> | undefined;
  /** `audit` without a given model: the one built here, file by file (per-file threats only). */
  ownModel: ThreatModel | undefined;
  threatModel: ThreatModel | undefined;
  /** `audit` with an LLM and no prepared candidates: the functions to review. */
  riskiest: RiskiestFunctions | undefined;
  budgetMs: number;
  /** Per entry: its analysis went over budget. */
  overBudget: boolean[];
  /** Sources of Solidity files, kept only when findings are to be triaged by the LLM. */
  triageSources: Map<string, string>;
  files: number;
  lines: number;
  /** Binary or very large files not scanned for secrets. */
  skipped: number;
}

/** Runs the rules of the scan type on every file of the tree. */
export async function scanTree(tree: SourceTree, options: ScanOptions): Promise<ScanResult> {
  const started = performance.now();
  const entries = await tree.list();
  const audit = options.type === 'audit';
  const ownModel = audit && !options.threatModel ? emptyThreatModel() : undefined;
  const prepared = options.prepared?.type === options.type ? options.prepared : undefined;
  const preparedFiles = prepared ? new Map(prepared.files.map((f) => [f.path, f])) : undefined;
  // What is reported: tests and scripts get the secret rules only, vendored and ignored files nothing.
  const selection = new SelectionSummary(
    await loadSelectionSettings(tree, entries, { includeTests: options.includeTests === true }),
  );
  const classes = entries.map((e) => selection.add(e.path, isSolidity(e.path)));
  const scan: TreeScan = {
    tree,
    options,
    classes,
    loaded: await loadSolidityToAnalyse(tree, entries, classes, preparedFiles, options),
    preparedFiles,
    ownModel,
    threatModel: options.threatModel ?? ownModel,
    riskiest:
      audit && options.llm && !prepared?.reviewCandidates
        ? new RiskiestFunctions(LLM_REVIEW_LIMIT)
        : undefined,
    budgetMs: options.fileBudgetMs ?? DEFAULT_FILE_BUDGET_MS,
    overBudget: [],
    triageSources: new Map(),
    files: 0,
    lines: 0,
    skipped: 0,
  };
  // Findings and messages per file, each file's findings sorted when it is done: concatenated in
  // the tree's order (by path) they are already in report order, and the final sort only checks it.
  const fileFindings: EngineVulnerability[][] = [];
  const fileMessages: ScanMessage[][] = [];
  for (const [i, entry] of entries.entries()) {
    await yieldBetweenFiles(options.signal);
    const found: EngineVulnerability[] = [];
    const own: ScanMessage[] = [];
    fileFindings[i] = found;
    fileMessages[i] = own;
    try {
      await scanEntry(scan, i, entry, found, own);
    } catch (err) {
      options.signal?.throwIfAborted();
      own.push({
        level: 'error',
        value: `${entry.path}: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    options.onFileFindings?.(i, found.sort(compareFindings));
    await options.onProgress?.({ filesDone: i + 1, filesTotal: entries.length });
  }

  const messages: ScanMessage[] = (tree.skipped ?? []).map((s) => ({
    level: 'warning' as const,
    value: `${s.path}: not scanned (${s.reason}, ${s.size} bytes).`,
  }));
  messages.push(...selection.messages());
  for (const m of fileMessages) messages.push(...m);
  const vulnerabilities: EngineVulnerability[] = [];
  for (const f of fileFindings) for (const v of f) vulnerabilities.push(v);
  if (scan.skipped > 0) {
    messages.push({
      level: 'info',
      value: `${scan.skipped} binary or very large file(s) were not scanned for secrets.`,
    });
  }
  await runLlmPasses(
    scan,
    prepared?.reviewCandidates ?? scan.riskiest?.candidates,
    vulnerabilities,
    messages,
  );
  vulnerabilities.sort(compareFindings);
  return {
    vulnerabilities,
    messages,
    filesOverBudget: entries.filter((_, i) => scan.overBudget[i]).map((e) => e.path),
    stats: { files: scan.files, lines: scan.lines, durationMs: Math.round(performance.now() - started) },
  };
}

/**
 * The project model: every reported Solidity file not analysed before, and what their imports
 * name; `undefined` when there is none.
 */
async function loadSolidityToAnalyse(
  tree: SourceTree,
  entries: readonly SourceEntry[],
  classes: readonly PathClass[],
  preparedFiles: Map<string, PreparedFile> | undefined,
  options: ScanOptions,
): Promise<LoadedProject | undefined> {
  const analysed = entries.filter(
    (e, i) =>
      isSolidity(e.path) &&
      classes[i] === 'report' &&
      e.size <= MAX_SOLIDITY_FILE_BYTES &&
      !preparedFiles?.has(e.path),
  );
  if (analysed.length === 0) return undefined;
  options.beforeParse?.(analysed.reduce((n, e) => n + e.size, 0));
  return loadProject(
    tree,
    entries,
    analysed.map((e) => e.path),
    {
      maxFileBytes: MAX_SOLIDITY_FILE_BYTES,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onParse ? { onParse: options.onParse } : {}),
    },
  );
}

/**
 * One entry of the tree: its secrets (tests included), and for a reported Solidity file the rules
 * of the scan type, or the results analyzeTree prepared. Vendored and ignored files are skipped
 * (the selection's messages count them), as are files over the size limits.
 */
async function scanEntry(
  scan: TreeScan,
  i: number,
  entry: SourceEntry,
  found: EngineVulnerability[],
  own: ScanMessage[],
): Promise<void> {
  const use = scan.classes[i];
  if (use === 'vendored' || use === 'ignored') return;
  const sol = isSolidity(entry.path) && use === 'report';
  if (sol && entry.size > MAX_SOLIDITY_FILE_BYTES) {
    own.push({
      level: 'warning',
      value: `${entry.path}: skipped, ${entry.size} bytes is over the ${MAX_SOLIDITY_FILE_BYTES}-byte limit.`,
    });
    return;
  }
  if (!sol && entry.size > MAX_SECRET_FILE_BYTES) {
    scan.skipped++;
    return;
  }
  // A Solidity file of the project was read when the project was loaded.
  const source = sol ? scan.loaded?.source(entry.path) : undefined;
  const buf = source === undefined ? await scan.tree.read(entry.path) : undefined;
  if (buf && !isProbablyText(buf)) {
    scan.skipped++;
    return;
  }
  const text = source ?? buf?.toString('utf8') ?? '';
  const wide = isWide(text);
  scan.files++;
  scan.lines += countLines(text);
  for (const v of secretFindings(entry.path, text)) found.push(wide ? compactStrings(v) : v);
  if (!sol) return;
  const { options } = scan;
  if (options.llmTriage && options.llm) scan.triageSources.set(entry.path, text);
  const ready = scan.preparedFiles?.get(entry.path);
  if (ready) {
    found.push(...ready.vulnerabilities);
    own.push(...ready.messages);
    if (ready.overBudget) scan.overBudget[i] = true;
    return;
  }
  // Every Solidity file not analysed before is in the project (unless it is not text).
  const parsed = scan.loaded?.take(entry.path);
  if (!parsed) throw new Error('not a text file');
  const { ownModel, riskiest, threatModel } = scan;
  // `audit`: the file's share of its own threat model and its review candidates count against
  // the file's budget too.
  const more =
    ownModel || riskiest
      ? (res: { vulnerabilities: EngineVulnerability[] }) => {
          const candidates = riskiest ? pendingCandidates(parsed.analysis, res.vulnerabilities) : [];
          if (ownModel) addFileToModelAtomically(ownModel, parsed.analysis);
          return candidates;
        }
      : undefined;
  const r = runSolidityRulesWithinBudget(parsed, rulesFor(options.type), options.type, scan.budgetMs, {
    ...(threatModel ? { threatModel } : {}),
    ...(more ? { more } : {}),
  });
  for (const v of r.vulnerabilities) found.push(wide ? compactStrings(v) : v);
  own.push(...parsed.messages, ...r.messages);
  if (r.overBudget) scan.overBudget[i] = true;
  for (const c of r.more ?? []) riskiest?.addPending(c, threatModel);
}

/**
 * `audit` with an LLM: the review of the riskiest functions adds findings; with `llmTriage`, the
 * LLM then keeps, lowers or dismisses each finding (`vulnerabilities` is replaced in place).
 */
async function runLlmPasses(
  scan: TreeScan,
  reviewCandidates: readonly ReviewCandidate[] | undefined,
  vulnerabilities: EngineVulnerability[],
  messages: ScanMessage[],
): Promise<void> {
  const { options, threatModel } = scan;
  if (!options.llm) return;
  if (options.type === 'audit' && reviewCandidates && reviewCandidates.length > 0) {
    const review = await reviewWithLlm(options.llm, reviewCandidates, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(threatModel ? { threatModel } : {}),
    });
    vulnerabilities.push(...review.vulnerabilities);
    messages.push(...review.messages);
    messages.push({
      level: 'info',
      value: `LLM review (${options.llm.model}) of ${reviewCandidates.length} function(s): ${review.vulnerabilities.length} finding(s).`,
    });
  }
  if (!options.llmTriage) return;
  const triage = await triageWithLlm(
    options.llm,
    vulnerabilities,
    (file, start, end) => {
      const text = scan.triageSources.get(file);
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

/** The lists of a threat model a file adds entries to. */
const MODEL_LISTS = [
  'contracts',
  'entryPoints',
  'roles',
  'assets',
  'externalCalls',
  'upgradeability',
  'oracles',
  'trustBoundaries',
  'threats',
] as const satisfies ReadonlyArray<keyof ThreatModel>;

/** How long each list of the model is: a file's share is taken back by cutting them to it. */
function modelLengths(model: ThreatModel): number[] {
  return MODEL_LISTS.map((k) => model[k].length);
}

function restoreModelLengths(model: ThreatModel, lengths: readonly number[]): void {
  for (const [i, k] of MODEL_LISTS.entries()) model[k].length = lengths[i]!;
}

/**
 * Adds the file's share of the threat model, all of it or (when its analysis budget runs out
 * half-way, which rethrows) none of it.
 */
function addFileToModelAtomically(model: ThreatModel, fa: ParsedSolidityFile['analysis']): void {
  const lengths = modelLengths(model);
  try {
    addFileToThreatModel(model, fa);
  } catch (err) {
    if (isBudgetExceeded(err)) restoreModelLengths(model, lengths);
    throw err;
  }
}

/**
 * Between two files: stop when the scan was cancelled, and let the event loop run (the job's
 * heartbeat, the API of a `vigil start` process): the analysis itself never awaits.
 */
async function yieldBetweenFiles(signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  await new Promise<void>((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}

/**
 * Report order: by file, line, then rule, each compared by code units (rule ids are lowercase
 * ASCII words, dots and hyphens; `localeCompare` would load ICU's collation at each start).
 */
function compareFindings(a: EngineVulnerability, b: EngineVulnerability): number {
  return (
    (a.location.file < b.location.file ? -1 : a.location.file > b.location.file ? 1 : 0) ||
    a.location.startLine - b.location.startLine ||
    (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0)
  );
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
