import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesServiceAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompany, buildServiceKey, grantCredits } from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

describe('GET /api/scanner/v1/credits', () => {
  it('returns balances and per-type availability from the ledger', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, { companyId: company.id });
    await grantCredits(t, company.id, 3);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { 'x-api-key': key.key },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ purchased: 3, used: 0, reserved: 0, remaining: 3 });
    expect(body.scanTypes.lite).toEqual({ available: true, cost: 1 });
    expect(body.scanTypes.standard).toEqual({ available: true, cost: 2 });
    expect(body.scanTypes.audit.available).toBe(false);
    expect(body.scanTypes.audit.reason).toMatch(/5/);
    expect(new Date(body.asOf).toString()).not.toBe('Invalid Date');
    const ledger = await t.container.services.credits.getLedgerBalances(company.id);
    expect(ledger.remaining).toBe(3);
  });

  itEnforcesServiceAuth(() => t, {
    method: 'GET',
    scope: 'credits:read',
    crossTenant: false,
    request: async () => ({ url: '/api/scanner/v1/credits' }),
  });
});
