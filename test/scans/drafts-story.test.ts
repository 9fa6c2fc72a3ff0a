import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/auth/credentials.ts';
import { signWebhookBody } from '../../src/integrations/sourcehost/github-rest.ts';
import { type FakeGitServer, startFakeGitServer } from '../fakes/git-server.ts';
import { type FakeSourcehostApi, startFakeSourcehostApi } from '../fakes/sourcehost-api-server.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { runVigil } from '../helpers/cli.ts';
import { buildCompanyWorld, buildServiceKey, grantCredits } from '../helpers/factories.ts';
import { waitForScan } from '../helpers/scan-helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The drafts story through the entry points people use: the source host's webhooks (a push to
 * main, then a pull request), the commit statuses the fake host receives, and the `vigil`
 * command line (drafts list/dismiss, scan --baseline) against the running server.
 */

const SECRET = 'whsec-story-secret';
const TOKEN = 'ghs-story-token';

/** main: a re-entrancy in Vault.withdraw (High) and a floating pragma in Token (Info). */
const VAULT = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.20;

contract Vault {
    mapping(address => uint256) public balances;

    function deposit() external payable {
        balances[msg.sender] += msg.value;
    }

    function withdraw() external {
        uint256 amount = balances[msg.sender];
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok, "send failed");
        balances[msg.sender] = 0;
    }
}
`;
const TOKEN_SOL = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Token {
    mapping(address => uint256) public balanceOf;

    function mint() external payable {
        balanceOf[msg.sender] += msg.value;
    }
}
`;
/** The pull request adds one function with the same flaw (line 20). */
const VAULT_WITH_WITHDRAW_TO = VAULT.replace(
  '        balances[msg.sender] = 0;\n    }\n}\n',
  `        balances[msg.sender] = 0;
    }

    function withdrawTo(address payable to) external {
        uint256 amount = balances[msg.sender];
        (bool ok, ) = to.call{value: amount}("");
        require(ok, "send failed");
        balances[msg.sender] = 0;
    }
}
`,
);

let t: TestApp;
let git: FakeGitServer;
let host: FakeSourcehostApi;
let url: string;
let home: string;

beforeAll(async () => {
  git = await startFakeGitServer({ token: TOKEN });
  host = await startFakeSourcehostApi({ token: TOKEN });
  t = await createTestApp({ worker: true, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  home = await mkdtemp(path.join(os.tmpdir(), 'vigil-drafts-story-'));
});

afterAll(async () => {
  await t?.close();
  await git?.close();
  await host?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

/** Runs the real `vigil` binary against the test server with a service key. */
function vigil(args: string[], key: string) {
  return runVigil([...args, '--url', url, '--key', key], { home, timeoutMs: 180_000 });
}

function deliver(integrationId: string, event: string, body: unknown) {
  const raw = Buffer.from(JSON.stringify(body));
  return t.app.inject({
    method: 'POST',
    url: `/api/v0/webhooks/sourcehost/${integrationId}`,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': signWebhookBody(SECRET, raw),
    },
    payload: raw,
  });
}

/** The one commit status the fake host received for `sha`. */
function statusOf(sha: string) {
  return waitFor(
    () => {
      const posted = host.statuses.filter((s) => s.sha === sha);
      return posted.length > 0 && posted;
    },
    { what: `the commit status of ${sha}`, timeoutMs: 90_000, intervalMs: 100 },
  );
}

interface Draft {
  id: string;
  state: string;
  severity: string;
  ruleId: string;
  baselineState?: string | null;
  location: { file: string; startLine: number };
}

describe('drafts through the webhook, the commit status and the command line', () => {
  it('a push scans main, a dismissal holds, a pull request fails on its one new High only', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    await grantCredits(t, company.id, 20);
    const { key } = await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] });
    const manage = (method: 'PUT' | 'GET', path: string, payload?: object) =>
      t.app.inject({
        method,
        url: path,
        headers: { authorization: `Bearer ${manager.token}` },
        ...(payload ? { payload } : {}),
      });
    const read = async <T>(path: string): Promise<T> => {
      const res = await t.app.inject({
        method: 'GET',
        url: path,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as T;
    };
    const integration = await manage('PUT', `/api/v0/companies/${company.id}/integrations/sourcehost`, {
      credentials: { token: TOKEN, webhookSecret: SECRET },
      settings: { baseUrl: git.baseUrl, apiBaseUrl: host.baseUrl },
    });
    expect(integration.statusCode, integration.body).toBeLessThan(300);
    const integrationId = integration.json().id as string;
    const repository = `acme-${randomUUID().slice(0, 8)}/vault`;
    const { commit: mainCommit } = await git.createRepository(repository, {
      'contracts/Vault.sol': VAULT,
      'contracts/Token.sol': TOKEN_SOL,
    });
    const link = await manage(
      'PUT',
      `/api/v0/companies/${company.id}/sourcehost/repositories/${repository}/link`,
      { failOn: 'high' },
    );
    expect(link.statusCode, link.body).toBe(200);

    // A push to main: the webhook starts the scan, the worker completes it, the host gets a status.
    const push = await deliver(integrationId, 'push', {
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after: mainCommit,
      deleted: false,
      repository: { full_name: repository, default_branch: 'main' },
      pusher: { name: 'dev' },
    });
    expect(push.statusCode, push.body).toBe(202);
    expect(push.json()).toMatchObject({ outcome: 'scanned', commit: mainCommit });
    const mainScanId = (push.json().scanIds as string[])[0]!;
    const mainScan = await waitForScan(t, key, mainScanId, (s) => s.status === 'completed', 90_000);
    const [mainStatus] = await statusOf(mainCommit);
    expect(mainStatus).toMatchObject({
      repository,
      state: 'failure',
      context: 'vigil/scan',
      description: '2 new (1 High, 1 Info)',
    });

    // The command line lists main's drafts and dismisses the Token's.
    const listed = await vigil(['drafts', 'list', '--scan', mainScanId, '--json'], key);
    expect(listed.code, listed.stderr).toBe(0);
    const mainDrafts = JSON.parse(listed.stdout) as Draft[];
    expect(mainDrafts.map((d) => [d.location.file, d.severity, d.baselineState]).sort()).toEqual([
      ['contracts/Token.sol', 'informational', 'new'],
      ['contracts/Vault.sol', 'high', 'new'],
    ]);
    const pragma = mainDrafts.find((d) => d.location.file === 'contracts/Token.sol')!;
    const withdraw = mainDrafts.find((d) => d.location.file === 'contracts/Vault.sol')!;
    const dismissed = await vigil(
      ['drafts', 'dismiss', pragma.id, '--reason', 'wont_fix', '--comment', 'pinned at release'],
      key,
    );
    expect(dismissed.code, dismissed.stderr).toBe(0);
    expect(dismissed.stdout).toMatch(new RegExp(`${pragma.id}\\s+dismissed`));

    // A pull request adds withdrawTo, with the same flaw.
    const { commit: prCommit } = await git.addCommit(repository, {
      files: { 'contracts/Vault.sol': VAULT_WITH_WITHDRAW_TO },
    });
    const opened = await deliver(integrationId, 'pull_request', {
      action: 'opened',
      number: 12,
      pull_request: { head: { sha: prCommit, ref: 'feature/withdraw-to' }, base: { ref: 'main' } },
      repository: { full_name: repository, default_branch: 'main' },
    });
    expect(opened.statusCode, opened.body).toBe(202);
    expect(opened.json()).toMatchObject({ outcome: 'scanned', commit: prCommit });
    const prScanId = (opened.json().scanIds as string[])[0]!;
    const prScan = await waitForScan(t, key, prScanId, (s) => s.status === 'completed', 90_000);
    expect(prScan.workspaceId).toBe(mainScan.workspaceId);

    // Compared with main's latest completed scan: one new High, and the status fails on it alone.
    const posted = await statusOf(prCommit);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({
      repository,
      state: 'failure',
      context: 'vigil/scan',
      description: '1 new (1 High)',
    });
    expect(posted[0]!.target_url).toContain(`/scans/${prScanId}/findings`);
    const comparison = await read<Record<string, unknown>>(`/api/scanner/v1/scans/${prScanId}/comparison`);
    expect(comparison).toMatchObject({
      baselineScanId: mainScanId,
      pullRequest: true,
      new: 1,
      unchanged: 2,
      fixed: 0,
      dismissed: 1,
      summary: '1 new (1 High)',
    });
    const prDrafts = (await read<{ items: Draft[] }>(`/api/scanner/v1/scans/${prScanId}/drafts?limit=100`))
      .items;
    const fresh = prDrafts.filter((d) => d.baselineState === 'new');
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).toMatchObject({
      severity: 'high',
      state: 'open',
      location: { file: 'contracts/Vault.sol', startLine: 20 },
    });
    // The dismissed draft stays dismissed: in the pull request's scan and in the workspace.
    expect(prDrafts.find((d) => d.id === pragma.id)).toMatchObject({
      state: 'dismissed',
      baselineState: 'unchanged',
    });
    expect(prDrafts.find((d) => d.id === withdraw.id)).toMatchObject({
      state: 'open',
      baselineState: 'unchanged',
    });
    const workspaceDrafts = await vigil(
      ['drafts', 'list', '--workspace', mainScan.workspaceId, '--state', 'dismissed', '--json'],
      key,
    );
    expect(workspaceDrafts.code, workspaceDrafts.stderr).toBe(0);
    expect((JSON.parse(workspaceDrafts.stdout) as Draft[]).map((d) => d.id)).toEqual([pragma.id]);

    /** `vigil scan` of the repository at `commit` against main's latest scan, failing on a new High. */
    const gateAt = (commit: string) =>
      vigil(
        [
          'scan',
          '--repo',
          repository,
          '--commit',
          commit,
          '--baseline',
          'main',
          '--fail-on',
          'high',
          '--format',
          'json',
        ],
        key,
      );
    // CI on the pull request's tree: exit 1, the new finding first.
    const gate = await gateAt(prCommit);
    expect(gate.code, gate.stderr).toBe(1);
    expect(gate.stderr).toContain(`1 new (1 High) (against scan ${mainScanId})`);
    expect(gate.stderr).toMatch(/\d+ findings; 1 new at or above High/);
    const listedLines = gate.stderr.split('\n').filter((l) => l.startsWith('  '));
    expect(listedLines[0]).toMatch(/^ {2}new High: .+ \(contracts\/Vault\.sol:20\)$/);
    expect(gate.stderr).not.toContain('contracts/Vault.sol:13)');
    const report = JSON.parse(gate.stdout) as {
      vulnerabilities: Array<{
        severity: string;
        baseline_state?: string;
        triage_state?: string;
        location: { file: string };
      }>;
    };
    expect(report.vulnerabilities.filter((v) => v.baseline_state === 'new')).toEqual([
      expect.objectContaining({
        severity: 'High',
        location: expect.objectContaining({ file: 'contracts/Vault.sol' }),
      }),
    ]);

    // main's own tree against main: its High is known, not new, so --fail-on high passes.
    const known = await gateAt(mainCommit);
    expect(known.code, known.stderr).toBe(0);
    expect(known.stderr).toContain(`no new findings (against scan ${mainScanId})`);
    expect(known.stderr).toMatch(/\d+ findings; 0 new at or above High/);
    expect(
      (JSON.parse(known.stdout) as { vulnerabilities: Array<{ severity: string }> }).vulnerabilities.some(
        (v) => v.severity === 'High',
      ),
    ).toBe(true);
    // Pull-request scans never move the workspace's drafts: the dismissal and main's open High hold.
    const after = (
      await read<{ items: Draft[] }>(`/api/scanner/v1/workspaces/${mainScan.workspaceId}/drafts?limit=100`)
    ).items;
    expect(after.find((d) => d.id === pragma.id)?.state).toBe('dismissed');
    expect(after.find((d) => d.id === withdraw.id)?.state).toBe('open');
  }, 300_000);
});
