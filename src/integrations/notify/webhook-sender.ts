import { createHmac } from 'node:crypto';
import { isOutboundRefused, OUTBOUND_REFUSED_MESSAGE } from '../outbound/outbound-policy.ts';
import { neverConnected, SendRefusedError } from './send-errors.ts';

/** The `fetch` the sender uses: the container's, so that the outbound policy applies. */
export type Fetch = typeof globalThis.fetch;

/**
 * The signature of a webhook body: HMAC-SHA256 under the company's secret over
 * `<timestamp>.<body>`, hex. Receivers recompute it and reject old timestamps (replays).
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export interface WebhookRequest {
  url: string;
  secret: string;
  /** Stable per delivery: receivers use it to recognise a message they already have. */
  deliveryId: string;
  body: string;
}

/**
 * POSTs a signed event and returns the receiver's status. A 2xx answer delivers it. A destination
 * the outbound policy refuses, or a redirect (never followed: the receiver is the URL the company
 * saved), is a permanent refusal (SendRefusedError, `permanent`); another answer, or no
 * connection at all, is a refusal that may be retried; a timeout or a connection lost mid-request
 * is unknown (the error as thrown).
 */
export async function sendWebhook(
  fetch: Fetch,
  request: WebhookRequest,
  options: { timeoutMs: number; now?: () => number },
): Promise<{ statusCode: number }> {
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'vigil-webhooks/1',
        'x-vigil-delivery': request.deliveryId,
        'x-vigil-timestamp': String(timestamp),
        'x-vigil-signature': `sha256=${signWebhook(request.secret, timestamp, request.body)}`,
      },
      body: request.body,
    });
  } catch (err) {
    // Nothing was sent: the policy refuses before connecting, and will refuse again.
    if (isOutboundRefused(err)) throw new SendRefusedError(OUTBOUND_REFUSED_MESSAGE, true);
    if (neverConnected(err))
      throw new SendRefusedError(`webhook not reachable: ${(err as Error).message}`, false);
    throw err;
  }
  await response.body?.cancel().catch(() => {});
  if (response.status >= 300 && response.status < 400) {
    throw new SendRefusedError(
      `webhook answered ${response.status}: redirects are not followed (save the final URL)`,
      true,
      response.status,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    throw new SendRefusedError(`webhook answered ${response.status}`, false, response.status);
  }
  return { statusCode: response.status };
}
