/**
 * Chat completions through the official `openai` client against any OpenAI-compatible endpoint
 * (`VIGIL_LLM_BASE_URL`), streaming off. The client's own retries are off: this module retries
 * 429 (when the server asks for a short wait), 5xx and refused connections a bounded number of
 * times, and reports every failure as a {@link ChatModelError} of a known kind.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

export type ChatModelMessage = ChatCompletionMessageParam;

export interface ChatModelRequest {
  messages: ChatModelMessage[];
  /** Tools the conversation refers to (their calls and results appear in `messages`). */
  tools?: ChatCompletionTool[];
  maxTokens?: number;
  temperature?: number;
}

export interface ChatModelAnswer {
  content: string;
  model: string;
  /** As reported by the server; null when it reports no usage. */
  usage: { promptTokens: number; completionTokens: number } | null;
}

export interface ChatModel {
  readonly model: string;
  complete(request: ChatModelRequest): Promise<ChatModelAnswer>;
}

export type ChatModelErrorKind = 'timeout' | 'rate_limited' | 'server_error' | 'refused' | 'unreachable';

export class ChatModelError extends Error {
  constructor(
    readonly kind: ChatModelErrorKind,
    message: string,
    readonly status?: number,
    /** Seconds the server asked to wait (429). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ChatModelError';
  }
}

export interface ChatModelOptions {
  baseUrl: string;
  apiKey?: string | null;
  model: string;
  /** Timeout of one attempt. */
  timeoutMs: number;
  /** Attempts after the first on 429, 5xx and refused connections. */
  maxRetries: number;
  /** First backoff delay, doubled per retry (a shorter `Retry-After` wins). Default 500 ms. */
  retryDelayMs?: number;
  /** A 429 asking for a longer wait than this is not retried here. Default 10 s. */
  maxRetryAfterMs?: number;
  /** The HTTP client (the outbound policy's fetch). */
  fetch: typeof fetch;
}

type OpenAIClass = typeof OpenAI;
let openaiModule: Promise<OpenAIClass> | undefined;
/** The `openai` package loads with the first question: most processes never ask one, and start faster. */
function loadOpenAI(): Promise<OpenAIClass> {
  openaiModule ??= import('openai').then((m) => m.default);
  return openaiModule;
}

export function createChatModel(options: ChatModelOptions): ChatModel {
  let client: Promise<OpenAI> | undefined;
  const clientOf = () =>
    (client ??= loadOpenAI().then(
      (OpenAIClient) =>
        new OpenAIClient({
          baseURL: options.baseUrl,
          // Local OpenAI-compatible servers need no key; the client insists on one.
          apiKey: options.apiKey ?? 'unused',
          timeout: options.timeoutMs,
          maxRetries: 0,
          fetch: options.fetch,
        }),
    ));
  const baseDelay = options.retryDelayMs ?? 500;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 10_000;

  async function attempt(request: ChatModelRequest): Promise<ChatModelAnswer> {
    const api = await clientOf();
    try {
      const completion = await api.chat.completions.create({
        model: options.model,
        messages: request.messages,
        stream: false,
        temperature: request.temperature ?? 0,
        ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
        ...(request.tools && request.tools.length > 0 ? { tools: request.tools, tool_choice: 'none' } : {}),
      });
      const content = completion.choices[0]?.message?.content;
      if (typeof content !== 'string' || content.trim() === '') {
        throw new ChatModelError('server_error', 'the model answered without message content');
      }
      return {
        content,
        model: completion.model || options.model,
        usage: completion.usage
          ? {
              promptTokens: completion.usage.prompt_tokens ?? 0,
              completionTokens: completion.usage.completion_tokens ?? 0,
            }
          : null,
      };
    } catch (err) {
      throw toChatModelError(err, await loadOpenAI());
    }
  }

  return {
    model: options.model,
    async complete(request) {
      for (let retry = 0; ; retry++) {
        try {
          return await attempt(request);
        } catch (err) {
          const e = err as ChatModelError;
          const retryable =
            e.kind === 'server_error' ||
            e.kind === 'unreachable' ||
            (e.kind === 'rate_limited' && (e.retryAfterSeconds ?? 0) * 1000 <= maxRetryAfterMs);
          if (!retryable || retry >= options.maxRetries) throw e;
          const delay =
            e.retryAfterSeconds !== undefined ? e.retryAfterSeconds * 1000 : baseDelay * 2 ** retry;
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
    },
  };
}

function retryAfterOf(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const raw = headers?.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

function toChatModelError(err: unknown, OpenAI: OpenAIClass): ChatModelError {
  if (err instanceof ChatModelError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ChatModelError('timeout', 'the model did not answer in time');
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new ChatModelError('unreachable', `the model endpoint cannot be reached: ${err.message}`);
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const detail = `HTTP ${err.status}${err.message ? `: ${err.message.slice(0, 200)}` : ''}`;
    if (err.status === 429) {
      return new ChatModelError('rate_limited', detail, 429, retryAfterOf(err.headers));
    }
    if (err.status >= 500 || err.status === 408)
      return new ChatModelError('server_error', detail, err.status);
    return new ChatModelError('refused', detail, err.status);
  }
  return new ChatModelError('unreachable', err instanceof Error ? err.message : String(err));
}
