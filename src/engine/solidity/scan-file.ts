/** Runs the Solidity rules of a scan type on one file. */
import { FindingCollector } from '../findings.ts';
import type { EngineVulnerability, ScanMessage, ScanType, ThreatModel } from '../types.ts';
import { FileAnalysis } from './analysis.ts';
import { SolFile } from './model.ts';
import { parseSolidity } from './parser.ts';
import { rulesFor } from './rules/index.ts';
import type { RuleContext } from './rules/rule.ts';

export interface SolidityFileResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  file: SolFile | undefined;
  analysis: FileAnalysis | undefined;
}

/** Parses the file and runs every rule of `type`; a rule that throws becomes a scan message. */
export async function scanSolidityFile(
  path: string,
  source: string,
  type: ScanType,
  threatModel?: ThreatModel,
): Promise<SolidityFileResult> {
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
  const analysis = new FileAnalysis(file);
  const collector = new FindingCollector();
  const ctx: RuleContext = {
    fa: analysis,
    file,
    scanType: type,
    ...(threatModel ? { threatModel } : {}),
    report(meta, node, options = {}) {
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
  for (const rule of rulesFor(type)) {
    try {
      rule.run(ctx);
    } catch (err) {
      messages.push({
        level: 'error',
        value: `${path}: rule ${rule.meta.id} failed: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  }
  return { vulnerabilities: collector.vulnerabilities, messages, file, analysis };
}

function linesText(file: SolFile, start: number, end: number): string {
  const out: string[] = [];
  for (let l = start; l <= end; l++) out.push(file.lineText(l));
  return out.join('\n');
}
