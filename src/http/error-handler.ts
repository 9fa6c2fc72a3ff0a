import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isConnectionError } from '../db/client.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { apiShapeOf, renderErrorBody } from './api-shape.ts';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function describeValidation(err: FastifyError): { message: string; field: string } {
  const issue = (err.validation?.[0] ?? {}) as ValidationIssue;
  const context = err.validationContext ?? 'body';
  const missing = issue.params?.missingProperty;
  const extra = issue.params?.additionalProperty;
  const pathPart = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  const field = [pathPart, typeof missing === 'string' ? missing : typeof extra === 'string' ? extra : '']
    .filter(Boolean)
    .join('.');
  const where =
    context === 'querystring'
      ? 'query parameter'
      : context === 'params'
        ? 'path parameter'
        : context === 'headers'
          ? 'header'
          : 'body field';
  if (typeof extra === 'string') return { field, message: `Unknown ${where} '${field}'.` };
  if (typeof missing === 'string') return { field, message: `Missing required ${where} '${field}'.` };
  const label = field ? `${where} '${field}'` : context === 'body' ? 'body' : where;
  return { field, message: `Invalid ${label}: ${issue.message ?? 'invalid value'}.` };
}

/** Maps any thrown value to an AppError, logging what a client must not see. */
export function toAppError(err: unknown, request: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  const e = err as FastifyError;
  if (e.validation) {
    const { message, field } = describeValidation(e);
    return new AppError('VALIDATION_FAILED', {
      message,
      details: { field, ...(e.validationContext ? { location: e.validationContext } : {}) },
    });
  }
  const byFastifyCode: Record<string, ErrorCode> = {
    FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
    FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
    FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
    FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  };
  const mapped = e.code ? byFastifyCode[e.code] : undefined;
  if (mapped) return new AppError(mapped);
  if (err instanceof SyntaxError && e.statusCode === 400) return new AppError('MALFORMED_JSON');
  if (isConnectionError(err)) {
    request.log.error({ err }, 'database unavailable');
    return new AppError('SERVICE_UNAVAILABLE', { headers: { 'retry-after': '5' } });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError(e.statusCode === 404 ? 'NOT_FOUND' : 'VALIDATION_FAILED', { message: e.message });
  }
  request.log.error({ err }, 'unhandled error');
  return new AppError('INTERNAL');
}

/** Sends an AppError in the shape of the request's API. */
export function sendAppError(request: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  reply.header('x-error-code', err.code);
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(renderErrorBody(apiShapeOf(request.url), err, request.id));
}

/**
 * Installs the error and not-found handlers: every failure, including schema validation, unknown
 * routes, wrong methods and 500s, leaves in its API's shape. A path that exists with another
 * method answers 405 with `Allow`.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(
      `^${route.url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`,
    );
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const existing = routes.find((r) => r.pattern.source === pattern.source);
    if (existing) for (const m of methods) existing.methods.add(m);
    else routes.push({ pattern, methods: new Set(methods) });
  });

  app.setErrorHandler((err, request, reply) => sendAppError(request, reply, toAppError(err, request)));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = new Set<string>();
    for (const route of routes) {
      if (route.pattern.test(path)) for (const m of route.methods) allowed.add(m);
    }
    if (allowed.size > 0) {
      reply.header('allow', [...allowed].sort().join(', '));
      return sendAppError(request, reply, new AppError('METHOD_NOT_ALLOWED'));
    }
    return sendAppError(
      request,
      reply,
      new AppError('ROUTE_NOT_FOUND', { message: `No route ${request.method} ${path}.` }),
    );
  });
}
