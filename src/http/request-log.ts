/**
 * The request log: one line per request when its answer is sent, with the URL's secrets redacted
 * (upload signatures, tokens and keys in query strings and path segments, credentials in
 * user-info), and health probes (`/healthz`, `/readyz`) at debug level so that they do not drown
 * the log.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { redactSecrets, SECRET_PARAMS } from '../redaction.ts';

/** Query parameters whose values are never logged (compared case-insensitively). */
const SECRET_PARAM_NAMES: ReadonlySet<string> = new Set(SECRET_PARAMS);

const PROBES = new Set(['/healthz', '/readyz']);

/** The URL (a path with a query, or an absolute URL) with secret parameters and user-info redacted. */
function redactUrlParams(raw: string): string {
  let out = raw.replace(/\/\/[^/@?#]*@/, '//[redacted]@');
  const q = out.indexOf('?');
  if (q === -1) return out;
  const [query, fragment = ''] = out.slice(q + 1).split('#', 2) as [string, string?];
  const parts = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq === -1) return pair;
    let name = pair.slice(0, eq);
    try {
      name = decodeURIComponent(name);
    } catch {
      // Keep the raw name.
    }
    return SECRET_PARAM_NAMES.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=[redacted]` : pair;
  });
  out = `${out.slice(0, q)}?${parts.join('&')}${fragment ? `#${fragment}` : ''}`;
  return out;
}

/**
 * The URL as the request log writes it: secret parameters and user-info by name
 * ({@link redactUrlParams}), then secrets by what they look like wherever they are (a token in a
 * path segment or in any parameter).
 */
export function redactUrl(raw: string): string {
  return redactSecrets(redactUrlParams(raw));
}

/** Whether the logger writes lines of this level (pino's check; a logger without one writes every level). */
function isLevelEnabled(log: FastifyBaseLogger, level: 'debug' | 'info'): boolean {
  const check = (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check ? check.call(log, level) : true;
}

/** Replaces Fastify's own request logging (create the app with `disableRequestLogging: true`). */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const level = PROBES.has(path) ? 'debug' : 'info';
    // Nothing is built for a line the level leaves out (the URL's redaction included).
    if (!isLevelEnabled(request.log, level)) return;
    request.log[level](
      {
        req: { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip },
        res: { statusCode: reply.statusCode },
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  });
}
