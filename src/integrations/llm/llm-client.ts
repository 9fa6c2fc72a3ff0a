/**
 * An OpenAI-compatible chat-completions client (`POST {baseUrl}/chat/completions`) over Node's
 * fetch, with a timeout and bounded retries on 429 and 5xx. The engine receives it through the
 * `LlmClient` interface and never does HTTP itself.
 */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Ask the server for a JSON object (`response_format: {type: "json_object"}`). */
  json?: boolean;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

/** What the engine needs from a language model. */
export interface LlmClient {
  readonly model: string;
  complete(request: ChatRequest): Promise<string>;
}

export interface LlmClientOptions {
  /** Base URL of the API, e.g. `https://api.example.com/v1` (the app reads `VIGIL_LLM_BASE_URL`). */
  baseUrl: string;
  /** Bearer key (`VIGIL_LLM_API_KEY`); optional for local servers. */
  apiKey?: string;
  /** Model name (`VIGIL_LLM_MODEL`). */
  model: string;
  /** Per-attempt timeout. Default 60 s. */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx and network errors. Default 2. */
  maxRetries?: number;
  /** Base delay of the exponential backoff (doubled per retry, `Retry-After` wins). Default 500 ms. */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

export class LlmError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxRetries = options.maxRetries ?? 2;
  const baseDelay = options.retryDelayMs ?? 500;
  const doFetch = options.fetch ?? fetch;

  return {
    model: options.model,
    async complete(request: ChatRequest): Promise<string> {
      const body = JSON.stringify({
        model: options.model,
        messages: request.messages,
        temperature: request.temperature ?? 0,
        ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
        ...(request.json ? { response_format: { type: 'json_object' } } : {}),
      });
      let lastError: LlmError | undefined;
      for (let attempt = 0; attempt <= maxRetries; attempt++) {
        if (request.signal?.aborted) throw new LlmError('request aborted');
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
        let retryAfterMs: number | undefined;
        try {
          const res = await doFetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
            },
            body,
            signal,
          });
          if (res.ok) {
            const json = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
            const content = json.choices?.[0]?.message?.content;
            if (typeof content !== 'string')
              throw new LlmError('the response has no message content', res.status);
            return content;
          }
          const text = await res.text().catch(() => '');
          lastError = new LlmError(
            `chat completion failed with HTTP ${res.status}: ${text.slice(0, 200)}`,
            res.status,
          );
          if (res.status !== 429 && res.status < 500) throw lastError;
          const ra = Number(res.headers.get('retry-after'));
          if (Number.isFinite(ra) && ra > 0) retryAfterMs = Math.min(ra * 1000, 30_000);
        } catch (err) {
          if (err instanceof LlmError && err.status !== undefined && err.status !== 429 && err.status < 500)
            throw err;
          if (request.signal?.aborted) throw new LlmError('request aborted');
          lastError =
            err instanceof LlmError
              ? err
              : new LlmError(`chat completion failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        if (attempt < maxRetries) await sleep(retryAfterMs ?? baseDelay * 2 ** attempt, request.signal);
      }
      throw lastError ?? new LlmError('chat completion failed');
    },
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
