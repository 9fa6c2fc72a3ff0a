import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOUND_REFUSED_MESSAGE } from '../../src/integrations/outbound/outbound-policy.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompany } from '../helpers/factories.ts';

let allowing: TestApp;
const strict = sharedTestApp({ env: { VIGIL_PUBLIC_URL: 'https://vigil.example.test:8443' } });
beforeAll(async () => {
  allowing = await createTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
});
afterAll(async () => {
  await allowing?.close();
});

type Payload = (url: string) => Record<string, unknown>;

/**
 * Every URL a tenant can set that the service connects to: the operation that saves it, the
 * setting the 400 names, and a body carrying a URL there. A URL setting of openapi.json is either
 * here or in {@link LINKS}: the last test fails for one added to neither.
 */
const CONNECTED: Array<{ operation: string; provider?: string; field: string; payload: Payload }> = [
  {
    operation: 'putCompanyNotificationWebhook',
    field: 'url',
    payload: (url) => ({ url }),
  },
  {
    operation: 'putIntegration',
    provider: 'sourcehost',
    field: 'settings.baseUrl',
    payload: (url) => ({ credentials: { token: 't0ken' }, settings: { baseUrl: url } }),
  },
  {
    operation: 'putIntegration',
    provider: 'sourcehost',
    field: 'settings.apiBaseUrl',
    payload: (url) => ({ credentials: { token: 't0ken' }, settings: { apiBaseUrl: url } }),
  },
  {
    operation: 'putIntegration',
    provider: 'tracker_a',
    field: 'settings.baseUrl',
    payload: (url) => ({ credentials: { apiKey: 'k3y' }, settings: { baseUrl: url } }),
  },
  {
    operation: 'putIntegration',
    provider: 'tracker_b',
    field: 'site',
    payload: (url) => ({ site: url, credentials: { accessToken: 'acc3ss' }, settings: {} }),
  },
  {
    operation: 'putIntegration',
    provider: 'tracker_b',
    field: 'settings.baseUrl',
    payload: (url) => ({
      site: 'https://acme.example.com',
      credentials: { accessToken: 'acc3ss' },
      settings: { baseUrl: url },
    }),
  },
];

/** URL-like fields the service never connects to: links shown to people, account names. */
const LINKS = [
  'adminCreateCompany body.sourcehost',
  'updateCompany body.sourcehost',
  'updateAuditorProfile body.sourcehost',
  'adminCreateCompany body.website',
  'updateCompany body.website',
  'updateAuditorProfile body.website',
  'createRepository body.url',
  'updateRepository body.url',
  'createReport body.clientWebsite',
  'updateReport body.clientWebsite',
];

/** Spellings of loopback, this service, the metadata service and private ranges. */
const INTERNAL = [
  'http://127.0.0.1:3000/hook',
  'http://127.1/',
  'http://127.0.1/',
  'http://2130706433:5432/',
  'http://0x7f000001/',
  'http://0x7f.0.0.1/',
  'http://0177.0.0.1/',
  'http://017700000001/',
  'http://0/',
  'http://0.0.0.0:3000/',
  'http://[::1]:6379/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://localhost:3000/',
  'http://LOCALHOST./',
  'https://localhost/',
  'https://vigil.example.test:8443/api/v0/session',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.1.2.3/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
];

function urlOf(operation: string, companyId: string, provider?: string): string {
  return operation === 'putCompanyNotificationWebhook'
    ? `/api/v0/companies/${companyId}/notification-webhook`
    : `/api/v0/companies/${companyId}/integrations/${provider}`;
}

async function put(t: TestApp, companyId: string, setting: (typeof CONNECTED)[number], url: string) {
  return t.app.inject({
    method: 'PUT',
    url: urlOf(setting.operation, companyId, setting.provider),
    headers: { authorization: `Bearer ${t.adminToken}` },
    payload: setting.payload(url),
  });
}

describe('tenant URL settings and the outbound policy', () => {
  it('refuses every internal spelling in every URL setting when saved: 400 naming the setting, one message', async () => {
    const company = await buildCompany(strict);
    for (const setting of CONNECTED) {
      for (const url of INTERNAL) {
        const res = await put(strict, company.id, setting, url);
        expect(res.statusCode, `${setting.operation} ${setting.field} ${url}`).toBe(400);
        expect(res.json(), `${setting.operation} ${setting.field} ${url}`).toEqual({
          msg: `${setting.field}: ${OUTBOUND_REFUSED_MESSAGE}`,
        });
      }
    }
    const auth = { authorization: `Bearer ${strict.adminToken}` };
    const list = await strict.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/integrations`,
      headers: auth,
    });
    expect(list.json()).toEqual({ items: [] });
    // Nothing was saved: there is no webhook to delete.
    const hook = await strict.app.inject({
      method: 'DELETE',
      url: `/api/v0/companies/${company.id}/notification-webhook`,
      headers: auth,
    });
    expect(hook.statusCode).toBe(404);
  });

  it('refuses a URL that is not http(s)', async () => {
    const company = await buildCompany(strict);
    const res = await put(strict, company.id, CONNECTED[1]!, 'file:///etc/passwd');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ msg: 'settings.baseUrl must be an http(s) URL.' });
  });

  it('saves a destination VIGIL_OUTBOUND_ALLOW allows, in every URL setting', async () => {
    const company = await buildCompany(allowing);
    for (const setting of CONNECTED) {
      const res = await put(allowing, company.id, setting, 'http://127.0.0.1:1/');
      expect(res.statusCode, `${setting.operation} ${setting.field}: ${res.body}`).toBeLessThan(300);
    }
  });

  it('knows every URL field of openapi.json: checked when saved, or a link never connected to', () => {
    const doc = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string; requestBody?: unknown }>>;
      components: { schemas: Record<string, unknown> };
    };
    const found = new Set<string>();
    const walk = (schema: unknown, path: string, seen: Set<string>, out: Set<string>): void => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      if (typeof s.$ref === 'string') {
        const name = s.$ref.split('/').pop()!;
        if (seen.has(name)) return;
        walk(doc.components.schemas[name], path, new Set([...seen, name]), out);
        return;
      }
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
        if (Array.isArray(s[key])) for (const part of s[key] as unknown[]) walk(part, path, seen, out);
      }
      if (s.items) walk(s.items, `${path}[]`, seen, out);
      const properties = (s.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const [name, value] of Object.entries(properties)) {
        if (/(url|site|website|endpoint|host)$/i.test(name) || value.format === 'uri')
          out.add(`${path}.${name}`);
        walk(value, `${path}.${name}`, seen, out);
      }
    };
    for (const operations of Object.values(doc.paths)) {
      for (const operation of Object.values(operations)) {
        const body = (operation.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)
          ?.content?.['application/json']?.schema;
        const fields = new Set<string>();
        walk(body, 'body', new Set(), fields);
        for (const field of fields) found.add(`${operation.operationId} ${field}`);
      }
    }
    const connected = new Set(
      CONNECTED.map((s) => `${s.operation} body.${s.field.replace(/^settings\..*$/, 'settings')}`),
    );
    const unknown = [...found].filter((f) => !connected.has(f) && !LINKS.includes(f));
    expect(unknown, 'a URL setting neither checked when saved nor listed as a link').toEqual([]);
    expect(found).toContain('putCompanyNotificationWebhook body.url');
  });
});
