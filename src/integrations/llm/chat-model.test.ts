import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlmServer, startFakeLlmServer } from '../../../test/fakes/llm-server.ts';
import { ChatModelError, createChatModel } from './chat-model.ts';

describe('createChatModel (the openai client) against an OpenAI-compatible server', () => {
  let server: FakeLlmServer;
  let fetchCalls: string[];
  beforeAll(async () => {
    server = await startFakeLlmServer({ apiKey: 'sk-1' });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.replies.length = 0;
    server.fallback = () => ({
      kind: 'content',
      content: 'hello',
      usage: { prompt_tokens: 7, completion_tokens: 2 },
    });
    fetchCalls = [];
  });

  const model = (over: Partial<Parameters<typeof createChatModel>[0]> = {}) =>
    createChatModel({
      baseUrl: server.baseUrl,
      apiKey: 'sk-1',
      model: 'm-1',
      timeoutMs: 2_000,
      maxRetries: 2,
      retryDelayMs: 1,
      // The injected fetch is the only way out.
      fetch: (input, init) => {
        fetchCalls.push(String(input instanceof Request ? input.url : input));
        return globalThis.fetch(input, init);
      },
      ...over,
    });
  const messages = [{ role: 'user' as const, content: 'hi' }];

  it('posts a non-streaming chat completion through the injected fetch and reads content and usage', async () => {
    const answer = await model().complete({ messages, maxTokens: 50 });
    expect(answer).toEqual({
      content: 'hello',
      model: 'm-1',
      usage: { promptTokens: 7, completionTokens: 2 },
    });
    expect(fetchCalls).toEqual([`${server.baseUrl}/chat/completions`]);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-1');
    expect(server.requests[0]!.body).toMatchObject({ model: 'm-1', stream: false, max_tokens: 50, messages });
  });

  it('retries 429 with a short Retry-After and 5xx, up to the bound', async () => {
    server.replies.push({ kind: 'status', status: 429, retryAfterMs: 1 }, { kind: 'status', status: 502 });
    expect((await model().complete({ messages })).content).toBe('hello');
    expect(server.requests).toHaveLength(3);

    server.requests.length = 0;
    server.fallback = () => ({ kind: 'status', status: 500 });
    const err = (await model({ maxRetries: 1 })
      .complete({ messages })
      .catch((e: unknown) => e)) as ChatModelError;
    expect(err).toBeInstanceOf(ChatModelError);
    expect(err).toMatchObject({ kind: 'server_error', status: 500 });
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 429 asking for a long wait, and reports the wait', async () => {
    server.replies.push({ kind: 'status', status: 429, retryAfter: 90 });
    const err = (await model()
      .complete({ messages })
      .catch((e: unknown) => e)) as ChatModelError;
    expect(err).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterSeconds: 90 });
    expect(server.requests).toHaveLength(1);
  });

  it('reports refusals without retrying, and timeouts', async () => {
    const refused = (await model({ apiKey: 'wrong' })
      .complete({ messages })
      .catch((e: unknown) => e)) as ChatModelError;
    expect(refused).toMatchObject({ kind: 'refused', status: 401 });

    server.fallback = () => ({ kind: 'hang' });
    const timedOut = (await model({ timeoutMs: 100, maxRetries: 0 })
      .complete({ messages })
      .catch((e: unknown) => e)) as ChatModelError;
    expect(timedOut).toMatchObject({ kind: 'timeout' });
  });

  it('reports an unreachable endpoint', async () => {
    const err = (await model({ baseUrl: 'http://127.0.0.1:1/v1', maxRetries: 0 })
      .complete({ messages })
      .catch((e: unknown) => e)) as ChatModelError;
    expect(err).toMatchObject({ kind: 'unreachable' });
  });
});
