/** Turning a rule match into an `EngineVulnerability` with a stable fingerprint. */
import { hash } from 'node:crypto';
import type { Confidence, EngineVulnerability, RuleMeta, Severity } from './types.ts';

export interface MatchInput {
  meta: RuleMeta;
  file: string;
  startLine: number;
  endLine: number;
  snippet: string;
  contract?: string;
  function?: string;
  message?: string;
  severity?: Severity;
  confidence?: Confidence;
}

const MAX_SNIPPET = 400;

/**
 * The severity a finding is reported with: a finding of low confidence is never High or Critical
 * (as Slither states impact and confidence), so it is capped at Medium. Every path that sets or
 * lowers a finding's confidence goes through this (the collector, the LLM triage).
 */
export function reportedSeverity(severity: Severity, confidence: Confidence): Severity {
  return confidence === 'low' && (severity === 'critical' || severity === 'high') ? 'medium' : severity;
}

/** Whitespace-insensitive form of a snippet: what the fingerprint hashes. */
export function normalizeSnippet(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * sha256 over rule id, file, contract, function and the normalized snippet — never the line —
 * so that a finding keeps its identity when code above it moves. `occurrence` separates identical
 * snippets in one function.
 */
export function fingerprintOf(parts: {
  ruleId: string;
  file: string;
  contract?: string;
  function?: string;
  snippet: string;
  occurrence: number;
}): string {
  // One-shot `hash` (no Hash object per finding): the same digest as `createHash`.
  return hash(
    'sha256',
    [
      parts.ruleId,
      parts.file,
      parts.contract ?? '',
      parts.function ?? '',
      normalizeSnippet(parts.snippet),
      String(parts.occurrence),
    ].join('\u0000'),
    'hex',
  );
}

/** A character beyond Latin-1: V8 stores a string holding one two bytes per character. */
const WIDE = /[\u0100-\uffff]/;

/** Whether `text` holds a character beyond Latin-1 (so that V8 stores it, and every piece of it, two bytes per character). */
export function isWide(text: string): boolean {
  return WIDE.test(text);
}

/** `s` as a string of its own, one byte per character, when every character fits; else `s`. */
function narrowCopy(s: string): string {
  return WIDE.test(s) ? s : Buffer.from(s, 'latin1').toString('latin1');
}

/**
 * The finding of a wide file ({@link isWide}) with its text taken from the source (description,
 * snippet, contract, function; a secret's masked line is its snippet) as strings of their own. A piece of a wide file is stored two
 * bytes per character even when every character of the piece fits in one, and one such string
 * makes a whole report two-byte: its `JSON.stringify` and UTF-8 encoding then take about twice as
 * long (on the SolidiFI half, 28 of 175 files are wide; docs/performance.md). Changes `v` in place
 * and returns it.
 */
export function compactStrings(v: EngineVulnerability): EngineVulnerability {
  v.description = narrowCopy(v.description);
  if (v.snippet !== undefined) v.snippet = narrowCopy(v.snippet);
  if (v.contract !== undefined) v.contract = narrowCopy(v.contract);
  if (v.function !== undefined) v.function = narrowCopy(v.function);
  return v;
}

/**
 * Collects the matches of one file: drops exact duplicates (same rule, same lines), numbers
 * identical snippets so that fingerprints stay unique, and caps the severity of low-confidence
 * matches ({@link reportedSeverity}).
 */
export class FindingCollector {
  private readonly seen = new Set<string>();
  private readonly occurrences = new Map<string, number>();
  readonly vulnerabilities: EngineVulnerability[] = [];

  add(m: MatchInput): EngineVulnerability | undefined {
    const dedupe = `${m.meta.id}\u0000${m.file}\u0000${m.startLine}\u0000${m.endLine}`;
    if (this.seen.has(dedupe)) return undefined;
    this.seen.add(dedupe);
    const snippet = m.snippet.length > MAX_SNIPPET ? `${m.snippet.slice(0, MAX_SNIPPET)}…` : m.snippet;
    const key = [m.meta.id, m.file, m.contract ?? '', m.function ?? '', normalizeSnippet(snippet)].join(
      '\u0000',
    );
    const occurrence = (this.occurrences.get(key) ?? 0) + 1;
    this.occurrences.set(key, occurrence);
    const confidence = m.confidence ?? m.meta.confidence;
    const v: EngineVulnerability = {
      ruleId: m.meta.id,
      title: m.meta.title,
      description: m.message ?? m.meta.description,
      remediation: m.meta.remediation,
      severity: reportedSeverity(m.severity ?? m.meta.severity, confidence),
      confidence,
      category: m.meta.category,
      location: { file: m.file, startLine: m.startLine, endLine: m.endLine },
      fingerprint: fingerprintOf({
        ruleId: m.meta.id,
        file: m.file,
        contract: m.contract,
        function: m.function,
        snippet,
        occurrence,
      }),
      snippet,
    };
    if (m.meta.swc) v.swc = m.meta.swc;
    if (m.meta.cwe) v.cwe = m.meta.cwe;
    if (m.contract) v.contract = m.contract;
    if (m.function) v.function = m.function;
    this.vulnerabilities.push(v);
    return v;
  }
}
