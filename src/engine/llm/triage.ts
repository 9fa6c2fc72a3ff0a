/**
 * The LLM triage of rule findings (off by default): the model sees each finding with its code and
 * may keep it, lower its confidence or dismiss it, always with a reason that is recorded. It can
 * never add a finding nor raise a confidence or severity (lowering the confidence to low caps the
 * severity at Medium, as for every finding); a failing or malformed answer keeps the
 * finding unchanged and becomes a scan message.
 */
import type { LlmClient } from '../../integrations/llm/llm-client.ts';
import { reportedSeverity } from '../findings.ts';
import type { Confidence, EngineVulnerability, ScanMessage } from '../types.ts';

/** At most this many findings are sent to the model per scan (the most severe first). */
export const LLM_TRIAGE_LIMIT = 100;
/** Requests in flight at once. */
export const LLM_TRIAGE_CONCURRENCY = 4;

const LOWER: Record<Confidence, Confidence> = { high: 'medium', medium: 'low', low: 'low' };
const RANK = ['critical', 'high', 'medium', 'low', 'informational', 'gas_optimization'];

const SYSTEM_PROMPT = `You review findings of a Solidity static analyser. For each finding you get the rule, its message and the code.
Decide whether the finding is wrong or overstated. You may only keep it, lower its confidence, or dismiss it as a false positive.
Answer with strict JSON and nothing else: {"verdict":"keep"|"lower"|"dismiss","reason":string}. The reason says what in the code supports the verdict.`;

export interface TriageResult {
  vulnerabilities: EngineVulnerability[];
  messages: ScanMessage[];
  kept: number;
  lowered: number;
  dismissed: number;
}

/** Reviews findings one by one; `lines` gives the source around a finding (file, first, last). */
export async function triageWithLlm(
  llm: LlmClient,
  findings: readonly EngineVulnerability[],
  lines: (file: string, start: number, end: number) => string,
  options: { signal?: AbortSignal; limit?: number } = {},
): Promise<TriageResult> {
  const limit = options.limit ?? LLM_TRIAGE_LIMIT;
  const reviewable = findings
    .filter((v) => v.ruleId.startsWith('sol.') && v.severity !== 'gas_optimization')
    .sort((a, b) => RANK.indexOf(a.severity) - RANK.indexOf(b.severity))
    .slice(0, limit);
  const verdicts = new Map<EngineVulnerability, { verdict: 'keep' | 'lower' | 'dismiss'; reason: string }>();
  // Warnings by finding, so that their order does not depend on which answer arrived first.
  const warnings: Array<ScanMessage | undefined> = [];
  const review = async (v: EngineVulnerability, i: number): Promise<void> => {
    options.signal?.throwIfAborted();
    const where = `${v.ruleId} at ${v.location.file}:${v.location.startLine}`;
    const code = lines(v.location.file, Math.max(1, v.location.startLine - 12), v.location.endLine + 12);
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
            content: `Rule: ${v.ruleId} (${v.title}), severity ${v.severity}, confidence ${v.confidence}\nFile: ${v.location.file} lines ${v.location.startLine}-${v.location.endLine}\nMessage: ${v.description}\n\n${code}`,
          },
        ],
      });
    } catch (err) {
      options.signal?.throwIfAborted();
      warnings[i] = {
        level: 'warning',
        value: `LLM triage of ${where} failed (${err instanceof Error ? err.message : String(err)}); the finding is kept.`,
      };
      return;
    }
    const parsed = parseVerdict(answer);
    if (!parsed) {
      warnings[i] = {
        level: 'warning',
        value: `LLM triage of ${where}: unreadable answer; the finding is kept.`,
      };
      return;
    }
    verdicts.set(v, parsed);
  };
  // A few requests in flight at once (the endpoint's own rate limits answer 429, which the client retries).
  let next = 0;
  const lanes = Array.from({ length: Math.min(LLM_TRIAGE_CONCURRENCY, reviewable.length) }, async () => {
    while (next < reviewable.length) {
      const i = next++;
      await review(reviewable[i]!, i);
    }
  });
  await Promise.all(lanes);
  const messages: ScanMessage[] = warnings.filter((m): m is ScanMessage => m !== undefined);
  const out: EngineVulnerability[] = [];
  let lowered = 0;
  let dismissed = 0;
  for (const v of findings) {
    const d = verdicts.get(v);
    if (d?.verdict === 'dismiss') {
      dismissed++;
      messages.push({
        level: 'info',
        value: `LLM triage dismissed ${v.ruleId} at ${v.location.file}:${v.location.startLine}: ${d.reason}`,
      });
      continue;
    }
    if (d?.verdict === 'lower') {
      lowered++;
      const confidence = LOWER[v.confidence];
      out.push({
        ...v,
        // A finding lowered to low confidence is no longer High or Critical.
        severity: reportedSeverity(v.severity, confidence),
        confidence,
        description: `${v.description}\n\nLLM triage lowered the confidence: ${d.reason}`,
      });
      continue;
    }
    out.push(v);
  }
  return { vulnerabilities: out, messages, kept: verdicts.size - lowered - dismissed, lowered, dismissed };
}

function parseVerdict(answer: string): { verdict: 'keep' | 'lower' | 'dismiss'; reason: string } | undefined {
  let j: unknown;
  try {
    j = JSON.parse(answer.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return undefined;
  }
  if (typeof j !== 'object' || j === null) return undefined;
  const { verdict, reason } = j as { verdict?: unknown; reason?: unknown };
  if (verdict !== 'keep' && verdict !== 'lower' && verdict !== 'dismiss') return undefined;
  // A verdict against a finding must say why; without a reason the finding stays as it is.
  if (verdict !== 'keep' && (typeof reason !== 'string' || reason.trim().length < 3)) return undefined;
  return { verdict, reason: typeof reason === 'string' ? reason.trim().slice(0, 500) : '' };
}
