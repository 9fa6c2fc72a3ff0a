/**
 * Hostile input, checked once for every operation:
 *
 * - strings: a NUL character or a lone UTF-16 surrogate anywhere in the body, the query string,
 *   the path parameters or the headers (values and keys) is a 400 naming the field, before any
 *   handler, service or SQL sees it (PostgreSQL cannot store either);
 * - integers: every integer of a request schema without its own bounds is bounded by the
 *   PostgreSQL `integer` column it ends in (a `bigint` field declares its own `maximum`);
 * - framework errors (a bad percent-encoding, an over-long path parameter, a malformed header
 *   the HTTP parser refuses) leave in the API's error shape like every other error.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { badStringReason } from '../strings.ts';
import { apiShapeOf, renderErrorBody } from './api-shape.ts';
import { sendAppError } from './error-handler.ts';

export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

type Location = 'body' | 'querystring' | 'params' | 'headers';

const WHERE: Record<Location, string> = {
  body: 'body field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** The path (`a.b.0`) and reason of the first refused string in `value`, keys included. */
export function findBadString(
  value: unknown,
  path = '',
  depth = 0,
): { field: string; reason: string } | null {
  if (typeof value === 'string') {
    const reason = badStringReason(value);
    return reason ? { field: path, reason } : null;
  }
  if (depth > 64 || value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, item] of entries) {
    const here = path ? `${path}.${key}` : key;
    const keyReason = badStringReason(key);
    if (keyReason) return { field: here, reason: `name ${keyReason}` };
    const found = findBadString(item, here, depth + 1);
    if (found) return found;
  }
  return null;
}

function refuse(location: Location, found: { field: string; reason: string }): AppError {
  const field = found.field.length > 200 ? `${found.field.slice(0, 200)}…` : found.field;
  const label = field ? `${WHERE[location]} '${field}'` : location === 'body' ? 'body' : WHERE[location];
  return new AppError('VALIDATION_FAILED', {
    message: `Invalid ${label}: ${found.reason}.`,
    details: { field, location },
  });
}

/** Bounds the integers of a request schema (in place) by the PostgreSQL integer type. */
export function boundIntegers(schema: unknown, seen = new WeakSet<object>()): void {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.includes('integer')) {
    if (node.maximum === undefined && node.exclusiveMaximum === undefined) node.maximum = INT32_MAX;
    if (node.minimum === undefined && node.exclusiveMinimum === undefined) node.minimum = INT32_MIN;
  }
  for (const child of Object.values(node)) {
    if (Array.isArray(child)) for (const item of child) boundIntegers(item, seen);
    else boundIntegers(child, seen);
  }
}

const FRAMEWORK_ERRORS: Record<string, () => AppError> = {
  FST_ERR_BAD_URL: () =>
    new AppError('VALIDATION_FAILED', {
      message: 'The URL is not valid: a path segment has a malformed percent-encoding.',
      details: { field: 'url', location: 'params' },
    }),
  FST_ERR_MAX_PARAM_LENGTH: () => new AppError('URI_TOO_LONG'),
  FST_ERR_ASYNC_CONSTRAINT: () => new AppError('VALIDATION_FAILED'),
};

/** For Fastify's `frameworkErrors` option: router errors in the API's shape. */
export function handleFrameworkError(
  error: Error & { code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const make = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
  void sendAppError(request, reply, make ? make() : new AppError('VALIDATION_FAILED'));
}

/**
 * For Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (a NUL or a control
 * character in a header, headers too large) never reaches a route; the answer is written on the
 * socket in the shape of the API its request line names.
 */
export function handleClientError(error: Error, socket: Socket): void {
  const err = error as Error & { code?: string; rawPacket?: Buffer };
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const requestLine = err.rawPacket?.subarray(0, 2048).toString('latin1').split('\r\n')[0] ?? '';
  const url = requestLine.split(' ')[1] ?? '/';
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const appError = tooLarge
    ? new AppError('BAD_HEADERS', { message: 'The request headers are too large.' })
    : new AppError('BAD_HEADERS');
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify(renderErrorBody(apiShapeOf(url), appError));
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `x-error-code: ${appError.code}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/**
 * Installs the string checks (query, path parameters and headers as the request arrives, before
 * authentication; the body once parsed) and the integer bounds of every route's request schema.
 * Register it before the authentication hook.
 */
export function registerHostileInputChecks(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Record<string, unknown> | undefined;
    if (!schema) return;
    for (const part of ['body', 'querystring', 'params', 'headers'] as const) boundIntegers(schema[part]);
  });

  app.addHook('onRequest', async (request) => {
    const rawQuery = request.url.includes('?') ? request.query : undefined;
    const checks: Array<[Location, unknown]> = [
      ['params', request.params],
      ['querystring', rawQuery],
      ['headers', request.headers],
    ];
    for (const [location, value] of checks) {
      const found = findBadString(value);
      if (found) throw refuse(location, found);
    }
  });

  app.addHook('preValidation', async (request) => {
    const found = findBadString(request.body);
    if (found) throw refuse('body', found);
  });
}
