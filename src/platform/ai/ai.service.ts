import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { loadFindingAccess, requireVisibleRepository } from '../../access/access.service.ts';
import { can, readingView } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { type ChatModel, ChatModelError, createChatModel } from '../../integrations/llm/chat-model.ts';
import type { RateLimiter } from '../../rate-limit.ts';
import {
  buildMessages,
  checkCitations,
  estimateTokens,
  historyWithinBudget,
  parseQuestion,
  retrievalAnswer,
  SEARCH_TOOL,
  selectItems,
} from './ai.prompt.ts';
import { createAiRepo, type RetrievedItem } from './ai.repo.ts';
import {
  type AiConversation,
  type AiStatus,
  type AskAi,
  MAX_METADATA_BYTES,
  MAX_PROMPT_CHARS,
} from './ai.schemas.ts';

export interface AiServiceDeps {
  database: Database;
  llm: Config['llm'];
  ai: Config['ai'];
  /** Per-user limiter of questions (its own buckets, keyed `ai:<userId>`). */
  rateLimiter: RateLimiter;
  /** The HTTP client of model calls: the container's single outbound fetch. */
  fetch: typeof fetch;
  log: Logger;
  now?: () => Date;
}

/** First day of the UTC month of `at` (YYYY-MM-01) and the start of the next month. */
function monthOf(at: Date): { month: string; next: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { month: start.toISOString().slice(0, 10), next };
}

function conversationNotFound(): AppError {
  return new AppError('NOT_FOUND', { message: 'Conversation not found.' });
}

/**
 * The repository assistant (v0 §4.1): answers a question from the repository data the caller may
 * see (retrieval filtered in SQL by the access rules), with the configured model or, without one,
 * as a list of the most relevant items. Conversations belong to their user.
 */
export function createAiService(deps: AiServiceDeps) {
  const { database, ai } = deps;
  const repo = createAiRepo(database);
  const now = deps.now ?? (() => new Date());
  const model: ChatModel | null = deps.llm
    ? createChatModel({
        baseUrl: deps.llm.baseUrl,
        apiKey: deps.llm.apiKey,
        model: deps.llm.model,
        timeoutMs: ai.timeoutMs,
        maxRetries: ai.maxRetries,
        retryDelayMs: ai.retryDelayMs,
        fetch: deps.fetch,
      })
    : null;

  async function budgetLeft(companyId: string): Promise<{ exhausted: boolean; next: Date }> {
    const { month, next } = monthOf(now());
    if (ai.monthlyTokenBudget === 0) return { exhausted: false, next };
    const used = await repo.monthlyTokens(companyId, month);
    return { exhausted: used >= ai.monthlyTokenBudget, next };
  }

  function budgetExhausted(next: Date): AppError {
    return new AppError('AI_BUDGET_EXHAUSTED', {
      message: `The company's monthly AI token budget (${ai.monthlyTokenBudget} tokens) is used up; it renews on ${next.toISOString().slice(0, 10)}.`,
      headers: {
        'retry-after': String(Math.max(1, Math.ceil((next.getTime() - now().getTime()) / 1000))),
      },
    });
  }

  async function retrieve(
    access: Awaited<ReturnType<typeof loadFindingAccess>>,
    repository: { id: string; companyId: string },
    question: string,
  ): Promise<RetrievedItem[]> {
    const query = parseQuestion(question);
    // A question about `#12` also looks for what resembles #12 (duplicates, related comments).
    const titles = await repo.findingTitles(access, repository.id, query.numbers);
    if (titles.length > 0) {
      const more = parseQuestion(titles.join(' ')).terms;
      query.terms = [...new Set([...query.terms, ...more])].slice(0, 48);
    }
    const [findings, comments, scope] = await Promise.all([
      repo.searchFindings(access, repository, query, 30),
      repo.searchComments(access, repository.id, query, 10),
      repo.scopeItems(repository.id, query),
    ]);
    return selectItems([...findings, ...scope, ...comments], ai.contextTokens);
  }

  function modelFailure(err: unknown): AppError {
    if (!(err instanceof ChatModelError)) throw err;
    deps.log.warn({ kind: err.kind, status: err.status, message: err.message }, 'AI model call failed');
    switch (err.kind) {
      case 'timeout':
        return new AppError('AI_MODEL_TIMEOUT', {
          message: `The language model did not answer within ${ai.timeoutMs >= 1000 ? `${Math.round(ai.timeoutMs / 1000)} seconds` : `${ai.timeoutMs} ms`}; try again.`,
        });
      case 'rate_limited': {
        const seconds = Math.max(1, Math.ceil(err.retryAfterSeconds ?? 30));
        return new AppError('AI_MODEL_BUSY', {
          message: `The language model is rate limiting this server; retry in ${seconds} seconds.`,
          headers: { 'retry-after': String(seconds) },
        });
      }
      case 'server_error':
        return new AppError('AI_MODEL_FAILED', {
          message: `The language model failed (${err.status ? `HTTP ${err.status}` : 'no usable answer'}) after ${ai.maxRetries + 1} attempt(s); try again.`,
        });
      case 'refused':
        return new AppError('AI_MODEL_FAILED', {
          message: `The language model refused the request (HTTP ${err.status}); the server's model settings (VIGIL_LLM_*) need attention.`,
        });
      default:
        return new AppError('AI_MODEL_FAILED', {
          message: 'The language model cannot be reached; try again later.',
        });
    }
  }

  return {
    /** Answers a question about the repository (v0 §4.1). */
    async ask(actor: Actor, repositoryId: string, input: AskAi): Promise<string> {
      const access = await loadFindingAccess(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      const question = input.prompt.trim();
      if (question === '') {
        throw new AppError('VALIDATION_FAILED', { message: 'prompt must not be blank.' });
      }
      if (question.length > MAX_PROMPT_CHARS) {
        throw new AppError('VALIDATION_FAILED', {
          message: `prompt must be at most ${MAX_PROMPT_CHARS} characters.`,
        });
      }
      const metadata = input.metadata ?? {};
      if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
        throw new AppError('VALIDATION_FAILED', {
          message: `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON.`,
        });
      }

      const decision = await deps.rateLimiter.take(`ai:${access.userId}`);
      if (!decision.allowed) {
        throw new AppError('RATE_LIMITED', {
          message: `Too many questions to the assistant: at most ${ai.rateLimit.requestsPerMinute} a minute. Retry in ${decision.retryAfterSeconds} seconds.`,
          headers: { 'retry-after': String(decision.retryAfterSeconds) },
        });
      }

      if (model) {
        const { exhausted, next } = await budgetLeft(repository.companyId);
        if (exhausted) throw budgetExhausted(next);
      }

      const conversationId = input.conversationId ?? randomUUID();
      const existing = await repo.findConversation(conversationId);
      if (existing && !can(access, 'conversation.read', { conversation: existing, repositoryId }))
        throw conversationNotFound();
      const conversation =
        existing ?? (await repo.ensureConversation(conversationId, repositoryId, access.userId));
      // Another user may have created the same id concurrently: only its owner continues it.
      if (!can(access, 'conversation.read', { conversation, repositoryId })) throw conversationNotFound();

      // Earlier answers are replayed only to the view they were written under: after a role
      // change they may quote what the caller can no longer read.
      const view = readingView(access, repository);
      const history = historyWithinBudget(
        sameViewTurns(await repo.recentMessages(conversation.id, 50), view).map((m) => ({
          role: m.role,
          content: m.content,
        })),
        ai.historyTokens,
      );
      const items = await retrieve(access, repository, question);
      const refs = [...new Set(items.map((i) => i.ref))];

      if (!model) {
        const answer = retrievalAnswer(question, items);
        await repo.addTurn(
          conversation.id,
          { content: question, metadata },
          { content: answer, metadata: { mode: 'retrieval', model: null, retrieved: refs, view } },
        );
        return answer;
      }

      const messages = buildMessages({ repositoryName: repository.name, history, question, items });
      const { month, next } = monthOf(now());
      // The call's tokens are reserved first (its prompt, and the longest answer it may get), so
      // that questions asked at once cannot all pass the budget check and overshoot together.
      const reserved = {
        promptTokens: estimateTokens(JSON.stringify(messages)),
        completionTokens: ai.maxAnswerTokens,
      };
      if (
        ai.monthlyTokenBudget > 0 &&
        !(await repo.reserveTokens(repository.companyId, month, reserved, ai.monthlyTokenBudget))
      ) {
        throw budgetExhausted(next);
      }
      const held = ai.monthlyTokenBudget > 0 ? reserved : undefined;
      const completion = await model
        .complete({ messages, tools: [SEARCH_TOOL], maxTokens: ai.maxAnswerTokens })
        .catch(async (err: unknown) => {
          if (held) await repo.releaseReservation(repository.companyId, month, held);
          throw modelFailure(err);
        });
      const usage = completion.usage ?? {
        promptTokens: reserved.promptTokens,
        completionTokens: estimateTokens(completion.content),
      };
      await repo.settleUsage(repository.companyId, month, usage, held);
      const checked = checkCitations(completion.content, items);
      await repo.addTurn(
        conversation.id,
        { content: question, metadata },
        {
          content: checked.answer,
          metadata: {
            mode: 'model',
            model: completion.model,
            usage,
            retrieved: refs,
            view,
            citations: { findings: checked.findings, paths: checked.paths, unverified: checked.unverified },
          },
        },
      );
      return checked.answer;
    },

    /** Whether the assistant answers on this repository now, and with which model. */
    async status(actor: Actor, repositoryId: string): Promise<AiStatus> {
      const access = await loadFindingAccess(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      if (!model) {
        return {
          available: true,
          mode: 'retrieval',
          model: null,
          reason:
            'No language model is configured; answers list the most relevant items with their references.',
        };
      }
      const { exhausted, next } = await budgetLeft(repository.companyId);
      return exhausted
        ? {
            available: false,
            mode: 'model',
            model: model.model,
            reason: `The company's monthly AI token budget is used up; it renews on ${next.toISOString().slice(0, 10)}.`,
          }
        : { available: true, mode: 'model', model: model.model, reason: null };
    },

    /** A conversation of the caller on this repository (another user's → 404). */
    async conversation(actor: Actor, repositoryId: string, conversationId: string): Promise<AiConversation> {
      const access = await loadFindingAccess(database.db, actor);
      await requireVisibleRepository(database.db, access, repositoryId);
      const conversation = await repo.findConversation(conversationId);
      if (!conversation || !can(access, 'conversation.read', { conversation, repositoryId }))
        throw conversationNotFound();
      const messages = await repo.messages(conversation.id);
      return {
        id: conversation.id,
        repositoryId: conversation.repositoryId,
        createdAt: conversation.createdAt.toISOString(),
        messages: messages.map((m) => {
          const meta = m.metadata as Record<string, unknown>;
          const citations = meta.citations as AiConversation['messages'][number]['citations'] | undefined;
          return {
            id: m.id,
            role: m.role,
            content: m.content,
            createdAt: m.createdAt.toISOString(),
            metadata: m.role === 'user' ? meta : { mode: meta.mode ?? null, model: meta.model ?? null },
            citations: citations ?? null,
          };
        }),
      };
    },
  };
}

export type AiService = ReturnType<typeof createAiService>;

/**
 * The turns of a conversation (newest first) whose answer was written under `view`: an answer of
 * another view is left out with its question, and so are answers recorded without a view.
 */
function sameViewTurns<T extends { role: 'user' | 'assistant'; metadata: unknown }>(
  newestFirst: T[],
  view: string,
): T[] {
  const kept: T[] = [];
  let keepQuestion = true;
  for (const message of newestFirst) {
    if (message.role === 'assistant') {
      keepQuestion = (message.metadata as { view?: unknown } | null)?.view === view;
      if (keepQuestion) kept.push(message);
    } else {
      if (keepQuestion) kept.push(message);
      keepQuestion = true;
    }
  }
  return kept;
}
