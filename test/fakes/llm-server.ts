/**
 * A fake OpenAI-compatible server: a real node:http server speaking `POST /v1/chat/completions`
 * in the chat-completions wire format. Tests script its answers (content, HTTP errors, delays)
 * and read back the requests it received.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeLlmReply =
  | {
      kind: 'content';
      content: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** The answer is sent once this settles (a call held in flight). */
      until?: Promise<unknown>;
    }
  | { kind: 'status'; status: number; body?: string; retryAfter?: number; retryAfterMs?: number }
  | { kind: 'hang' };

export interface FakeLlmMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface FakeLlmRequest {
  headers: IncomingMessage['headers'];
  body: {
    model?: string;
    messages?: FakeLlmMessage[];
    response_format?: unknown;
    stream?: boolean;
    tools?: unknown[];
    tool_choice?: unknown;
    max_tokens?: number;
  };
  /** The raw body as received (for searching it for text that must never be sent). */
  raw: string;
}

export interface FakeLlmServer {
  /** Base URL including `/v1`. */
  baseUrl: string;
  requests: FakeLlmRequest[];
  /** Replies used in order; when empty, `fallback` answers. */
  replies: FakeLlmReply[];
  fallback: (request: FakeLlmRequest) => FakeLlmReply;
  close(): Promise<void>;
}

export async function startFakeLlmServer(options: { apiKey?: string } = {}): Promise<FakeLlmServer> {
  const state: Omit<FakeLlmServer, 'baseUrl' | 'close'> = {
    requests: [],
    replies: [],
    fallback: () => ({ kind: 'content', content: '{"findings":[]}' }),
  };
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"error":{"message":"invalid api key"}}');
        return;
      }
      let body: FakeLlmRequest['body'];
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        body = JSON.parse(raw) as FakeLlmRequest['body'];
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
        return;
      }
      const request = { headers: req.headers, body, raw };
      state.requests.push(request);
      const reply = state.replies.shift() ?? state.fallback(request);
      if (reply.kind === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (reply.kind === 'status') {
        res
          .writeHead(reply.status, {
            'content-type': 'application/json',
            ...(reply.retryAfter !== undefined ? { 'retry-after': String(reply.retryAfter) } : {}),
            ...(reply.retryAfterMs !== undefined ? { 'retry-after-ms': String(reply.retryAfterMs) } : {}),
          })
          .end(reply.body ?? `{"error":{"message":"HTTP ${reply.status}"}}`);
        return;
      }
      const answer = () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${state.requests.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model ?? 'fake-model',
            choices: [
              { index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' },
            ],
            usage: {
              ...(reply.usage ?? { prompt_tokens: 1, completion_tokens: 1 }),
              total_tokens: (reply.usage?.prompt_tokens ?? 1) + (reply.usage?.completion_tokens ?? 1),
            },
          }),
        );
      if (reply.until) void reply.until.then(answer, answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    async close() {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
