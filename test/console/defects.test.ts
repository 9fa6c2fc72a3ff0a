import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { getJson, sendJson, sharedTestApp } from '../helpers/app.ts';
import {
  addMember,
  buildLabel,
  buildRepository,
  buildRepositoryTeam,
  buildServiceKey,
  buildUser,
  connectTrackerA,
  fileFinding,
  grantCredits,
  type TestUser,
} from '../helpers/factories.ts';
import { browserSkipReason, launchChromium } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/defects.test.ts skipped: ${skipReason}`);

interface Finding {
  id: string;
  number: number;
  status: string;
  severity: string | null;
  assignedTo: { username: string } | null;
}

/** The defects of issue 39, each reproduced in Chromium and shown fixed. */
describe.skipIf(skipReason !== null)('console defects (issue 39) in Chromium', () => {
  let url: string;
  let browser: Browser;
  let tracker: FakeTrackerA;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let bare: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let manager: TestUser;
  let second: { id: string; name: string };

  const t = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  beforeAll(async () => {
    tracker = await startFakeTrackerA();
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t);
    // A company with no tracker connected.
    bare = await buildRepositoryTeam(t);
    manager = await buildUser(t, {
      companyId: team.company.id,
      companyRole: 'manager',
      name: 'Mona Manager',
    });
    await grantCredits(t, team.company.id, 5);
    await connectTrackerA(t, team.company.id, tracker);
    await buildLabel(t, { repositoryId: team.repository.id, name: 'needs-info' });
    for (const [title, severity] of [
      ['Reentrancy in Vault.withdraw', 'high'],
      ['Unchecked return value of token transfer', 'medium'],
      ['Oracle price can be manipulated in one block', 'critical'],
    ] as const) {
      await fileFinding(t, team.reviewer.token, team.repository.id, {
        title,
        severity,
        description: `${title}. A very long identifier follows: ${'x'.repeat(160)}`,
        relatedFiles: [
          {
            path: 'contracts/Vault.sol',
            lines: { start: 1, end: 2 },
            relevantContent: `function withdraw() external { ${'a'.repeat(200)} }`,
          },
        ],
      });
    }
    // A second repository of the same company: its finding is #1 too.
    const repo = await buildRepository(t, { companyId: team.company.id, name: 'second-repo' });
    second = { id: repo.id, name: repo.name };
    await addMember(t, repo.id, team.reviewer.id, 'reviewer');
    await fileFinding(t, team.reviewer.token, repo.id, { title: 'Second repository finding' });
    await fileFinding(t, bare.reviewer.token, bare.repository.id, { title: 'Finding without a tracker' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await tracker?.close();
  });

  async function newPage(width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: 'light' });
    return { context, page: await context.newPage() };
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${url}/app/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
  }

  const finding = async (repoId: string, n: number) =>
    (await getJson<Finding>(t, team.judge.token, `/api/v0/repositories/${repoId}/findings/${n}`)).body;

  it('1: the scans tab offers only the standard type for an upload', async () => {
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}/app/companies/${team.company.id}/scans`);
    await page.waitForSelector('[data-testid=credits]');
    expect(await page.isChecked('input[name=type][value=standard]')).toBe(true);
    expect(await page.isDisabled('input[name=type][value=lite]')).toBe(true);
    expect(await page.isDisabled('input[name=type][value=audit]')).toBe(true);
    expect(await page.textContent('fieldset:has(legend:text-is("Scan type"))')).toContain('not for uploads');
    await context.close();
  });

  it('2: severity and status apply only when confirmed; a needed reason is asked; undo works', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}/findings/1`);
    await page.waitForSelector('.chip.status-new');
    await page.focus('#severity');
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(700);
    expect((await finding(team.repository.id, 1)).severity).toBe('high');
    await page.selectOption('#severity', 'low');
    await page.click('button:text-is("Apply severity")');
    await page.waitForSelector('h1 + p .chip.severity-low');
    expect((await finding(team.repository.id, 1)).severity).toBe('low');

    await page.click('aside[aria-label=Triage] fieldset button:text-is("rejected")');
    await page.waitForSelector('form.confirm');
    expect((await finding(team.repository.id, 1)).status).toBe('new');
    // Rejecting needs a reason: the button stays disabled until one is written.
    expect(await page.isDisabled('form.confirm button[type=submit]')).toBe(true);
    expect(await page.textContent('form.confirm')).toContain('required');
    await page.fill('form.confirm textarea', 'Out of scope.');
    await page.click('form.confirm button[type=submit]');
    await page.waitForSelector('h1 + p .chip.status-rejected');
    // The reason is posted on the finding.
    await page.waitForSelector('.comments :text("Out of scope.")');
    await page.click('button:has-text("Undo")');
    await page.waitForSelector('h1 + p .chip.status-new');
    expect((await finding(team.repository.id, 1)).status).toBe('new');
    // Cancel sends nothing.
    await page.click('aside[aria-label=Triage] fieldset button:text-is("confirmed")');
    await page.click('form.confirm button:text-is("Cancel")');
    await page.waitForTimeout(300);
    expect((await finding(team.repository.id, 1)).status).toBe('new');
    await context.close();
  });

  it('3: a status in the search shows in the Status filter; ticking merges it; an empty result says why', async () => {
    await sendJson(
      t,
      team.judge.token,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/findings/2/status`,
      {
        status: 'confirmed',
      },
    );
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/findings?s=status:confirmed`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("1 finding")');
    expect(await page.textContent('details.multi summary:has-text("Status")')).toBe('Status: confirmed');
    await page.click('details.multi summary:has-text("Status")');
    await page.check('details.multi:has(summary:has-text("Status")) label:has-text("new") input');
    await page.waitForSelector('[data-testid=filtered-total]:has-text("3 findings")');
    const u = new URL(page.url());
    expect(u.searchParams.get('status')?.split(',').sort()).toEqual(['confirmed', 'new']);
    expect(u.searchParams.get('s')).toBeNull();
    await page.goto(`${url}/app/findings?status=spam`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("0 findings")');
    expect(await page.textContent('[data-testid=empty-hint]')).toContain('status:spam');
    await context.close();
  });

  it('4: the assignee and mention pickers offer exactly who sees the finding; an unreachable mention warns', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}/findings/1`);
    const picker = page.locator('select:near(label:text-is("Assign to"))').first();
    await page.waitForSelector(`option[value="${team.reviewer.username}"]`, { state: 'attached' });
    const offered = await picker
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as { value: string }).value));
    expect(offered).toContain(team.reviewer.username);
    expect(offered).not.toContain(team.otherReviewer.username);
    await picker.selectOption(team.reviewer.username);
    await page.click('button:text-is("Assign")');
    await page.waitForSelector(`aside :text("@${team.reviewer.username}")`);
    // `@` + the start of the author's name offers the author.
    const box = page.getByLabel('New comment');
    await box.click();
    await page.keyboard.type(`Please check, @${team.reviewer.username.slice(0, 3)}`);
    await page.waitForSelector(`[role=option]:has-text("@${team.reviewer.username}")`);
    await page.keyboard.press('Escape');
    await box.fill(`Ping @${team.otherReviewer.username} about this.`);
    await page.click('.comments > .composer button[type=submit]');
    const warning = await page.waitForSelector('.comments [role=alert]');
    expect(await warning.textContent()).toContain(`@${team.otherReviewer.username} cannot see this finding`);
    // Nothing was posted yet.
    const threads = await getJson<{ threads: unknown[] }>(
      t,
      team.judge.token,
      `/api/v0/repositories/${team.repository.id}/findings/1/comments`,
    );
    expect(threads.body.threads.some((th) => JSON.stringify(th).includes('Ping @'))).toBe(false);
    await context.close();
  });

  it('5: saved views: no sharing offered to a judge, a panel for a manager, scoped to their repository, deletable', async () => {
    const judge = await newPage();
    await signIn(judge.page, team.judge.token);
    await judge.page.goto(`${url}/app/findings`);
    await judge.page.click('summary:has-text("Saved views")');
    await judge.page.waitForSelector('.views input[name=name]');
    expect(await judge.page.locator('.views input[name=shared]').count()).toBe(0);
    await judge.context.close();

    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}/app/findings`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    await page.click('summary:has-text("Saved views")');
    await page.selectOption('select:near(:text("Views of"))', team.repository.id);
    expect(await page.locator('.views input[name=shared]').count()).toBe(1);
    await page.fill('.views input[name=name]', 'Everything here');
    await page.click('text=Save view');
    await page.waitForSelector('.views button[aria-pressed=true]:text-is("Everything here")');
    // The view lists its own repository's findings only (the second repository has one more).
    await page.waitForSelector('[data-testid=filtered-total]:has-text("3 findings")');
    expect(new URL(page.url()).searchParams.get('repositories')).toBe(team.repository.id);
    expect(await page.locator(`table.findings td:text-is("${second.name}")`).count()).toBe(0);
    await page.click('button[aria-label="Delete view Everything here"]');
    await page.waitForSelector('.views button:text-is("Everything here")', { state: 'detached' });
    const views = await getJson<{ views: unknown[] }>(
      t,
      manager.token,
      `/api/v0/repositories/${team.repository.id}/finding-views`,
    );
    expect(views.body.views).toHaveLength(0);
    await context.close();
  });

  it('7: tracker controls only when a tracker is connected, under its product name', async () => {
    const { context, page } = await newPage();
    await signIn(page, bare.companyUser.token);
    await page.goto(`${url}/app/repositories/${bare.repository.id}/findings/1`);
    await page.waitForSelector('[data-testid=no-tracker]:has-text("No issue tracker is connected")');
    expect(await page.locator('button:has-text("Send to")').count()).toBe(0);
    expect(await page.locator('text=tracker_a').count()).toBe(0);
    await context.close();

    const connected = await newPage();
    await signIn(connected.page, team.companyUser.token);
    await connected.page.goto(`${url}/app/repositories/${team.repository.id}/findings/3`);
    await connected.page.waitForSelector('aside button:text-is("Send to Linear")');
    // A ticket sent to the tracker: the list names the product too, never the API's provider id.
    const { key } = await buildServiceKey(t, {
      companyId: team.company.id,
      scopes: ['findings:read', 'findings:write'],
    });
    const sent = await t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/findings/${(await finding(team.repository.id, 3)).id}/issue-trackers/tracker_a`,
      headers: { 'x-api-key': key },
    });
    expect(sent.statusCode).toBe(200);
    await connected.page.reload();
    const ticket = connected.page.locator('aside li:has(a[target=_blank])');
    await ticket.waitFor();
    expect(await ticket.textContent()).toContain('Linear · created here');
    expect(await connected.page.locator('aside :text("tracker_a")').count()).toBe(0);
    await connected.context.close();
  });

  it('9: no sideways scroll at 360 px; company URLs answer Not found; no 403 on a finding load', async () => {
    const { context, page } = await newPage(360);
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 403) refused.push(r.url());
    });
    await signIn(page, team.reviewer.token);
    for (const p of [`/app/repositories/${team.repository.id}/findings/1`, '/app/findings']) {
      await page.goto(`${url}${p}`);
      await page.waitForSelector('h1');
      await page.waitForLoadState('networkidle');
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, p).toBeLessThanOrEqual(360);
    }
    expect(refused).toEqual([]);
    await page.goto(`${url}/app/companies/${team.company.id}`);
    await page.waitForSelector('h1:text-is("Not found")');
    expect(await page.locator('[role=alert]').count()).toBe(0);
    await context.close();
  });

  it('10: two findings numbered #1 in the table tell their repositories apart', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.reviewer.token);
    await page.goto(`${url}/app/findings`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    const numbers = await page
      .locator('table.findings tbody tr td:nth-child(2) a')
      .evaluateAll((as) => as.map((a) => (a.textContent ?? '').trim()));
    const ones = numbers.filter((n) => n.endsWith('#1'));
    expect(ones).toHaveLength(2);
    expect(new Set(ones).size).toBe(2);
    await context.close();
  });
});
