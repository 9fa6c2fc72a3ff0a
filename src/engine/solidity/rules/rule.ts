/** The shape of a Solidity rule and the context it runs in. */
import type { RuleMeta, ScanType, ThreatModel } from '../../types.ts';
import type { FileAnalysis } from '../analysis.ts';
import type { ContractInfo, FunctionInfo, SolFile } from '../model.ts';
import type { AstNode } from '../parser.ts';

export interface ReportOptions {
  contract?: ContractInfo;
  fn?: FunctionInfo;
  /** Replaces the rule's description for this match (say what is wrong here). */
  message?: string;
  /** Overrides the node's lines (e.g. a function header only). */
  lines?: [number, number];
  severity?: RuleMeta['severity'];
  confidence?: RuleMeta['confidence'];
}

export interface RuleContext {
  readonly fa: FileAnalysis;
  readonly file: SolFile;
  readonly scanType: ScanType;
  /** The threat model of the whole tree, when the scan has one (`audit` rules are steered by it). */
  readonly threatModel?: ThreatModel;
  report(meta: RuleMeta, node: AstNode, options?: ReportOptions): void;
}

export interface SolidityRule {
  readonly meta: RuleMeta;
  /**
   * The rule reads `ctx.threatModel`, the model of the whole tree: a pass that builds the model
   * while it goes through the files runs this rule once the model is complete. Without a model
   * it reports a superset of what it reports with one.
   */
  readonly readsThreatModel?: boolean;
  run(ctx: RuleContext): void;
}

/** Lines of a function's header: from `function` to the line holding the body's `{`. */
export function headerLines(fn: FunctionInfo): [number, number] {
  return [fn.line, Math.max(fn.line, fn.headerEndLine)];
}

/** Helper to declare a rule with its metadata next to its check. */
export function defineRule(
  meta: RuleMeta,
  run: (ctx: RuleContext, meta: RuleMeta) => void,
  options: { readsThreatModel?: boolean } = {},
): SolidityRule {
  return {
    meta,
    run: (ctx) => run(ctx, meta),
    ...(options.readsThreatModel ? { readsThreatModel: true } : {}),
  };
}
