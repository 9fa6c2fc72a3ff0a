import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOUND_REFUSED_MESSAGE } from '../../src/integrations/outbound/outbound-policy.ts';
import { createTestApp, sharedTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompany } from '../helpers/factories.ts';

let allowing: TestApp;
const strict = sharedTestApp();
beforeAll(async () => {
  allowing = await createTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
});
afterAll(async () => {
  await allowing?.close();
});

async function put(t: TestApp, companyId: string, provider: string, payload: Record<string, unknown>) {
  return t.app.inject({
    method: 'PUT',
    url: `/api/v0/companies/${companyId}/integrations/${provider}`,
    headers: { authorization: `Bearer ${t.adminToken}` },
    payload,
  });
}

describe('integration settings and the outbound policy', () => {
  const internal = [
    'http://127.0.0.1:3000',
    'http://0x7f000001',
    'http://2130706433:5432',
    'http://169.254.169.254',
    'http://[::ffff:127.0.0.1]',
    'http://[::1]:6379',
    'http://10.1.2.3',
    'http://localhost:3000',
  ];

  it('refuses internal destinations when saved, 400 naming the field, the same for every port', async () => {
    const company = await buildCompany(strict);
    const messages = new Set<string>();
    for (const url of internal) {
      const cases = [
        ['sourcehost', { credentials: { token: 't0ken' }, settings: { baseUrl: url } }, 'settings.baseUrl'],
        ['tracker_a', { credentials: { apiKey: 'k3y' }, settings: { baseUrl: url } }, 'settings.baseUrl'],
        ['tracker_b', { site: url, credentials: { accessToken: 'acc3ss' }, settings: {} }, 'site'],
      ] as const;
      for (const [provider, payload, field] of cases) {
        const res = await put(strict, company.id, provider, payload);
        expect(res.statusCode, `${provider} ${url}`).toBe(400);
        const body = res.json() as { msg: string };
        expect(body.msg).toBe(`${field}: ${OUTBOUND_REFUSED_MESSAGE}`);
        messages.add(body.msg);
      }
    }
    expect(messages.size).toBe(2);
    const list = await strict.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/integrations`,
      headers: { authorization: `Bearer ${strict.adminToken}` },
    });
    expect(list.json()).toEqual({ items: [] });
  });

  it('refuses a base URL that is not http(s)', async () => {
    const company = await buildCompany(strict);
    const res = await put(strict, company.id, 'sourcehost', {
      credentials: { token: 't0ken' },
      settings: { baseUrl: 'file:///etc/passwd' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ msg: 'settings.baseUrl must be an http(s) URL.' });
  });

  it('saves a destination VIGIL_OUTBOUND_ALLOW allows', async () => {
    const company = await buildCompany(allowing);
    const res = await put(allowing, company.id, 'sourcehost', {
      credentials: { token: 't0ken' },
      settings: { baseUrl: 'http://127.0.0.1:1' },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  });
});
