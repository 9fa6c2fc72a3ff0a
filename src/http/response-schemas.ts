import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * What is wrong with an API route's declared answers, or null: every `/api/` route declares a
 * response schema for each of its success codes (at least one 2xx), so that every answer is
 * written by the route's serializer from its schema — no field the schema does not name leaves,
 * and the OpenAPI document describes what is sent. A 204 declares no body.
 */
export function responseSchemaProblem(route: Pick<RouteOptions, 'url' | 'method' | 'schema'>): string | null {
  if (!route.url.startsWith('/api/')) return null;
  const response = (route.schema?.response ?? {}) as Record<string, unknown>;
  const success = Object.keys(response).filter((status) => /^2\d\d$/.test(status));
  const where = `${String(route.method)} ${route.url}`;
  if (success.length === 0) return `${where} declares no success response schema`;
  for (const status of success) {
    if (status === '204') continue;
    const schema = response[status];
    if (typeof schema !== 'object' || schema === null || Object.keys(schema).length === 0)
      return `${where} declares no schema for ${status}`;
  }
  return null;
}

/**
 * Refuses, as the app is built, an API route without a response schema for its success codes
 * ({@link responseSchemaProblem}): such a route could send what no schema shaped.
 */
export function requireResponseSchemas(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const problem = responseSchemaProblem(route);
    if (problem) throw new Error(problem);
  });
}
