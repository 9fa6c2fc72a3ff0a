/**
 * The LLM triage pass measured on a benchmark: the engine's findings go through
 * `triageWithLlm` against the fake chat-completions server (test/fakes/llm-server.ts), whose
 * answers a scripted reviewer writes. The reviewer reads only what the triage sends — the rule,
 * the message and the numbered code around the finding — and judges one shape, as a cautious
 * reviewer might: a finding in a function whose header restricts the caller (an `only…`,
 * `…Owner`, `auth` or `admin` modifier) is dismissed unless it is itself about access control
 * ("only a privileged caller reaches this code"); a finding whose code reads `msg.sender` only
 * to pay back `msg.value` is lowered; everything else is kept. It knows nothing of the benchmark
 * (no file, contract or line). The comparison checks that the pass added nothing.
 *
 * Used by bench/engine.ts and bench/engine-solidifi.ts with `--llm-triage`.
 */
import { createLlmClient } from '../src/integrations/llm/llm-client.ts';
import { type FakeLlmReply, type FakeLlmRequest, startFakeLlmServer } from '../test/fakes/llm-server.ts';

export const LLM_TRIAGE_FLAG = '--llm-triage';
export const wantsLlmTriage = (): boolean => process.argv.includes(LLM_TRIAGE_FLAG);

const RESTRICTING_MODIFIER = /\b(only\w*|\w*[Oo]wner\w*|auth\w*|admin\w*)\b/;
const ACCESS_RULES = /^sol\.(access|shadowing|storage)\./;

/** The scripted reviewer's answer to one triage request. */
export function scriptedReview(request: FakeLlmRequest): FakeLlmReply {
  const prompt = request.body.messages?.find((m) => m.role === 'user')?.content ?? '';
  const rule = /^Rule: (\S+)/m.exec(prompt)?.[1] ?? '';
  const first = Number(/lines (\d+)-\d+/.exec(prompt)?.[1] ?? 0);
  const code = prompt
    .split('\n')
    .map((l) => /^(\d+): (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ line: Number(m[1]), text: m[2] ?? '' }));
  const reply = (verdict: string, reason?: string): FakeLlmReply => ({
    kind: 'content',
    content: JSON.stringify(reason ? { verdict, reason } : { verdict }),
  });
  // The header of the function around the flagged line: the nearest `function … {` above it.
  const above = code.filter((l) => l.line <= first).reverse();
  const headerStart = above.find((l) => /\bfunction\b/.test(l.text));
  if (headerStart && !ACCESS_RULES.test(rule)) {
    const header: string[] = [];
    for (const l of code.filter((x) => x.line >= headerStart.line)) {
      header.push(l.text.split('{')[0] ?? '');
      if (l.text.includes('{') || l.line >= first) break;
    }
    const modifiers = header.join(' ').replace(/^.*?\)/, '');
    if (RESTRICTING_MODIFIER.test(modifiers))
      return reply('dismiss', 'only a privileged caller reaches this code (restricted by a modifier)');
  }
  const flagged = code.filter((l) => l.line === first).map((l) => l.text.replace(/\s+/g, ''));
  if (flagged.some((t) => /msg\.sender\.(send|transfer)\(msg\.value\)/.test(t)))
    return reply('lower', 'the call pays the caller back what they sent in this transaction');
  return reply('keep', 'nothing in the code contradicts the finding');
}

export interface TriageRun<T> {
  triaged: T[];
  requests: number;
  dismissed: number;
  lowered: number;
  /** Findings in the triaged set whose fingerprint the rules did not report (must be 0). */
  added: number;
  ms: number;
}

/**
 * Runs `scan` with the triage pass against a fake server answering with `scriptedReview`, and
 * compares its findings with `base` by fingerprint.
 */
export async function withScriptedTriage<T extends { fingerprint: string; confidence: string }>(
  base: readonly T[],
  scan: (llm: ReturnType<typeof createLlmClient>) => Promise<{
    vulnerabilities: T[];
    messages: Array<{ value: string }>;
  }>,
): Promise<TriageRun<T>> {
  const server = await startFakeLlmServer();
  server.fallback = scriptedReview;
  try {
    const llm = createLlmClient({ baseUrl: server.baseUrl, model: 'scripted-reviewer', maxRetries: 0 });
    const t = performance.now();
    const result = await scan(llm);
    const ms = performance.now() - t;
    const known = new Set(base.map((v) => v.fingerprint));
    const summary = result.messages
      .map((m) => /(\d+) kept, (\d+) lowered, (\d+) dismissed/.exec(m.value))
      .find(Boolean);
    return {
      triaged: result.vulnerabilities,
      requests: server.requests.length,
      lowered: Number(summary?.[2] ?? 0),
      dismissed: Number(summary?.[3] ?? 0),
      added: result.vulnerabilities.filter((v) => !known.has(v.fingerprint)).length,
      ms: Math.round(ms),
    };
  } finally {
    await server.close();
  }
}
