import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import { localScanBody, postScan, REENTRANT_BANK, waitForScan } from '../helpers/scan-helpers.ts';

// A server with a public address links its own rule pages from the reports of its scans.
const t = sharedTestApp({ worker: true, env: { VIGIL_PUBLIC_URL: 'https://vigil.example.com/' } });

describe('GET /api/scanner/v1/scans/{scanId}/findings on a server with VIGIL_PUBLIC_URL', () => {
  it('links its own /docs/rules pages and says which files the Solidity rules skipped', async () => {
    const company = await buildCompany(t);
    const { key } = await buildServiceKey(t, { companyId: company.id });
    await grantCredits(t, company.id, 10);
    const archive = await buildArchive(t, {
      companyId: company.id,
      files: { 'src/Bank.sol': REENTRANT_BANK, 'test/Bank.t.sol': REENTRANT_BANK },
    });
    const posted = await postScan(t, key, localScanBody(archive));
    expect(posted.statusCode, posted.body).toBe(202);
    const scanId = posted.json().id as string;
    await waitForScan(t, key, scanId, (s) => s.status === 'completed');
    const read = (format: 'sast' | 'sarif') =>
      t.app.inject({
        method: 'GET',
        url: `/api/scanner/v1/scans/${scanId}/findings?format=${format}`,
        headers: { authorization: `Bearer ${key}` },
      });
    const skipped =
      'Solidity rules skipped 1 test or script file(s) under test/ (their secrets were scanned); use --include-tests or include_tests = true in vigil.toml to include them.';

    const sast = (await read('sast')).json() as {
      scan: { messages?: Array<{ value: string }> };
      vulnerabilities: Array<{
        location: { file: string };
        identifiers: Array<{ type: string; url?: string }>;
      }>;
    };
    expect(sast.vulnerabilities.length).toBeGreaterThan(0);
    expect(new Set(sast.vulnerabilities.map((v) => v.location.file))).toEqual(new Set(['src/Bank.sol']));
    for (const v of sast.vulnerabilities) {
      const rule = v.identifiers.find((i) => i.type === 'vigil_rule');
      expect(rule?.url?.startsWith('https://vigil.example.com/docs/rules/')).toBe(true);
    }
    expect(sast.scan.messages?.map((m) => m.value)).toContain(skipped);

    const sarif = (await read('sarif')).json() as {
      runs: Array<{
        tool: { driver: { informationUri: string; rules: Array<{ helpUri: string }> } };
        invocations?: Array<{
          toolExecutionNotifications?: Array<{ level: string; message: { text: string } }>;
        }>;
      }>;
    };
    const run = sarif.runs[0]!;
    expect(run.tool.driver.informationUri).toBe('https://vigil.example.com/docs/rules');
    for (const r of run.tool.driver.rules)
      expect(r.helpUri.startsWith('https://vigil.example.com/docs/rules/')).toBe(true);
    expect(run.invocations?.[0]?.toolExecutionNotifications).toContainEqual({
      level: 'note',
      message: { text: skipped },
    });
  });
});

describe('a scan whose sources hold a vigil.toml the engine cannot use', () => {
  it('fails at once with INVALID_PROJECT_SETTINGS and the line to fix, and returns the credits', async () => {
    const company = await buildCompany(t);
    const { key } = await buildServiceKey(t, { companyId: company.id });
    await grantCredits(t, company.id, 10);
    const archive = await buildArchive(t, {
      companyId: company.id,
      files: { 'src/Bank.sol': REENTRANT_BANK, 'vigil.toml': 'include_tests = true\nseverity = "high"\n' },
    });
    const posted = await postScan(t, key, localScanBody(archive));
    expect(posted.statusCode, posted.body).toBe(202);
    const scan = await waitForScan(t, key, posted.json().id as string, (s) => s.status !== 'preparing');
    expect(scan.status).toBe('failed');
    expect(scan.error).toEqual({
      code: 'INVALID_PROJECT_SETTINGS',
      message:
        'vigil.toml line 2: unknown key "severity". Vigil reads include_tests (true or false) and exclude (an array of gitignore patterns).',
    });
    expect(await t.container.services.credits.getBalances(company.id)).toMatchObject({
      used: 0,
      reserved: 0,
      remaining: 10,
    });
  });
});
