/** Runs the Solidity rules of a scan type on one file, within the file's analysis budget. */
import { Deadline, isBudgetExceeded } from '../deadline.ts';
import { FindingCollector } from '../findings.ts';
import type { EngineVulnerability, ScanMessage, ScanType, ThreatModel } from '../types.ts';
import { FileAnalysis } from './analysis.ts';
import { SolFile } from './model.ts';
import { type ParsedSource, parseSolidity } from './parser.ts';
import { rulesFor } from './rules/index.ts';
import type { RuleContext, SolidityRule } from './rules/rule.ts';

export interface SolidityFileResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  file: SolFile | undefined;
  /** The file's analysis; absent when it went over budget (only the cheap passes ran). */
  analysis: FileAnalysis | undefined;
  /** The analysis went over its budget: the findings are the cheap passes' only. */
  overBudget: boolean;
}

/** A parsed Solidity file, ready for the threat model and the rules. */
export interface ParsedSolidityFile {
  file: SolFile;
  analysis: FileAnalysis;
  /** The syntax-error warning, when the file does not parse cleanly. */
  messages: ScanMessage[];
}

/** Parses one Solidity file into its declarations, with the syntax-error warning when it has errors. */
export async function parseSolFile(
  path: string,
  source: string,
  parse: () => Promise<ParsedSource> = () => parseSolidity(source),
): Promise<{ file: SolFile; messages: ScanMessage[] }> {
  const messages: ScanMessage[] = [];
  const parsed = await parse();
  if (parsed.errors.length > 0) {
    const lines = [...new Set(parsed.errors.map((e) => e.line))].slice(0, 5);
    messages.push({
      level: 'warning',
      value: `${path}: syntax errors at line ${lines.join(', ')}; rules ran on the parts that parsed.`,
    });
  }
  return { file: new SolFile(path, source, parsed.root, parsed.errors), messages };
}

/** Parses one Solidity file as a project of its own (once: the threat model and every rule read the result). */
export async function parseSolidityFile(path: string, source: string): Promise<ParsedSolidityFile> {
  const { file, messages } = await parseSolFile(path, source);
  return { file, analysis: new FileAnalysis(file), messages };
}

/** Lines of a text, a trailing line break not counting as a line. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  // indexOf: the engine's native search, not a loop over every character of the file.
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

/**
 * Runs `rules` on a parsed file; a rule that throws becomes a scan message, except for the
 * file's budget running out (`BudgetExceededError`), which ends the run.
 */
export function runSolidityRules(
  parsed: Pick<ParsedSolidityFile, 'file' | 'analysis'>,
  rules: readonly SolidityRule[],
  type: ScanType,
  threatModel?: ThreatModel,
): { vulnerabilities: EngineVulnerability[]; messages: ScanMessage[] } {
  const { file, analysis } = parsed;
  const path = file.path;
  const messages: ScanMessage[] = [];
  const collector = new FindingCollector();
  const ctx: RuleContext = {
    fa: analysis,
    file,
    scanType: type,
    ...(threatModel ? { threatModel } : {}),
    report(meta, node, options = {}) {
      // A node of a base contract in another file is that file's to report, at its own lines.
      if (!file.owns(node)) return;
      const [startLine, endLine] = options.lines ?? [node.line, node.endLine];
      const fn = options.fn;
      const contract = options.contract ?? fn?.contract;
      const snippetText =
        options.lines && options.lines[0] !== node.line
          ? linesText(file, startLine, endLine)
          : options.lines
            ? linesText(file, startLine, endLine)
            : file.text(node);
      collector.add({
        meta,
        file: path,
        startLine,
        endLine,
        snippet: snippetText.trim(),
        contract: contract?.name,
        function: fn ? fn.name : undefined,
        message: options.message,
        severity: options.severity,
        confidence: options.confidence,
      });
    },
  };
  for (const rule of rules) {
    analysis.checkDeadline();
    try {
      rule.run(ctx);
    } catch (err) {
      if (isBudgetExceeded(err)) throw err;
      messages.push({
        level: 'error',
        value: `${path}: rule ${rule.meta.id} failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return { vulnerabilities: collector.vulnerabilities, messages };
}

/** `2 s`, `0.5 s`: a budget as the messages state it. */
export function budgetText(budgetMs: number): string {
  return `${Number((budgetMs / 1000).toPrecision(3))} s`;
}

/** The warning that names a file analysed by the cheap passes only. */
export function overBudgetMessage(path: string, budgetMs: number, type: ScanType): ScanMessage {
  const cheap = type === 'lite' ? 'the secret rules' : 'the cheap passes (lite rules, secret rules)';
  return {
    level: 'warning',
    value: `${path}: analysis exceeded its budget of ${budgetText(budgetMs)}; only ${cheap} ran on this file.`,
  };
}

/**
 * The cheap passes' budget: the file's, but never below this (lite rules are linear in the file;
 * a budget set very small still leaves them room to run).
 */
export const CHEAP_PASS_MIN_BUDGET_MS = 1_000;

/**
 * The cheap passes' Solidity part for a file whose analysis went over budget: the `lite` rules on
 * a fresh analysis of the parsed file (the spent one may hold half-built summaries), with a
 * budget of their own. For a `lite` scan the full pass was the lite rules: nothing runs again.
 */
export function runCheapPass(
  parsed: Pick<ParsedSolidityFile, 'file'>,
  type: ScanType,
  budgetMs: number,
): { vulnerabilities: EngineVulnerability[]; messages: ScanMessage[] } {
  if (type === 'lite') return { vulnerabilities: [], messages: [] };
  const analysis = new FileAnalysis(parsed.file);
  const cheapBudgetMs = Math.max(budgetMs, CHEAP_PASS_MIN_BUDGET_MS);
  analysis.deadline = Deadline.after(cheapBudgetMs);
  try {
    return runSolidityRules({ file: parsed.file, analysis }, rulesFor('lite'), type);
  } catch (err) {
    if (!isBudgetExceeded(err)) throw err;
    return {
      vulnerabilities: [],
      messages: [
        {
          level: 'warning',
          value: `${parsed.file.path}: the lite rules exceeded the budget of ${budgetText(cheapBudgetMs)} too; only the secret rules ran on this file.`,
        },
      ],
    };
  }
}

/**
 * Runs `first`, `rules` on a parsed file, then `more` (a caller's uses of the analysis, in the
 * order they always ran: summaries are memoised as they are asked for) within `budgetMs` of
 * analysis (parsing excluded). Over budget, everything the
 * file's full pass produced is dropped (a rule half-way through a file has not reported what it
 * would) and the cheap passes run instead: `more` then does not run.
 */
export function runSolidityRulesWithinBudget<T = undefined>(
  parsed: ParsedSolidityFile,
  rules: readonly SolidityRule[],
  type: ScanType,
  budgetMs: number,
  options: {
    threatModel?: ThreatModel;
    first?: () => void;
    more?: (r: { vulnerabilities: EngineVulnerability[] }) => T;
    /** What is left of the budget when part of it went to an earlier pass over the file. */
    remainingMs?: number;
  } = {},
): {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  overBudget: boolean;
  more?: T;
} {
  parsed.analysis.deadline = Deadline.after(options.remainingMs ?? budgetMs);
  try {
    options.first?.();
    const r = runSolidityRules(parsed, rules, type, options.threatModel);
    if (!options.more) return { ...r, overBudget: false };
    const more = options.more(r);
    return { ...r, overBudget: false, more };
  } catch (err) {
    if (!isBudgetExceeded(err)) throw err;
    const cheap = runCheapPass(parsed, type, budgetMs);
    return {
      vulnerabilities: cheap.vulnerabilities,
      messages: [overBudgetMessage(parsed.file.path, budgetMs, type), ...cheap.messages],
      overBudget: true,
    };
  } finally {
    parsed.analysis.deadline = Deadline.none;
  }
}

/**
 * Parses the file and runs every rule of `type` within `budgetMs` of analysis (default: none);
 * a rule that throws becomes a scan message.
 */
export async function scanSolidityFile(
  path: string,
  source: string,
  type: ScanType,
  threatModel?: ThreatModel,
  budgetMs = Number.POSITIVE_INFINITY,
): Promise<SolidityFileResult> {
  const parsed = await parseSolidityFile(path, source);
  const r = runSolidityRulesWithinBudget(parsed, rulesFor(type), type, budgetMs, {
    ...(threatModel ? { threatModel } : {}),
  });
  return {
    vulnerabilities: r.vulnerabilities,
    messages: [...parsed.messages, ...r.messages],
    file: parsed.file,
    analysis: r.overBudget ? undefined : parsed.analysis,
    overBudget: r.overBudget,
  };
}

function linesText(file: SolFile, start: number, end: number): string {
  const out: string[] = [];
  for (let l = start; l <= end; l++) out.push(file.lineText(l));
  return out.join('\n');
}
