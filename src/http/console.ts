import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

/** Where `npm run build:console` writes the console (see console/vite.config.ts). */
export const CONSOLE_DIST = fileURLToPath(new URL('../../dist/console', import.meta.url));

const LONG_CACHE = 'public, max-age=31536000, immutable';

/**
 * The console's Content-Security-Policy: everything from this server; uploads may also go to the
 * S3 store's presigned URLs when the object store is S3.
 */
function contentSecurityPolicy(objectStore: string): string {
  const connect = objectStore.startsWith('s3:') ? "'self' https:" : "'self'";
  return [
    "default-src 'self'",
    `connect-src ${connect}`,
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * Serves the built console at `/app`: hashed assets cached for a year, `index.html` never cached,
 * and every other path under `/app/` answered with `index.html` (the console routes in the browser).
 * Without a build, `/app` says how to make one.
 */
export async function registerConsole(
  app: FastifyInstance,
  options: { root?: string; objectStore: string },
): Promise<void> {
  const root = options.root ?? CONSOLE_DIST;
  const csp = contentSecurityPolicy(options.objectStore);
  const hide = { schema: { hide: true }, config: { auth: { kind: 'none' as const } } };
  if (!existsSync(path.join(root, 'index.html'))) {
    const notBuilt = async () => {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: 'The console is not built: run `npm run build:console`.',
      });
    };
    app.get('/app', hide, notBuilt);
    app.get('/app/*', hide, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/app/',
    // Routes for the files present at start; the fallback below answers the console's own paths.
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders(res, filePath) {
      res.header(
        'cache-control',
        filePath.includes(`${path.sep}assets${path.sep}`) ? LONG_CACHE : 'no-cache',
      );
      res.header('x-content-type-options', 'nosniff');
    },
  });
  const sendIndex = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-cache');
    reply.header('content-security-policy', csp);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    return reply.sendFile('index.html');
  };
  app.get('/app', hide, sendIndex);
  app.get('/app/*', hide, sendIndex);
  // A hashed asset that does not exist is a 404, not the page (a stale page asking for old files).
  app.get('/app/assets/*', hide, async () => {
    throw new AppError('ROUTE_NOT_FOUND');
  });
}
