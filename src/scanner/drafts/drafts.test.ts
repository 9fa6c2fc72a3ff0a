import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import {
  buildArchive,
  buildCompanyWorld,
  buildRepository,
  buildScannerFinding,
  buildServiceKey,
  grantCredits,
} from '../../../test/helpers/factories.ts';
import { localScanBody, postScan, REENTRANT_BANK, waitForScan } from '../../../test/helpers/scan-helpers.ts';
import { signInToConsole } from '../../../test/security/access-world.ts';
import { SCOPES } from '../../auth/credentials.ts';
import { commitStatusOf } from '../../platform/sourcehost/sourcehost.service.ts';

const t = sharedTestApp({ worker: true });

const bank = (name: string) => REENTRANT_BANK.replace('contract Bank', `contract ${name}`);
const FIXED_VAULT = `pragma solidity ^0.8.0;

contract Vault {
    mapping(address => uint256) public balances;

    function deposit() public payable {
        balances[msg.sender] += msg.value;
    }
}
`;
/** The same Bank with 20 lines of comments above its withdraw: the code moved. */
const MOVED_BANK = REENTRANT_BANK.replace(
  '    function withdraw()',
  `${Array.from({ length: 20 }, (_, i) => `    // note ${i}`).join('\n')}\n    function withdraw()`,
);

interface Draft {
  id: string;
  state: string;
  severity: string;
  baselineState?: string | null;
  location: { file: string; startLine: number };
}

describe('draft triage: the story of two scans and a pull request', () => {
  it('dismisses, publishes, follows drafts across scans, and gates a pull request on new findings only', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const { key } = await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] });
    const { key: readKey } = await buildServiceKey(t, {
      companyId: company.id,
      scopes: SCOPES.filter((s) => s !== 'findings:write'),
    });
    await grantCredits(t, company.id, 100);
    const repository = await buildRepository(t, { companyId: company.id });
    const api = async (method: 'GET' | 'POST', url: string, payload?: object, auth = key) => {
      const res = await t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${auth}` },
        ...(payload ? { payload } : {}),
      });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> & { items: Draft[] } };
    };
    const scan = async (
      files: Record<string, string>,
      workspaceId: string | undefined,
      extra: Record<string, unknown>,
    ) => {
      const archive = await buildArchive(t, {
        companyId: company.id,
        files,
        ...(workspaceId ? { workspaceId } : {}),
      });
      const res = await postScan(t, key, localScanBody(archive, extra));
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      const done = await waitForScan(
        t,
        key,
        id,
        (s) => s.status === 'completed' || s.status === 'failed',
        60_000,
      );
      expect(done.status).toBe('completed');
      return { id, workspaceId: archive.workspaceId };
    };
    const drafts = async (scanId: string, query = '') =>
      (await api('GET', `/api/scanner/v1/scans/${scanId}/drafts?limit=100${query}`)).body.items;
    const byFile = (items: Draft[], file: string) => items.filter((d) => d.location.file === file);

    // Scan 1: three bugs, one per contract.
    const commit1 = 'a'.repeat(40);
    const s1 = await scan(
      {
        'contracts/Bank.sol': REENTRANT_BANK,
        'contracts/Vault.sol': bank('Vault'),
        'contracts/Pool.sol': bank('Pool'),
      },
      undefined,
      { branch: 'main', commit: commit1 },
    );
    const first = await drafts(s1.id);
    for (const file of ['contracts/Bank.sol', 'contracts/Vault.sol', 'contracts/Pool.sol'])
      expect(byFile(first, file).length, file).toBeGreaterThan(0);
    expect(first.every((d) => d.baselineState === 'new' && d.state === 'open')).toBe(true);

    // A key without findings:write may not triage; dismissal needs a reason.
    const pool = byFile(first, 'contracts/Pool.sol').map((d) => d.id);
    expect(
      (
        await api(
          'POST',
          '/api/scanner/v1/drafts/triage',
          { draftIds: pool, action: 'dismiss', reason: 'used_in_tests' },
          readKey,
        )
      ).status,
    ).toBe(403);
    expect(
      (await api('POST', '/api/scanner/v1/drafts/triage', { draftIds: pool, action: 'dismiss' })).status,
    ).toBe(400);
    const dismissed = await api('POST', '/api/scanner/v1/drafts/triage', {
      draftIds: pool,
      action: 'dismiss',
      reason: 'used_in_tests',
      comment: 'test double',
    });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body.items.every((d) => d.state === 'dismissed')).toBe(true);

    // Publish one Bank draft: a service key may not; a manager's console session may, once, even racing.
    const bankDraft = byFile(first, 'contracts/Bank.sol').sort((a, b) =>
      a.severity.localeCompare(b.severity),
    )[0]!;
    const publishBody = {
      repositoryId: repository.id,
      drafts: [{ draftId: bankDraft.id, severity: 'high' }],
    };
    expect((await api('POST', '/api/scanner/v1/drafts/publish', publishBody)).status).toBe(403);
    const session = await signInToConsole(t, manager.token);
    const publish = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/scanner/v1/drafts/publish',
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'x-vigil-company': company.id },
        payload: publishBody,
      });
    const [p1, p2] = await Promise.all([publish(), publish()]);
    expect(p1.statusCode, p1.body).toBe(200);
    expect(p2.statusCode, p2.body).toBe(200);
    const results = [p1.json().items[0], p2.json().items[0]];
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
    expect(results[0].findingId).toBe(results[1].findingId);
    const findingId = results[0].findingId as string;
    const finding = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${findingId}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(finding.statusCode, finding.body).toBe(200);
    expect(finding.json().relatedFiles[0].path).toBe('contracts/Bank.sol');
    expect(finding.json().description).toContain(s1.id);

    // Scan 2 of main: Vault fixed, Bank moved by 20 lines, a new bug in Safe.
    const commit2 = 'b'.repeat(40);
    const s2 = await scan(
      {
        'contracts/Bank.sol': MOVED_BANK,
        'contracts/Vault.sol': FIXED_VAULT,
        'contracts/Pool.sol': bank('Pool'),
        'contracts/Safe.sol': bank('Safe'),
      },
      s1.workspaceId,
      { branch: 'main', commit: commit2 },
    );
    const second = await drafts(s2.id);
    const comparison = (await api('GET', `/api/scanner/v1/scans/${s2.id}/comparison`)).body;
    expect(comparison.baselineScanId).toBe(s1.id);
    const safe = byFile(second, 'contracts/Safe.sol');
    expect(safe.length).toBeGreaterThan(0);
    expect(safe.every((d) => d.baselineState === 'new')).toBe(true);
    // New: the new bug's drafts (and whatever the rewritten Vault itself brings), never Bank or Pool.
    const fresh = second.filter((d) => d.baselineState === 'new');
    expect(comparison.new).toBe(fresh.length);
    expect(fresh.every((d) => ['contracts/Safe.sol', 'contracts/Vault.sol'].includes(d.location.file))).toBe(
      true,
    );
    expect(comparison.fixed).toBe(byFile(first, 'contracts/Vault.sol').length);
    const movedBank = byFile(second, 'contracts/Bank.sol');
    expect(movedBank.map((d) => d.id).sort()).toEqual(
      byFile(first, 'contracts/Bank.sol')
        .map((d) => d.id)
        .sort(),
    );
    expect(movedBank.every((d) => d.baselineState === 'unchanged')).toBe(true);
    expect(movedBank.find((d) => d.id === bankDraft.id)!.location.startLine).toBeGreaterThan(
      bankDraft.location.startLine + 19,
    );
    expect(byFile(second, 'contracts/Pool.sol').every((d) => d.state === 'dismissed')).toBe(true);
    const fixedList = await drafts(s2.id, '&baselineState=fixed');
    expect(fixedList.every((d) => d.location.file === 'contracts/Vault.sol' && d.state === 'fixed')).toBe(
      true,
    );
    expect(comparison.summary).toMatch(/^\d+ new \(.*\) · \d+ fixed$/);

    // The published finding's timeline says "not reproduced"? No: Bank is still present.
    const timeline = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${findingId}/scan-timeline`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(timeline.statusCode, timeline.body).toBe(200);
    const events = timeline.json().events as Array<{ kind: string; text: string }>;
    expect(events.map((e) => e.kind)).toEqual(['published', 'present']);
    expect(events[1]!.text).toContain(`Still present in scan ${s2.id} at commit ${commit2.slice(0, 12)}`);

    // Scan 3 of main fixes Bank: the published finding is not reproduced, its status unchanged.
    const commit3 = 'c'.repeat(40);
    const s3 = await scan(
      {
        'contracts/Bank.sol': FIXED_VAULT.replace('Vault', 'Bank'),
        'contracts/Pool.sol': bank('Pool'),
        'contracts/Safe.sol': bank('Safe'),
      },
      s1.workspaceId,
      { branch: 'main', commit: commit3 },
    );
    const afterFix = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${findingId}/scan-timeline`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    const last = (afterFix.json().events as Array<{ kind: string; text: string }>).at(-1)!;
    expect(last.kind).toBe('not_reproduced');
    expect(last.text).toBe(`Not reproduced since scan ${s3.id} at commit ${commit3.slice(0, 12)}`);
    const status = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${findingId}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(status.json().status).toBe('new');

    // A pull request against main with one more new bug: only that one counts for its gate.
    const pr = await scan(
      {
        'contracts/Bank.sol': FIXED_VAULT.replace('Vault', 'Bank'),
        'contracts/Pool.sol': bank('Pool'),
        'contracts/Safe.sol': bank('Safe'),
        'contracts/Extra.sol': bank('Extra'),
      },
      s1.workspaceId,
      { branch: 'feature', commit: 'd'.repeat(40), pullRequest: true, baselineBranch: 'main' },
    );
    const prComparison = (await api('GET', `/api/scanner/v1/scans/${pr.id}/comparison`)).body as unknown as {
      baselineScanId: string;
      new: number;
      newBySeverity: Record<string, number>;
    };
    expect(prComparison.baselineScanId).toBe(s3.id);
    const extra = byFile(await drafts(pr.id), 'contracts/Extra.sol');
    expect(prComparison.new).toBe(extra.length);
    expect(
      (await drafts(pr.id))
        .filter((d) => d.baselineState !== 'unchanged')
        .every((d) => d.location.file === 'contracts/Extra.sol'),
    ).toBe(true);
    const gate = commitStatusOf({
      status: 'completed',
      failOn: 'high',
      counts: Object.entries(prComparison.newBySeverity).map(([severity, count]) => ({ severity, count })),
      fixed: 0,
    });
    expect(gate.state).toBe(
      extra.some((d) => ['high', 'critical'].includes(d.severity)) ? 'failure' : 'success',
    );
    // A pull request never moves the workspace's drafts: Safe stays open, Extra's drafts are new ones.
    const workspace = (
      await api('GET', `/api/scanner/v1/workspaces/${s1.workspaceId}/drafts?state=fixed&limit=100`)
    ).body.items;
    expect(workspace.some((d) => d.location.file === 'contracts/Safe.sol')).toBe(false);
  }, 240_000);
});

describe('publishing with a user token and X-Vigil-Company', () => {
  it('acts as the token’s user for the named company, as a console session does', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const other = await buildCompanyWorld(t);
    const { key } = await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] });
    const repository = await buildRepository(t, { companyId: company.id });
    const draft = await buildScannerFinding(t, {
      companyId: company.id,
      triageState: 'open',
      severity: 'high',
      ruleId: 'reentrancy-eth',
    });
    const publish = (credential: string, companyId?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/scanner/v1/drafts/publish',
        headers: {
          authorization: `Bearer ${credential}`,
          ...(companyId === undefined ? {} : { 'x-vigil-company': companyId }),
        },
        payload: { repositoryId: repository.id, drafts: [{ draftId: draft.id }] },
      });

    // Without the header a user token is no credential of the scanner API; the answer says why.
    const bare = await publish(manager.token);
    expect(bare.statusCode, bare.body).toBe(401);
    expect(bare.json().error).toMatch(/x-vigil-company/i);
    const empty = await publish(manager.token, '');
    expect(empty.statusCode, empty.body).toBe(401);
    expect(empty.json().error).toMatch(/x-vigil-company/i);
    // With the header, the token is checked as a user token.
    const unknown = await publish(`vgl_u_${'Z'.repeat(40)}`, company.id);
    expect(unknown.statusCode, unknown.body).toBe(401);
    expect(unknown.json()).toMatchObject({ code: 'INVALID_CREDENTIAL', error: 'Unknown token.' });
    // Another company's users, and a company the user is not in: 404, as for every resource.
    expect((await publish(other.manager.token, company.id)).statusCode).toBe(404);
    expect((await publish(manager.token, other.company.id)).statusCode).toBe(404);
    // Service keys never publish, header or not; a member needs a manager's leave.
    expect((await publish(key)).statusCode).toBe(403);
    expect((await publish(key, company.id)).statusCode).toBe(403);
    const refused = await publish(member.token, company.id);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().code).toBe('FORBIDDEN');

    const first = await publish(manager.token, company.id);
    expect(first.statusCode, first.body).toBe(200);
    const [published] = first.json().items as Array<{
      draftId: string;
      findingId: string;
      repositoryId: string;
      number: number;
      created: boolean;
    }>;
    expect(published).toMatchObject({ draftId: draft.id, repositoryId: repository.id, created: true });
    const again = await publish(manager.token, company.id);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().items).toEqual([{ ...published, created: false }]);

    const finding = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${published!.findingId}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(finding.statusCode, finding.body).toBe(200);
    expect(finding.json()).toMatchObject({
      number: published!.number,
      severity: 'high',
      title: draft.title,
      createdBy: { userId: manager.id },
    });
    const audit = await t.app.inject({
      method: 'GET',
      url: `/api/v0/companies/${company.id}/audit-log?actions=draft_published`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json().items).toEqual([
      expect.objectContaining({
        action: 'draft_published',
        createdBy: expect.objectContaining({ userId: manager.id, username: manager.username }),
        details: expect.objectContaining({ draftId: draft.id, findingId: published!.findingId }),
      }),
    ]);

    // A member a manager allows publishes, as the author of the finding.
    const settings = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company.id}/draft-settings`,
      headers: { authorization: `Bearer ${manager.token}` },
      payload: { triagerUserIds: [member.id], autoMarkFixed: false },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    const second = await buildScannerFinding(t, { companyId: company.id, triageState: 'open' });
    const byMember = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/drafts/publish',
      headers: { authorization: `Bearer ${member.token}`, 'x-vigil-company': company.id },
      payload: { repositoryId: repository.id, drafts: [{ draftId: second.id, severity: 'low' }] },
    });
    expect(byMember.statusCode, byMember.body).toBe(200);
    const memberFinding = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${byMember.json().items[0].findingId}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(memberFinding.json()).toMatchObject({ severity: 'low', createdBy: { userId: member.id } });
  });
});
