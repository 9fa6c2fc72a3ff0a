import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetGroups, repositories } from '../../src/db/schema/index.ts';
import { apiOk, createTestApp, type TestApp } from '../helpers/app.ts';
import { buildFinding, buildRepositoryTeam, buildUser, type TestUser } from '../helpers/factories.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/jobs.test.ts skipped: ${skipReason}`);

/** The PDF's /Title from its metadata: a literal string, or UTF-16BE hex with a byte-order mark. */
function pdfTitle(pdf: Buffer): string | null {
  const text = pdf.toString('latin1');
  const hex = /\/Title\s*<FEFF([0-9A-Fa-f]*)>/.exec(text);
  if (hex) return Buffer.from(hex[1]!, 'hex').swap16().toString('utf16le');
  const literal = /\/Title\s*\(((?:\\.|[^\\)])*)\)/.exec(text);
  if (!literal) return null;
  const raw = literal[1]!.replace(/\\([()\\])/g, '$1');
  // A literal may itself hold UTF-16BE with a byte-order mark.
  if (raw.startsWith('\u00fe\u00ff')) return Buffer.from(raw.slice(2), 'latin1').swap16().toString('utf16le');
  return raw;
}

describe.skipIf(skipReason !== null)('the console’s jobs in Chromium: filing, reports, printing', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;
  let shots: string;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let manager: TestUser;
  let groupId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t, {
      name: 'vault-audit',
      allowedSeverities: ['critical', 'high', 'medium', 'low'],
    });
    manager = await buildUser(t, {
      companyId: team.company.id,
      companyRole: 'manager',
      name: 'Mona Manager',
    });
    const [group] = await t.container.database.db
      .insert(assetGroups)
      .values({ repositoryId: team.repository.id, name: 'Core contracts', description: 'Vault and token' })
      .returning();
    groupId = group!.id;
    browser = await launchChromium();
    shots = await screenshotDir();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(token: string, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${url}/app/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
    return { context, page };
  }

  async function check(page: Page, name: string): Promise<void> {
    await page.waitForLoadState('networkidle');
    await page.waitForSelector('[role=status]:has-text("Loading")', { state: 'detached' });
    const violations = await seriousViolations(page);
    expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  }

  it('a reviewer files a finding: allowed severities, Markdown preview, files and lines, asset group', async () => {
    const { context, page } = await signedIn(team.reviewer.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}`);
    await page.click('a:text-is("File a finding")');
    await page.waitForSelector('h1:text-is("File a finding")');
    const severities = await page.$$eval('select[name=severity] option', (os) =>
      os.map((o) => (o as unknown as { value: string }).value).filter(Boolean),
    );
    expect(severities).toEqual(['critical', 'high', 'medium', 'low']);
    await page.fill('input[name=title]', 'Reentrancy in Vault.withdraw drains the vault');
    await page.selectOption('select[name=severity]', 'high');
    await page.selectOption('select[name=assetGroup]', groupId);
    const description =
      'The **withdraw** function sends ether before it zeroes the balance.\n\n- call\n- update';
    await page.fill('textarea[name=description]', description);
    await page.click('[role=tab]:text-is("Preview")');
    const preview = await page.waitForSelector('[data-testid=markdown-preview]:visible');
    expect(await preview.textContent()).toContain('withdraw');
    expect(await page.isVisible('textarea[name=description]')).toBe(false);
    await page.click('[role=tab]:text-is("Write")');
    await page.click('button:text-is("Add a file")');
    await page.fill('input[name=path-0]', 'contracts/Vault.sol');
    await page.fill('input[name=start-0]', '18');
    await page.fill('input[name=end-0]', '22');
    await page.fill('textarea[name=content-0]', '(bool ok, ) = msg.sender.call{value: amount}("");');
    await check(page, 'new-finding');
    await page.click('button:text-is("File the finding")');
    await page.waitForURL(/\/app\/repositories\/[^/]+\/findings\/1$/);
    await page.waitForSelector('h1:has-text("Reentrancy in Vault.withdraw")');

    const filed = await apiOk<{
      title: string;
      description: string;
      severity: string;
      assetGroup: { id: string } | null;
      relatedFiles: Array<{
        path: string;
        lines: { start: number; end: number };
        language: string;
        relevantContent: string;
      }>;
      createdBy: { username: string };
    }>(t, 'GET', `/api/v0/repositories/${team.repository.id}/findings/1`, team.reviewer.token);
    expect(filed.severity).toBe('high');
    expect(filed.description).toBe(description);
    expect(filed.assetGroup?.id).toBe(groupId);
    expect(filed.createdBy.username).toBe(team.reviewer.username);
    expect(filed.relatedFiles).toEqual([
      expect.objectContaining({
        path: 'contracts/Vault.sol',
        lines: { start: 18, end: 22 },
        language: 'solidity',
        relevantContent: '(bool ok, ) = msg.sender.call{value: amount}("");',
      }),
    ]);
    await context.close();
  });

  it('refuses the form to those who may not file, and a backwards line range before sending it', async () => {
    const client = await signedIn(team.client.token);
    await client.page.goto(`${url}/app/repositories/${team.repository.id}`);
    await client.page.waitForSelector(`h1:text-is("${team.repository.name}")`);
    expect(await client.page.isVisible('a:text-is("File a finding")')).toBe(false);
    await client.page.goto(`${url}/app/repositories/${team.repository.id}/findings/new`);
    await client.page.waitForSelector('.notice:has-text("Only the repository’s reviewers")');
    expect(await client.page.isVisible('form')).toBe(false);
    await client.context.close();

    const { context, page } = await signedIn(team.reviewer.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}/findings/new`);
    await page.fill('input[name=title]', 'Backwards lines');
    await page.selectOption('select[name=severity]', 'low');
    await page.click('button:text-is("Add a file")');
    await page.fill('input[name=path-0]', 'contracts/Token.sol');
    await page.fill('input[name=start-0]', '30');
    await page.fill('input[name=end-0]', '10');
    await page.click('button:text-is("File the finding")');
    const alert = await page.waitForSelector('[role=alert]');
    expect(await alert.textContent()).toContain('the last line comes before the first');
    expect(page.url()).toMatch(/findings\/new$/);
    await context.close();
  });

  it('a company manager builds a report: chooses findings, previews the draft, publishes it public; it prints to PDF', async () => {
    const base = { repositoryId: team.repository.id };
    const critical = await buildFinding(t, {
      ...base,
      title: 'Oracle price can be moved in one block',
      severity: 'critical',
      status: 'confirmed',
      createdBy: team.reviewer.id,
    });
    const fixed = await buildFinding(t, {
      ...base,
      title: 'Unchecked transfer return value',
      severity: 'medium',
      status: 'fixed',
      createdBy: team.reviewer.id,
    });
    const dropped = await buildFinding(t, {
      ...base,
      title: 'Missing event on owner change',
      severity: 'low',
      status: 'acknowledged',
    });
    await buildFinding(t, { ...base, title: 'Rejected noise', severity: 'low', status: 'rejected' });
    await t.container.database.db
      .update(repositories)
      .set({ finishedAt: new Date() })
      .where(eq(repositories.id, team.repository.id));

    const { context, page } = await signedIn(manager.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}`);
    await page.click('a:text-is("Make the report")');
    await page.waitForSelector('h1:has-text("New report of vault-audit")');
    await page.waitForSelector(`input[name=finding][value="${dropped.id}"]`);
    const offered = await page.$$eval('input[name=finding]', (inputs) =>
      inputs.map((i) => (i as unknown as { value: string }).value),
    );
    // The reportable findings only (the filed one is new, the rejected one is not valid).
    expect(offered.sort()).toEqual([critical.id, fixed.id, dropped.id].sort());
    await page.uncheck(`input[name=finding][value="${dropped.id}"]`);
    await page.fill('input[name=projectTitle]', 'Vault audit, November');
    await page.fill('textarea[name=description]', 'Two findings **matter**; one is fixed.');
    await page.click('button:text-is("Preview the report")');
    await page.waitForSelector('.report-preview h1:text-is("Vault audit, November")');
    const previewText = (await page.textContent('.report-preview')) ?? '';
    expect(previewText).toContain('Oracle price can be moved in one block');
    expect(previewText).toContain('Unchecked transfer return value');
    expect(previewText).not.toContain('Missing event on owner change');
    expect(previewText).toContain('draft');
    await check(page, 'report-builder');

    // The draft is private and unpublished: not visible to anonymous callers yet.
    const draftId = (
      await apiOk<{ reports: Array<{ id: string; projectTitle: string }> }>(
        t,
        'GET',
        '/api/v0/reports',
        manager.token,
      )
    ).reports.find((r) => r.projectTitle === 'Vault audit, November')!.id;
    expect((await t.app.inject({ method: 'GET', url: `/api/v0/reports/${draftId}` })).statusCode).toBe(404);

    await page.check('input[name=visibility] >> nth=1');
    await page.click('button:text-is("Publish the report")');
    await page.waitForURL(`${url}/app/reports/${draftId}`);
    await page.waitForSelector('h1:text-is("Vault audit, November")');
    const published = await t.app.inject({ method: 'GET', url: `/api/v0/reports/${draftId}` });
    expect(published.statusCode).toBe(200);
    const body = published.json() as {
      isPrivate: boolean;
      publishedAt: string | null;
      findings: Array<{ id: string }>;
    };
    expect(body.isPrivate).toBe(false);
    expect(body.publishedAt).not.toBeNull();
    expect(body.findings.map((f) => f.id)).toEqual([critical.id, fixed.id]);

    // Printing: the print stylesheet hides the navigation and the controls, and the PDF carries the title.
    await expect.poll(() => page.title()).toBe('Vault audit, November · Vigil');
    expect(await page.isVisible('header.top')).toBe(true);
    await page.emulateMedia({ media: 'print' });
    expect(await page.isVisible('header.top')).toBe(false);
    expect(await page.isVisible('button:text-is("Print or save as PDF")')).toBe(false);
    expect(await page.isVisible('h1:text-is("Vault audit, November")')).toBe(true);
    await page.screenshot({ path: path.join(shots, 'report-print.png'), fullPage: true });
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.length).toBeGreaterThan(5000);
    expect(pdfTitle(pdf)).toBe('Vault audit, November · Vigil');
    await page.emulateMedia({ media: 'screen' });
    expect(await page.isVisible('header.top')).toBe(true);
    await context.close();
  });

  it('a repository admin who is no company user builds a report from the reports page, previews it, publishes it private', async () => {
    const own = await buildRepositoryTeam(t, {
      name: 'treasury-audit',
      allowedSeverities: ['high', 'low'],
      finishedAt: new Date(),
    });
    const base = { repositoryId: own.repository.id, createdBy: own.reviewer.id };
    const kept = await buildFinding(t, {
      ...base,
      title: 'Withdrawal limit bypassed by batching',
      severity: 'high',
      status: 'confirmed',
    });
    const left = await buildFinding(t, {
      ...base,
      title: 'Stale comment in Treasury.sol',
      severity: 'low',
      status: 'acknowledged',
    });

    // The reviewer is offered no builder, on the repository page or the reports page.
    const reviewer = await signedIn(own.reviewer.token);
    await reviewer.page.goto(`${url}/app/repositories/${own.repository.id}`);
    await reviewer.page.waitForSelector('h1:text-is("treasury-audit")');
    expect(await reviewer.page.isVisible('a:text-is("Make the report")')).toBe(false);
    await reviewer.page.goto(`${url}/app/reports`);
    await reviewer.page.waitForSelector('h1:text-is("Reports")');
    await reviewer.page.waitForLoadState('networkidle');
    expect(await reviewer.page.isVisible('a:text-is("New report of treasury-audit")')).toBe(false);
    await reviewer.page.goto(`${url}/app/repositories/${own.repository.id}/report`);
    await reviewer.page.waitForSelector(
      '.notice:has-text("Only the company’s managers and the repository’s admins")',
    );
    expect(await reviewer.page.isVisible('button:text-is("Preview the report")')).toBe(false);
    await reviewer.context.close();

    const { context, page } = await signedIn(own.admin.token);
    await page.goto(`${url}/app/repositories/${own.repository.id}`);
    await page.waitForSelector('a:text-is("Make the report")');
    await page.goto(`${url}/app/reports`);
    await page.click('a:text-is("New report of treasury-audit")');
    await page.waitForSelector('h1:has-text("New report of treasury-audit")');
    await page.waitForSelector(`input[name=finding][value="${left.id}"]`);
    await page.uncheck(`input[name=finding][value="${left.id}"]`);
    await page.fill('input[name=projectTitle]', 'Treasury audit by its admin');
    await page.click('button:text-is("Preview the report")');
    await page.waitForSelector('.report-preview h1:text-is("Treasury audit by its admin")');
    const previewText = (await page.textContent('.report-preview')) ?? '';
    expect(previewText).toContain('Withdrawal limit bypassed by batching');
    expect(previewText).not.toContain('Stale comment in Treasury.sol');
    await check(page, 'report-builder-repository-admin');

    // The draft: read by its maker, not by the repository's reviewer nor anonymous callers.
    const drafts = await apiOk<{
      reports: Array<{ id: string; projectTitle: string; publishedAt: string | null }>;
    }>(t, 'GET', '/api/v0/reports?q=Treasury%20audit%20by', own.admin.token);
    expect(drafts.reports.map((r) => [r.projectTitle, r.publishedAt])).toEqual([
      ['Treasury audit by its admin', null],
    ]);
    const draftId = drafts.reports[0]!.id;
    for (const token of [own.reviewer.token, null]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v0/reports/${draftId}`,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      expect(res.statusCode).toBe(404);
    }

    // Published private (the default choice): the admin lands on it and prints it.
    await page.click('button:text-is("Publish the report")');
    await page.waitForURL(`${url}/app/reports/${draftId}`);
    await page.waitForSelector('h1:text-is("Treasury audit by its admin")');
    const published = await apiOk<{
      isPrivate: boolean;
      publishedAt: string | null;
      findings: Array<{ id: string }>;
    }>(t, 'GET', `/api/v0/reports/${draftId}`, own.companyUser.token);
    expect(published.isPrivate).toBe(true);
    expect(published.publishedAt).not.toBeNull();
    expect(published.findings.map((f) => f.id)).toEqual([kept.id]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v0/reports/${draftId}` })).statusCode).toBe(404);
    await expect.poll(() => page.title()).toBe('Treasury audit by its admin · Vigil');
    await page.emulateMedia({ media: 'print' });
    const pdf = await page.pdf({ format: 'A4', printBackground: true });
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdfTitle(pdf)).toBe('Treasury audit by its admin · Vigil');
    await context.close();
  });
});
