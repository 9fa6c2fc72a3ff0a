import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { INT32_MAX } from '../../src/http/hostile-input.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany } from '../helpers/factories.ts';

let port: number;
const t = sharedTestApp();
beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});

const auth = () => ({ authorization: `Bearer ${t.adminToken}` });

/** Sends raw bytes over TCP and returns the raw answer (for what the HTTP parser refuses). */
function rawRequest(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.from(bytes, 'latin1')));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8');
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

describe('strings checked centrally', () => {
  it('refuses a NUL in a query parameter before authentication, in the v0 shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v0/reports?q=%00' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ msg: "Invalid query parameter 'q': contains a NUL character." });
  });

  it('refuses a NUL in a v1 query parameter, naming it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/scanner/v1/credits?x=a%00' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'x', location: 'querystring' });
  });

  it('refuses a NUL or a lone surrogate in a body field or a key, naming it', async () => {
    const company = await buildCompany(t);
    const url = `/api/v0/companies/${company.id}/integrations/sourcehost`;
    const headers = { ...auth(), 'content-type': 'application/json' };
    for (const [payload, msg] of [
      [
        '{"credentials":{"token":"a\\u0000b"}}',
        "Invalid body field 'credentials.token': contains a NUL character.",
      ],
      [
        '{"credentials":{"token":"a\\ud800b"}}',
        "Invalid body field 'credentials.token': contains a lone UTF-16 surrogate.",
      ],
      [
        '{"credentials":{"token":"\\udc00"}}',
        "Invalid body field 'credentials.token': contains a lone UTF-16 surrogate.",
      ],
      [
        '{"settings":{"a\\u0000":"x"},"credentials":{"token":"t"}}',
        "Invalid body field 'settings.a\u0000': name contains a NUL character.",
      ],
    ] as const) {
      const res = await t.app.inject({ method: 'PUT', url, headers, payload });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json(), payload).toEqual({ msg });
    }
    // A well-formed pair (an emoji) is fine.
    const ok = await t.app.inject({
      method: 'PUT',
      url,
      headers,
      payload: '{"credentials":{"token":"t\\ud83d\\ude00"}}',
    });
    expect(ok.statusCode).toBeLessThan(300);
  });

  it('refuses a NUL in a path parameter and in a header value', async () => {
    const path = await t.app.inject({
      method: 'GET',
      url: '/api/v0/companies/%00/integrations',
      headers: auth(),
    });
    expect(path.statusCode).toBe(400);
    expect(path.json()).toEqual({ msg: "Invalid path parameter 'companyId': contains a NUL character." });
    const header = await t.app.inject({
      method: 'GET',
      url: '/api/v0/reports',
      headers: { ...auth(), 'x-note': 'a\u0000b' },
    });
    expect(header.statusCode).toBe(400);
    expect(header.json()).toEqual({ msg: "Invalid header 'x-note': contains a NUL character." });
  });
});

describe('framework errors in the API shapes', () => {
  it('answers an over-long path parameter 414 in the v0 and v1 shapes', async () => {
    const v0 = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${'a'.repeat(500)}/integrations`,
    });
    expect(v0.statusCode).toBe(414);
    expect(v0.json()).toEqual({ msg: 'A path parameter is too long.' });
    const v1 = await t.app.inject({ method: 'GET', url: `/api/scanner/v1/scans/${'a'.repeat(500)}` });
    expect(v1.statusCode).toBe(414);
    expect(v1.json()).toEqual({ error: 'A path parameter is too long.', code: 'URI_TOO_LONG' });
  });

  it('answers a malformed percent-encoding 400 in the API shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/scanner/v1/scans/%ZZ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'url' });
  });

  it('answers a header the HTTP parser refuses in the API shape, on a real socket', async () => {
    const v1 = await rawRequest(
      'GET /api/scanner/v1/credits HTTP/1.1\r\nHost: x\r\nX-Note: a\u0000b\r\n\r\n',
    );
    expect(v1).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(v1.slice(v1.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'The request headers are malformed.',
      code: 'BAD_HEADERS',
    });
    const v0 = await rawRequest('GET /api/v0/reports HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n');
    expect(JSON.parse(v0.slice(v0.indexOf('\r\n\r\n') + 4))).toEqual({
      msg: 'The request headers are malformed.',
    });
  });

  it('answers malformed JSON in the API shape', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/scans',
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      payload: '{"bad',
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json()).toHaveProperty('code');
  });
});

describe('integers bounded by their column types', () => {
  it('gives every integer of every request schema in openapi.json a maximum and a minimum', () => {
    const spec = t.app.swagger();
    const unbounded: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (node === null || typeof node !== 'object') return;
      const n = node as Record<string, unknown>;
      if (n.type === 'integer' && (n.maximum === undefined || n.minimum === undefined)) unbounded.push(where);
      for (const [k, v] of Object.entries(n)) walk(v, `${where}.${k}`);
    };
    for (const [path, methods] of Object.entries(spec.paths ?? {})) {
      for (const [method, op] of Object.entries(methods ?? {})) {
        if (op === null || typeof op !== 'object' || Array.isArray(op)) continue;
        walk('parameters' in op ? op.parameters : undefined, `${method} ${path} parameters`);
        walk('requestBody' in op ? op.requestBody : undefined, `${method} ${path} body`);
      }
    }
    expect(unbounded).toEqual([]);
  });

  it('refuses a line number above 2^31-1 with a 400, not a 500', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v0/repositories/${randomUUID()}/findings`,
      headers: auth(),
      payload: {
        title: 't',
        description: 'd',
        severity: 'high',
        relatedFiles: [{ path: 'a.sol', lines: { start: 1, end: INT32_MAX + 1 } }],
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ msg: expect.stringContaining("'relatedFiles.0.lines.end'") });
  });
});
