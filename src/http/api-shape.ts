import type { AppError } from '../errors.ts';

/** Which error body a path answers with: v0 `{msg}` or v1 `{error, code}`. */
export type ApiShape = 'v0' | 'v1';

export function apiShapeOf(url: string): ApiShape {
  return url.startsWith('/api/v0') ? 'v0' : 'v1';
}

/** Renders an AppError as the body of its API's shape. */
export function renderErrorBody(shape: ApiShape, err: AppError, requestId?: string): Record<string, unknown> {
  if (shape === 'v0') {
    return { msg: requestId && err.status >= 500 ? `${err.message} (request id ${requestId})` : err.message };
  }
  return {
    error: err.message,
    code: err.code,
    ...(err.details ?? {}),
    ...(requestId && err.status >= 500 ? { requestId } : {}),
  };
}
