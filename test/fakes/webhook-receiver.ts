/**
 * A webhook receiver: a node:http server that records every POST (headers and raw body) and
 * answers with the scripted statuses in order, then 204. While `hold` is positive, a request is
 * recorded and never answered (the sender is left inside its call).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeWebhookReceiver {
  url: string;
  received: ReceivedHook[];
  /** Statuses answered in order; when empty, 204. */
  statuses: number[];
  hold: number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<FakeWebhookReceiver> {
  const received: ReceivedHook[] = [];
  const statuses: number[] = [];
  const state = { hold: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (state.hold > 0) {
        state.hold--;
        return;
      }
      res.statusCode = statuses.shift() ?? 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/vigil`,
    received,
    statuses,
    get hold() {
      return state.hold;
    },
    set hold(n: number) {
      state.hold = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
