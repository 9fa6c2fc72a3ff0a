/** Runs the Solidity rules of a scan type on one file. */
import { FindingCollector } from '../findings.ts';
import type { EngineVulnerability, ScanMessage, ScanType, ThreatModel } from '../types.ts';
import { FileAnalysis } from './analysis.ts';
import { SolFile } from './model.ts';
import { parseSolidity } from './parser.ts';
import { rulesFor } from './rules/index.ts';
import type { RuleContext, SolidityRule } from './rules/rule.ts';

export interface SolidityFileResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  file: SolFile | undefined;
  analysis: FileAnalysis | undefined;
}

/** A parsed Solidity file, ready for the threat model and the rules. */
export interface ParsedSolidityFile {
  file: SolFile;
  analysis: FileAnalysis;
  /** The syntax-error warning, when the file does not parse cleanly. */
  messages: ScanMessage[];
}

/** Parses one Solidity file (once: the threat model and every rule read the result). */
export async function parseSolidityFile(path: string, source: string): Promise<ParsedSolidityFile> {
  const messages: ScanMessage[] = [];
  const parsed = await parseSolidity(source);
  if (parsed.errors.length > 0) {
    const lines = [...new Set(parsed.errors.map((e) => e.line))].slice(0, 5);
    messages.push({
      level: 'warning',
      value: `${path}: syntax errors at line ${lines.join(', ')}; rules ran on the parts that parsed.`,
    });
  }
  const file = new SolFile(path, source, parsed.root, parsed.errors);
  return { file, analysis: new FileAnalysis(file), messages };
}

/** Runs `rules` on a parsed file; a rule that throws becomes a scan message. */
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
    try {
      rule.run(ctx);
    } catch (err) {
      messages.push({
        level: 'error',
        value: `${path}: rule ${rule.meta.id} failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return { vulnerabilities: collector.vulnerabilities, messages };
}

/** Parses the file and runs every rule of `type`; a rule that throws becomes a scan message. */
export async function scanSolidityFile(
  path: string,
  source: string,
  type: ScanType,
  threatModel?: ThreatModel,
): Promise<SolidityFileResult> {
  const parsed = await parseSolidityFile(path, source);
  const r = runSolidityRules(parsed, rulesFor(type), type, threatModel);
  return {
    vulnerabilities: r.vulnerabilities,
    messages: [...parsed.messages, ...r.messages],
    file: parsed.file,
    analysis: parsed.analysis,
  };
}

function linesText(file: SolFile, start: number, end: number): string {
  const out: string[] = [];
  for (let l = start; l <= end; l++) out.push(file.lineText(l));
  return out.join('\n');
}
