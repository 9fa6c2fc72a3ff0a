/**
 * The receiver refused a message or could not be reached, so it certainly did not get it: the
 * send may be retried (`permanent` false) or never will succeed (`permanent` true). Any other
 * error of a send leaves it unknown whether the message arrived.
 */
export class SendRefusedError extends Error {
  override name = 'SendRefusedError';
  constructor(
    message: string,
    readonly permanent: boolean,
    /** The receiver's HTTP status, when it answered one. */
    readonly statusCode: number | null = null,
  ) {
    super(message);
  }
}

/** Connection errors that happen before a single byte of the message left. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** True when the error (or its cause) says the connection was never made. */
export function neverConnected(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_CONNECTED.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
