import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { runVigil } from '../../test/helpers/cli.ts';
import {
  buildCompany,
  buildCompanyWorld,
  buildRepository,
  buildScannerFinding,
  buildServiceKey,
  buildUser,
} from '../../test/helpers/factories.ts';
import { companyMembers } from '../db/schema/index.ts';

let url: string;
let home: string;

/** Runs the real `vigil` binary against the test server, in the test's home folder. */
function vigil(args: string[], env: Record<string, string> = {}) {
  return runVigil(args, { home, env: { VIGIL_URL: url, ...env } });
}

const STACK_LINE = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

const t = sharedTestApp();
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  home = await mkdtemp(path.join(os.tmpdir(), 'vigil-cli-drafts-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

interface Published {
  draftId: string;
  findingId: string;
  repositoryId: string;
  number: number;
  created: boolean;
}

describe('vigil drafts publish', () => {
  it('publishes drafts as the token’s user, once, into the repository', async () => {
    const { company, manager, member } = await buildCompanyWorld(t);
    const repository = await buildRepository(t, { companyId: company.id });
    const draft = (title: string) =>
      buildScannerFinding(t, { companyId: company.id, triageState: 'open', severity: 'high', title });
    const [first, second] = await Promise.all([draft('Reentrancy in Bank'), draft('Reentrancy in Pool')]);
    const args = ['drafts', 'publish', first.id, second.id, '--repository', repository.id];

    const published = await vigil([...args, '--severity', 'medium'], { VIGIL_TOKEN: manager.token });
    expect(published.code, published.stderr).toBe(0);
    const lines = published.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^draft\s+finding\s+findingId\s+result$/);
    expect(lines).toHaveLength(4);
    for (const [i, d] of [first, second].entries())
      expect(lines[i + 2]).toMatch(new RegExp(`^${d.id}\\s+#\\d+\\s+[0-9a-f-]{36}\\s+created$`));

    const again = await vigil([...args, '--json'], { VIGIL_TOKEN: manager.token });
    expect(again.code, again.stderr).toBe(0);
    const items = JSON.parse(again.stdout) as Published[];
    expect(items.map((p) => [p.draftId, p.repositoryId, p.created])).toEqual([
      [first.id, repository.id, false],
      [second.id, repository.id, false],
    ]);
    for (const [i, p] of items.entries()) {
      expect(lines[i + 2]).toContain(`#${p.number}`);
      expect(lines[i + 2]).toContain(p.findingId);
      const finding = await t.app.inject({
        method: 'GET',
        url: `/api/v0/repositories/${repository.id}/findings/${p.findingId}`,
        headers: { authorization: `Bearer ${manager.token}` },
      });
      expect(finding.statusCode, finding.body).toBe(200);
      expect(finding.json()).toMatchObject({
        number: p.number,
        title: [first, second][i]!.title,
        severity: 'medium',
        createdBy: { userId: manager.id },
      });
    }

    // Without --severity each draft keeps its own; the token may come from "vigil login".
    const third = await draft('Reentrancy in Safe');
    const login = await vigil(['login', '--url', url, '--token', manager.token]);
    expect(login.code, login.stderr).toBe(0);
    const fromLogin = await vigil(['drafts', 'publish', third.id, '--repository', repository.id, '--json']);
    expect(fromLogin.code, fromLogin.stderr).toBe(0);
    const [own] = JSON.parse(fromLogin.stdout) as Published[];
    expect(own).toMatchObject({ draftId: third.id, created: true });
    const ownFinding = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${repository.id}/findings/${own!.findingId}`,
      headers: { authorization: `Bearer ${manager.token}` },
    });
    expect(ownFinding.json()).toMatchObject({ severity: 'high', createdBy: { userId: manager.id } });
    await rm(path.join(home, 'config'), { recursive: true, force: true });

    // A member a manager has not allowed: the API's refusal and what to do, no stack trace.
    const fourth = await draft('Reentrancy in Vault');
    const refused = await vigil(['drafts', 'publish', fourth.id, '--repository', repository.id], {
      VIGIL_TOKEN: member.token,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^vigil: Publishing failed \(403\): Only company managers, and the members a manager allows, publish drafts.*\. Ask a company manager to publish, or to allow you/,
    );
    expect(refused.stderr).not.toMatch(STACK_LINE);
  }, 120_000);

  it('asks for a user token, and for --company when the user is in several', async () => {
    const { company, manager } = await buildCompanyWorld(t);
    const elsewhere = await buildCompany(t);
    const twoCompanies = await buildUser(t, { companyId: company.id, companyRole: 'manager' });
    await t.container.database.db
      .insert(companyMembers)
      .values({ companyId: elsewhere.id, userId: twoCompanies.id, role: 'manager', joinedAt: new Date() });
    const repository = await buildRepository(t, { companyId: company.id });
    const draft = await buildScannerFinding(t, { companyId: company.id, triageState: 'open' });
    const args = ['drafts', 'publish', draft.id, '--repository', repository.id];

    const none = await vigil(args);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      /Publishing needs a user token \(it acts as a person\): .*vigil login --token vgl_u_…/,
    );
    expect(none.stderr).not.toMatch(STACK_LINE);

    const { key } = await buildServiceKey(t, { companyId: company.id });
    const withKey = await vigil(args, { VIGIL_TOKEN: key });
    expect(withKey.code).toBe(2);
    expect(withKey.stderr).toMatch(/Publishing needs a user token \(vgl_u_…\), not a service key/);

    const ambiguous = await vigil(args, { VIGIL_TOKEN: twoCompanies.token });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`belongs to 2 companies; pass --company with one of:`);
    expect(ambiguous.stderr).toContain(company.id);
    expect(ambiguous.stderr).toContain(elsewhere.id);

    const wrongCompany = await vigil([...args, '--company', elsewhere.id], {
      VIGIL_TOKEN: twoCompanies.token,
    });
    expect(wrongCompany.code).toBe(1);
    expect(wrongCompany.stderr).toMatch(
      /Publishing failed \(404\): Repository not found.*Check the draft ids, --repository and --company/,
    );

    const chosen = await vigil([...args, '--company', company.id, '--json'], {
      VIGIL_TOKEN: twoCompanies.token,
    });
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(JSON.parse(chosen.stdout)).toEqual([
      expect.objectContaining({ draftId: draft.id, created: true }),
    ]);

    const badSeverity = await vigil([...args, '--severity', 'severe'], { VIGIL_TOKEN: manager.token });
    expect(badSeverity.code).toBe(2);
    expect(badSeverity.stderr).toMatch(/--severity must be one of critical, high, medium, low/);
  }, 120_000);
});
