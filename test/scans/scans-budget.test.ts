import { describe, expect, it } from 'vitest';
import { elseIfChain } from '../../src/engine/pathological.fixtures.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import { isFinal, localScanBody, postScan, waitForScan } from '../helpers/scan-helpers.ts';

// A 1 ms budget per file: a file whose analysis takes seconds of CPU goes over it whatever the
// machine (the budget counts the thread's CPU time), and the scan still completes with a report.
const t = sharedTestApp({ worker: true, env: { VIGIL_SCAN_FILE_BUDGET_MS: '1' } });

const TAIL = `
// DEPLOYER_PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318
contract Bank {
  address owner;
  mapping(address => uint) balances;
  function withdraw() public {
    require(tx.origin == owner);
    uint amount = balances[msg.sender];
    require(msg.sender.call.value(amount)());
    balances[msg.sender] = 0;
  }
}
`;

describe('a scan with a file over the analysis budget', () => {
  it('completes, keeps the cheap passes of the file and names it in its status and both reports', async () => {
    const company = await buildCompany(t);
    const { key } = await buildServiceKey(t, { companyId: company.id });
    await grantCredits(t, company.id, 10);
    // A 20-branch `else if` chain over 200 locals (seconds of analysis) with a re-entrant bank,
    // a tx.origin check and a key in a comment after it.
    const archive = await buildArchive(t, {
      companyId: company.id,
      files: { 'contracts/Crowdsale.sol': `${elseIfChain(20, 200)}${TAIL}` },
    });
    const res = await postScan(t, key, localScanBody(archive));
    expect(res.statusCode, res.body).toBe(202);
    const scanId = res.json().id as string;
    const done = await waitForScan(t, key, scanId, isFinal, 120_000);
    expect(done.status).toBe('completed');
    expect(done.analysis).toEqual({
      filesOverBudget: ['contracts/Crowdsale.sol'],
    });

    const auth = { authorization: `Bearer ${key}` };
    const sast = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scanId}/findings`,
      headers: auth,
    });
    expect(sast.statusCode, sast.body).toBe(200);
    const report = sast.json() as {
      scan: { messages?: Array<{ level: string; value: string }> };
      vulnerabilities: Array<{ identifiers: Array<{ value: string }> }>;
    };
    expect(report.scan.messages).toContainEqual({
      level: 'warning',
      value: expect.stringMatching(
        /^contracts\/Crowdsale\.sol: analysis exceeded its budget of 0\.001 s; only the cheap passes/,
      ),
    });
    const rules = report.vulnerabilities.map((v) => v.identifiers[0]!.value);
    expect(rules).toContain('sol.access.tx-origin');
    expect(rules).toContain('secret.eth-private-key');
    expect(rules).not.toContain('sol.reentrancy.state-after-call');

    const sarif = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scanId}/findings?format=sarif`,
      headers: auth,
    });
    expect(sarif.statusCode, sarif.body).toBe(200);
    const notifications = sarif.json().runs[0].invocations[0].toolExecutionNotifications as Array<{
      level: string;
      message: { text: string };
    }>;
    expect(notifications).toContainEqual({
      level: 'warning',
      message: { text: expect.stringMatching(/^contracts\/Crowdsale\.sol: analysis exceeded its budget/) },
    });
  }, 180_000);
});
