import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACTED_LOG_PATHS } from '../../src/container.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildCompany, buildCompanyWorld, buildUser } from '../helpers/factories.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const t = sharedTestApp({ env: { VIGIL_METRICS_TOKEN: METRICS_TOKEN } });
const closed = sharedTestApp();

describe('health and metrics', () => {
  it('answers /healthz and /readyz without a credential', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      status: 'ready',
      database: 'ok',
    });
  });

  it('exposes per-route latency histograms in Prometheus format', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.inject({ method: 'GET', url: '/api/scanner/v1/credits' });
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{[^}]*route="\/healthz"[^}]*\}/);
    expect(res.body).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/scanner\/v1\/credits",status_code="401"\}/,
    );
    expect(res.body).toContain('process_cpu_user_seconds_total');
  });

  it('answers /metrics only to the bearer of VIGIL_METRICS_TOKEN, and to no one on the API port without it', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Basic ${METRICS_TOKEN}`,
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        ...(authorization ? { headers: { authorization } } : {}),
      });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.headers['www-authenticate']).toContain('Bearer');
      expect(res.body).not.toContain('http_request_duration_seconds');
    }
    const res = await closed.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ msg: expect.stringContaining('VIGIL_METRICS_PORT') });
  });

  it('serves the API reference page at /docs', async () => {
    const redirect = await t.app.inject({ method: 'GET', url: '/docs' });
    expect([200, 301, 302]).toContain(redirect.statusCode);
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('/openapi.json');
  });

  it('echoes a request id on every response', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-1' } });
    expect(res.headers['x-request-id']).toBe('abc-1');
  });
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with operationId, tags and error responses on every operation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json() as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          { operationId?: string; tags?: string[]; responses?: Record<string, unknown>; security?: unknown[] }
        >
      >;
    };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(5);
    const ids = new Set<string>();
    for (const { path, method, op } of operations) {
      expect(op.operationId, `${method} ${path}`).toBeTruthy();
      expect(ids.has(op.operationId!), `duplicate operationId ${op.operationId}`).toBe(false);
      ids.add(op.operationId!);
      expect(op.tags?.length, `${method} ${path} tags`).toBeGreaterThan(0);
      const statuses = Object.keys(op.responses ?? {});
      expect(
        statuses.some((s) => s.startsWith('2')),
        `${method} ${path} success response`,
      ).toBe(true);
      if (path.startsWith('/api/')) {
        for (const status of ['400', '401', '429', '500'])
          expect(statuses, `${method} ${path} ${status}`).toContain(status);
        expect(op.security?.length, `${method} ${path} security`).toBeGreaterThan(0);
      }
    }
    expect(ids).toContain('getCreditBalances');
  });

  it('names every request body and response shape in components.schemas', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    type Content = Record<string, { schema?: Record<string, unknown> }>;
    const doc = res.json() as {
      components: { schemas: Record<string, unknown> };
      paths: Record<
        string,
        Record<
          string,
          { requestBody?: { content?: Content }; responses?: Record<string, { content?: Content }> }
        >
      >;
    };
    const inline: string[] = [];
    const dangling: string[] = [];
    let checked = 0;
    const check = (where: string, content: Content | undefined) => {
      for (const [type, { schema }] of Object.entries(content ?? {})) {
        checked += 1;
        const target = typeof schema?.$ref === 'string' ? schema.$ref : '';
        if (!target.startsWith('#/components/schemas/')) inline.push(`${where} ${type}`);
        else if (!(target.slice('#/components/schemas/'.length) in doc.components.schemas)) {
          dangling.push(`${where} ${type} ${target}`);
        }
      }
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        check(`${method} ${path} body`, op.requestBody?.content);
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          check(`${method} ${path} ${status}`, response.content);
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(inline).toEqual([]);
    expect(dangling).toEqual([]);
    // Names from the contracts.
    for (const name of ['CreditBalances', 'ScanStatus', 'Finding', 'FindingTicket', 'ErrorV1', 'ErrorV0']) {
      expect(Object.keys(doc.components.schemas)).toContain(name);
    }
  });
});

describe('logs', () => {
  it('never write credentials or integration secrets', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ logLevel: 'info' }, sink);
    log.info(
      { req: { headers: { authorization: 'Bearer vgl_u_SECRET', 'x-api-key': 'vgl_sk_SECRET' } } },
      'request',
    );
    log.info(
      { integration: { credentials: { apiToken: 'tok-SECRET' } }, body: { token: 'SECRET' } },
      'integration',
    );
    expect(lines.join('\n')).not.toContain('SECRET');
    expect(lines.join('\n')).toContain('[redacted]');
    expect(REDACTED_LOG_PATHS).toContain('req.headers.authorization');
  });
});

describe('integrations', () => {
  it('stores credentials encrypted and never returns them', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/tracker_b`,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: {
        site: 'https://acme.tracker.example',
        credentials: { email: 'bot@acme.example', apiToken: 'very-secret-token' },
        settings: { destination: { projectKey: 'SEC', issueType: 'Bug' } },
      },
    });
    expect(put.statusCode).toBe(201);
    expect(put.body).not.toContain('very-secret-token');
    expect(put.json()).toMatchObject({
      provider: 'tracker_b',
      site: 'https://acme.tracker.example',
      credentialFields: ['apiToken', 'email'],
    });
    const rows = await t.container.database.executeSql(
      'select credentials_enc from integrations where company_id = $1',
      [company.id],
    );
    expect(String(rows.rows[0]?.credentials_enc)).not.toContain('very-secret-token');
    const connections = await t.container.services.integrations.getConnections(company.id, 'tracker_b');
    expect(connections[0]?.credentials.apiToken).toBe('very-secret-token');
    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/integrations`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(list.body).not.toContain('very-secret-token');
  });

  it('keeps several tracker_b sites apart and replaces one on a second PUT', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const put = (site: string, token: string) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/v0/companies/${company.id}/integrations/tracker_b`,
        headers: { authorization: `Bearer ${manager.token}` },
        payload: { site, credentials: { email: 'a@b.c', apiToken: token } },
      });
    expect((await put('https://one.example', 't1')).statusCode).toBe(201);
    expect((await put('https://two.example', 't2')).statusCode).toBe(201);
    expect((await put('https://ONE.example/', 't3')).statusCode).toBe(200);
    const connections = await t.container.services.integrations.getConnections(company.id, 'tracker_b');
    expect(connections.map((c) => [c.site, c.credentials.apiToken])).toEqual([
      ['https://one.example', 't3'],
      ['https://two.example', 't2'],
    ]);
  });

  it('audits sourcehost connections and removals', async () => {
    // A company with a manager only: the audit below lists every invitation.
    const company = await buildCompany(t);
    const manager = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    const headers = { authorization: `Bearer ${manager.token}` };
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/sourcehost`,
      headers,
      payload: {
        credentials: { token: 'ghp_x' },
        settings: { baseUrl: 'https://git.example', accountName: 'acme-bot' },
      },
    });
    expect(put.statusCode).toBe(201);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/integrations/sourcehost`,
      headers,
    });
    expect(del.statusCode).toBe(204);
    const again = await t.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/integrations/sourcehost`,
      headers,
    });
    expect(again.statusCode).toBe(404);
    const audit = await t.container.database.executeSql(
      'select action, sourcehost_account_name from audit_log where company_id = $1 order by created_at',
      [company.id],
    );
    expect(audit.rows.map((r) => r.action)).toEqual([
      'user_invited',
      'sourcehost_integration_added',
      'sourcehost_integration_removed',
    ]);
    expect(audit.rows[1]?.sourcehost_account_name).toBe('acme-bot');
  });

  it('rejects unknown credential fields with 400 naming them', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/integrations/tracker_a`,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { credentials: { password: 'x' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().msg).toContain('password');
  });
});
