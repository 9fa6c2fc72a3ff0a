import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeLlmServer, startFakeLlmServer } from '../../../test/fakes/llm-server.ts';
import { createLlmClient, LlmError } from './llm-client.ts';

describe('createLlmClient against an OpenAI-compatible server', () => {
  let server: FakeLlmServer;
  beforeAll(async () => {
    server = await startFakeLlmServer({ apiKey: 'sk-live' });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.replies.length = 0;
    server.fallback = () => ({ kind: 'content', content: '{"ok":true}' });
  });

  const client = (over: Partial<Parameters<typeof createLlmClient>[0]> = {}) =>
    createLlmClient({ baseUrl: server.baseUrl, apiKey: 'sk-live', model: 'm-1', retryDelayMs: 1, ...over });

  it('posts a chat completion with the model, messages, bearer key and JSON mode', async () => {
    const answer = await client().complete({ messages: [{ role: 'user', content: 'hi' }], json: true });
    expect(answer).toBe('{"ok":true}');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-live');
    expect(server.requests[0]!.body).toMatchObject({
      model: 'm-1',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_object' },
      temperature: 0,
    });
  });

  it('retries 429 and 5xx answers, then succeeds', async () => {
    server.replies.push({ kind: 'status', status: 429, retryAfter: 0 }, { kind: 'status', status: 503 });
    expect(await client({ maxRetries: 2 }).complete({ messages: [{ role: 'user', content: 'x' }] })).toBe(
      '{"ok":true}',
    );
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after the bounded number of retries', async () => {
    server.fallback = () => ({ kind: 'status', status: 500 });
    await expect(
      client({ maxRetries: 1 }).complete({ messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow(/HTTP 500/);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a definitive client error', async () => {
    const err = await client({ apiKey: 'wrong' })
      .complete({ messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).status).toBe(401);
    expect(server.requests).toHaveLength(0);
  });

  it('times out a server that never answers', async () => {
    server.fallback = () => ({ kind: 'hang' });
    await expect(
      client({ timeoutMs: 50, maxRetries: 0 }).complete({ messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toThrow(LlmError);
  });
});
