import { createVigilClient, errorMessage, type Schemas } from 'vigil/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { buildCompany, buildServiceKey, grantCredits } from '../../test/helpers/factories.ts';

let url: string;

const t = sharedTestApp();
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

describe('vigil/sdk', () => {
  it('reads typed bodies from both APIs with a service key and a user token', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    await grantCredits(t, company.id, 7);

    const scanner = createVigilClient({ baseUrl: `${url}/`, token: key.key });
    const { data, error, response } = await scanner.GET('/api/scanner/v1/credits');
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    const balances: Schemas['CreditBalances'] | undefined = data;
    expect(balances).toMatchObject({ purchased: 7, remaining: 7 });

    const admin = createVigilClient({ baseUrl: url, token: t.adminToken });
    const created = await admin.POST('/api/v0/admin/companies', {
      body: { name: 'Sdk Co', handle: `sdk-${company.handle}` },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.handle).toBe(`sdk-${company.handle}`);
  });

  it('hands back the error body in the API shape', async () => {
    const client = createVigilClient({ baseUrl: url, token: 'vgl_sk_notarealkey' });
    const { data, error, response } = await client.GET('/api/scanner/v1/credits');
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(errorMessage(error)).toMatch(/\(.+\)$/);
  });
});
