/**
 * The LLM review of the riskiest functions (`audit` scans with an LLM configured). The model is
 * asked for strict JSON; answers are validated and turned into findings with locations inside
 * the reviewed function. A malformed answer or a failing server becomes a scan message.
 */
import type { LlmClient } from '../../integrations/llm/llm-client.ts';
import { FindingCollector } from '../findings.ts';
import type { FileAnalysis } from '../solidity/analysis.ts';
import type { FunctionInfo } from '../solidity/model.ts';
import type { ThreatModel } from '../types.ts';
import {
  type Confidence,
  DASP_CATEGORIES,
  type DaspCategory,
  type EngineVulnerability,
  type RuleMeta,
  type ScanMessage,
  type Severity,
} from '../types.ts';

export interface ReviewCandidate {
  file: string;
  contract: string;
  function: string;
  startLine: number;
  endLine: number;
  /** Numbered source of the function. */
  code: string;
  score: number;
  reasons: string[];
}

/** How many functions an `audit` scan sends to the LLM. */
export const LLM_REVIEW_LIMIT = 8;

const MAX_CODE_CHARS = 8000;
const CATEGORIES: readonly DaspCategory[] = DASP_CATEGORIES;
const SEVERITIES: Severity[] = ['critical', 'high', 'medium', 'low', 'informational'];

/**
 * A function worth reviewing with the part of its score that needs no threat model: the threat
 * model's share is added by {@link RiskiestFunctions.addPending}, so that a pass that builds the
 * model while it reads the files can score them once the model is complete.
 */
export interface PendingCandidate extends Omit<ReviewCandidate, 'score' | 'reasons'> {
  baseScore: number;
  baseReasons: string[];
}

/** The file's reviewable functions (entry points with a body that may change state), in order. */
export function pendingCandidates(fa: FileAnalysis, findings: EngineVulnerability[]): PendingCandidate[] {
  const out: PendingCandidate[] = [];
  for (const c of fa.file.contracts) {
    for (const fn of c.functions) {
      if (!fn.body || !fa.isEntryPoint(fn) || fn.mutability === 'view' || fn.mutability === 'pure') continue;
      const { score, reasons } = scoreFunction(fa, fn, findings);
      const lines: string[] = [];
      for (let l = fn.line; l <= fn.node.endLine; l++) lines.push(`${l}: ${fa.file.lineText(l)}`);
      let code = lines.join('\n');
      if (code.length > MAX_CODE_CHARS) code = `${code.slice(0, MAX_CODE_CHARS)}\n…`;
      out.push({
        file: fa.file.path,
        contract: c.name,
        function: fn.name,
        startLine: fn.line,
        endLine: fn.node.endLine,
        code,
        baseScore: score,
        baseReasons: reasons,
      });
    }
  }
  return out;
}

/** Keeps the N riskiest functions seen so far (files are analysed one at a time). */
export class RiskiestFunctions {
  private items: ReviewCandidate[] = [];

  constructor(private readonly limit: number) {}

  /** Scores the file's functions: value moved, delegatecall, re-entrant calls, missing guards, threats and findings. */
  addFile(fa: FileAnalysis, findings: EngineVulnerability[], threatModel?: ThreatModel): void {
    for (const pending of pendingCandidates(fa, findings)) this.addPending(pending, threatModel);
  }

  /** Adds the threat model's share to a function's score and keeps it if it is among the riskiest. */
  addPending(pending: PendingCandidate, threatModel?: ThreatModel): void {
    const { baseScore, baseReasons, ...candidate } = pending;
    let score = baseScore;
    const reasons = [...baseReasons];
    const threats =
      threatModel?.threats.filter((t) =>
        t.refs.some((r) => r.file === pending.file && r.function === pending.function),
      ) ?? [];
    if (threats.length) {
      score += 2 * threats.length;
      reasons.push(`threats ${threats.map((t) => t.id).join(', ')}`);
    }
    if (score <= 0) return;
    this.offer({ ...candidate, score, reasons });
  }

  private offer(c: ReviewCandidate): void {
    this.items.push(c);
    this.items.sort((a, b) => b.score - a.score || a.file.localeCompare(b.file) || a.startLine - b.startLine);
    if (this.items.length > this.limit) this.items.length = this.limit;
  }

  get candidates(): readonly ReviewCandidate[] {
    return this.items;
  }
}

/** The part of a function's score that needs no threat model. */
function scoreFunction(
  fa: FileAnalysis,
  fn: FunctionInfo,
  findings: EngineVulnerability[],
): { score: number; reasons: string[] } {
  const a = fa.analyze(fn);
  let score = 0;
  const reasons: string[] = [];
  const add = (n: number, why: string): void => {
    score += n;
    reasons.push(why);
  };
  if (a.calls.some((c) => c.info.value !== undefined)) add(3, 'moves ether');
  if (a.calls.some((c) => c.info.kind === 'delegatecall' || c.info.kind === 'callcode'))
    add(3, 'delegatecall');
  if (a.calls.some((c) => fa.isReentrantCall(a, c))) add(2, 'calls untrusted code');
  if (!fa.checksCaller(fn) && fa.writesState(fn)) add(1, 'changes state without a caller check');
  if (fn.mutability === 'payable') add(1, 'payable');
  const own = findings.filter(
    (v) => v.function === fn.name && v.contract === fn.contract.name && v.severity !== 'informational',
  );
  if (own.length) add(own.length, `${own.length} rule finding(s)`);
  return { score, reasons };
}

const SYSTEM_PROMPT = `You are a senior smart-contract security auditor reviewing one Solidity function at a time.
Report only concrete, exploitable vulnerabilities in the shown function (not style, not gas).
Answer with strict JSON and nothing else, in exactly this shape:
{"findings":[{"title":string,"severity":"critical"|"high"|"medium"|"low"|"informational","category":${CATEGORIES.map((c) => `"${c}"`).join('|')},"startLine":integer,"endLine":integer,"description":string,"remediation":string,"confidence":"high"|"medium"|"low"}]}
Lines are the absolute line numbers printed before each source line. Answer {"findings":[]} when there is nothing to report.`;

/** Reviews the candidates one by one; every failure becomes a message and the review goes on. */
export async function reviewWithLlm(
  llm: LlmClient,
  candidates: readonly ReviewCandidate[],
  options: { signal?: AbortSignal; threatModel?: ThreatModel } = {},
): Promise<{ vulnerabilities: EngineVulnerability[]; messages: ScanMessage[] }> {
  const vulnerabilities: EngineVulnerability[] = [];
  const messages: ScanMessage[] = [];
  const collectors = new Map<string, FindingCollector>();
  for (const c of candidates) {
    options.signal?.throwIfAborted();
    const where = `${c.file}:${c.startLine} (${c.contract}.${c.function})`;
    const context = options.threatModel?.threats
      .filter((t) => t.refs.some((r) => r.file === c.file && r.function === c.function))
      .map((t) => `- ${t.title}: ${t.description}`)
      .join('\n');
    let answer: string;
    try {
      answer = await llm.complete({
        json: true,
        temperature: 0,
        ...(options.signal ? { signal: options.signal } : {}),
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          {
            role: 'user',
            content: `File: ${c.file}\nContract: ${c.contract}\nFunction: ${c.function} (lines ${c.startLine}-${c.endLine})\nWhy it was selected: ${c.reasons.join('; ')}${
              context ? `\nThreats from the threat model:\n${context}` : ''
            }\n\n${c.code}`,
          },
        ],
      });
    } catch (err) {
      options.signal?.throwIfAborted();
      messages.push({
        level: 'warning',
        value: `LLM review of ${where} failed: ${err instanceof Error ? err.message : String(err)}`,
      });
      continue;
    }
    const parsed = parseReviewAnswer(answer);
    if (!parsed.ok) {
      messages.push({
        level: 'warning',
        value: `LLM review of ${where}: ${parsed.error}; the answer was ignored.`,
      });
      continue;
    }
    const collector = collectors.get(c.file) ?? new FindingCollector();
    collectors.set(c.file, collector);
    for (const f of parsed.findings) {
      const start = clamp(f.startLine, c.startLine, c.endLine);
      const end = clamp(Math.max(f.endLine, start), start, c.endLine);
      const meta: RuleMeta = {
        id: `llm.review.${f.category}`,
        title: f.title,
        description: f.description,
        remediation: f.remediation,
        severity: f.severity,
        confidence: f.confidence,
        category: f.category,
        scanType: 'audit',
      };
      const snippet = c.code
        .split('\n')
        .filter((l) => {
          const n = Number(l.slice(0, l.indexOf(':')));
          return n >= start && n <= end;
        })
        .map((l) => l.slice(l.indexOf(':') + 2))
        .join('\n');
      const v = collector.add({
        meta,
        file: c.file,
        startLine: start,
        endLine: end,
        snippet: `${f.title}\n${snippet}`,
        contract: c.contract,
        function: c.function,
      });
      if (v) vulnerabilities.push({ ...v, snippet });
    }
  }
  return { vulnerabilities, messages };
}

interface ReviewFinding {
  title: string;
  severity: Severity;
  category: DaspCategory;
  startLine: number;
  endLine: number;
  description: string;
  remediation: string;
  confidence: Confidence;
}

/** Validates an answer against the requested JSON shape (tolerating a Markdown code fence). */
export function parseReviewAnswer(
  answer: string,
): { ok: true; findings: ReviewFinding[] } | { ok: false; error: string } {
  const text = answer
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: 'the answer is not valid JSON' };
  }
  const list = (json as { findings?: unknown })?.findings;
  if (!Array.isArray(list)) return { ok: false, error: 'the answer has no "findings" array' };
  const findings: ReviewFinding[] = [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue;
    const o = item as Record<string, unknown>;
    const str = (k: string, max: number): string | undefined =>
      typeof o[k] === 'string' && (o[k] as string).trim() ? (o[k] as string).trim().slice(0, max) : undefined;
    const title = str('title', 200);
    const description = str('description', 4000);
    const startLine = Number(o.startLine ?? o.line);
    if (!title || !description || !Number.isInteger(startLine)) continue;
    const endLine = Number.isInteger(Number(o.endLine)) ? Number(o.endLine) : startLine;
    const severity = SEVERITIES.includes(o.severity as Severity) ? (o.severity as Severity) : 'medium';
    const category = CATEGORIES.includes(o.category as DaspCategory) ? (o.category as DaspCategory) : 'other';
    const confidence = ['high', 'medium', 'low'].includes(o.confidence as string)
      ? (o.confidence as Confidence)
      : 'low';
    findings.push({
      title,
      severity,
      category,
      startLine,
      endLine,
      description,
      remediation: str('remediation', 2000) ?? 'Review and fix the described issue.',
      confidence,
    });
  }
  return { ok: true, findings };
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(Math.max(n, lo), hi);
}
