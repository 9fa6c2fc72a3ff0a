/**
 * The engine's public value types: what a scan reports and how the platform classifies it.
 * Nothing here depends on the database or HTTP; the platform maps these values onto findings.
 */

/** Wire values of the three scan types (scanner API v1). */
export type ScanType = 'lite' | 'standard' | 'audit';

/** Platform severities (the finding severities of the platform API). */
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'informational' | 'gas_optimization';

/** How sure a rule is that a match is a real problem. */
export type Confidence = 'high' | 'medium' | 'low';

/** The DASP Top 10 categories used to classify every rule (and to score the SmartBugs benchmark). */
export const DASP_CATEGORIES = [
  'access_control',
  'arithmetic',
  'bad_randomness',
  'denial_of_service',
  'front_running',
  'other',
  'reentrancy',
  'short_addresses',
  'time_manipulation',
  'unchecked_low_level_calls',
] as const;

export type DaspCategory = (typeof DASP_CATEGORIES)[number];

/** A place in the scanned tree: a POSIX path relative to the tree's root and 1-based lines. */
export interface SourceLocation {
  file: string;
  startLine: number;
  endLine: number;
}

/** The static description of a rule: what the rule catalogue and SARIF `rules[]` show. */
export interface RuleMeta {
  /** Stable id such as `sol.reentrancy.state-after-call`. */
  id: string;
  title: string;
  description: string;
  remediation: string;
  severity: Severity;
  confidence: Confidence;
  category: DaspCategory;
  /** SWC registry id, e.g. `SWC-107`. */
  swc?: string;
  /** CWE id, e.g. `CWE-841`. */
  cwe?: string;
  /** The lowest scan type that runs the rule. */
  scanType: ScanType;
  /** What the rule reasons about (the analysis behind it), for the rule catalogue. */
  reasoning?: string;
}

/**
 * How a rule is documented beyond its metadata (docs/engine-rules.md): the idioms it accepts as
 * safe, and one example it reports with its fixed counterpart. Each category file of rules keeps
 * these beside it (`<category>.examples.ts`); its test runs both examples through the rule.
 */
export interface RuleExample {
  /** Why the impact is what it is, when the severity alone does not say. */
  impactRationale?: string;
  /** The idioms the rule recognises as safe today: what makes it stay silent. */
  safeIdioms: readonly string[];
  /** Where the examples live in a scanned tree (default `contracts/Example.sol`). */
  path?: string;
  /** A small complete file the rule reports. */
  vulnerable: string;
  /** The same code written the way the rule accepts. */
  safe: string;
}

/** The examples of a set of rules, by rule id. */
export type RuleExamples = Readonly<Record<string, RuleExample>>;

/** One problem the engine found. */
export interface EngineVulnerability {
  ruleId: string;
  title: string;
  /** What is wrong at this place (specific to the match, not only the rule's text). */
  description: string;
  remediation: string;
  severity: Severity;
  confidence: Confidence;
  category: DaspCategory;
  swc?: string;
  cwe?: string;
  location: SourceLocation;
  /**
   * Stable across runs and line shifts: sha256 of rule id, file, contract, function and the
   * whitespace-normalized snippet (never the line number).
   */
  fingerprint: string;
  /** The code at the location (secrets masked). */
  snippet?: string;
  contract?: string;
  function?: string;
}

export interface ScanMessage {
  level: 'info' | 'warning' | 'error';
  value: string;
}

export interface ScanStats {
  files: number;
  lines: number;
  durationMs: number;
}

export interface ScanResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  stats: ScanStats;
  /**
   * Files whose analysis went over the per-file budget, in tree order: only the cheap passes
   * (lite rules, secret rules) ran on them, and a warning of `messages` names each.
   */
  filesOverBudget?: string[];
}

/** Reported as files complete. */
export interface ScanProgress {
  filesDone: number;
  filesTotal: number;
}

export interface CodeRef {
  file: string;
  line: number;
  endLine?: number;
  contract?: string;
  function?: string;
}

export interface ThreatModel {
  version: 1;
  generatedAt: string;
  summary: {
    files: number;
    solidityFiles: number;
    lines: number;
    contracts: number;
    entryPoints: number;
    externalCalls: number;
    threats: number;
  };
  contracts: Array<{ name: string; kind: string; bases: string[]; upgradeable: boolean; ref: CodeRef }>;
  entryPoints: Array<{
    contract: string;
    function: string;
    kind: string;
    visibility: string;
    payable: boolean;
    guarded: boolean;
    modifiers: string[];
    ref: CodeRef;
  }>;
  roles: Array<{
    contract: string;
    name: string;
    kind: 'modifier' | 'owner-variable' | 'role-map' | 'tx-origin';
    guards: string[];
    ref: CodeRef;
  }>;
  assets: Array<{
    contract: string;
    name: string;
    kind: 'ether' | 'balance-map' | 'token-contract';
    ref: CodeRef;
  }>;
  externalCalls: Array<{
    contract: string;
    function: string;
    kind: string;
    target: string;
    sendsValue: boolean;
    callerControlledTarget: boolean;
    ref: CodeRef;
  }>;
  upgradeability: Array<{
    contract: string;
    pattern: 'delegatecall' | 'initializer' | 'selfdestruct';
    detail: string;
    ref: CodeRef;
  }>;
  oracles: Array<{
    contract: string;
    kind: 'price-feed' | 'block-randomness' | 'timestamp';
    detail: string;
    ref: CodeRef;
  }>;
  trustBoundaries: Array<{ from: string; to: string; description: string; ref: CodeRef }>;
  threats: Threat[];
}

export interface Threat {
  id: string;
  title: string;
  severity: Severity;
  category: DaspCategory;
  description: string;
  refs: CodeRef[];
}
