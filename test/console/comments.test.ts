import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../helpers/app.ts';
import {
  buildArchive,
  buildRepositoryTeam,
  buildServiceKey,
  buildUser,
  fileFinding,
  grantCredits,
  type TestUser,
} from '../helpers/factories.ts';
import { isFinal, localScanBody, postScan, REENTRANT_BANK, waitForScan } from '../helpers/scan-helpers.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/comments.test.ts skipped: ${skipReason}`);

interface Thread {
  id: string;
  content: string | null;
  visibility: string;
  deletedAt: string | null;
  replies: Array<{ id: string; content: string | null; editedAt: string | null; deletedAt: string | null }>;
}

describe.skipIf(skipReason !== null)('comments, notifications and scans in Chromium', () => {
  let url: string;
  let browser: Browser;
  let shots: string;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let other: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let manager: TestUser;
  const audited: Record<string, string[]> = {};

  const t = sharedTestApp({ worker: true });
  beforeAll(async () => {
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t);
    other = await buildRepositoryTeam(t);
    manager = await buildUser(t, {
      companyId: team.company.id,
      companyRole: 'manager',
      name: 'Mona Manager',
    });
    await fileFinding(t, team.reviewer.token, team.repository.id, {
      title: 'Reentrancy in Vault.withdraw',
      severity: 'high',
      description: 'The balance is written after the external call.',
    });
    browser = await launchChromium();
    shots = await screenshotDir();
  });

  afterAll(async () => {
    await browser?.close();
    console.log('axe-core serious/critical violations per page:', JSON.stringify(audited));
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

  /** Audits the page with axe-core and writes its screenshot. */
  async function check(page: Page, name: string): Promise<void> {
    await page.waitForLoadState('networkidle');
    await page.waitForSelector('[role=status]:has-text("Loading")', { state: 'detached' });
    const violations = await seriousViolations(page);
    audited[name] = violations.map((v) => v.id);
    expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  }

  const attributes = async (list: Locator, name: string) =>
    Promise.all((await list.all()).map((l) => l.getAttribute(name)));

  const findingPath = () => `/app/repositories/${team.repository.id}/findings/1`;
  const threadsOf = async (token: string) =>
    (
      await getJson<{ threads: Thread[] }>(
        t,
        token,
        `/api/v0/repositories/${team.repository.id}/findings/1/comments`,
      )
    ).body.threads;

  it('a manager pings a judge with @ completion; the judge sees the notification, opens the finding, and the unread markers clear', async () => {
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}${findingPath()}`);
    const box = page.getByLabel('New comment');
    await box.click();
    await page.keyboard.type(`Can you confirm the order of writes, @${team.judge.username.slice(0, -1)}`);
    await page.waitForSelector(`[role=option]:has-text("@${team.judge.username}")`);
    await page.locator('.comments').screenshot({ path: path.join(shots, 'comment-mention.png') });
    await page.keyboard.press('Tab');
    expect(await box.inputValue()).toBe(`Can you confirm the order of writes, @${team.judge.username} `);
    await page.keyboard.type('?');
    // A company user chooses among public, private and internal; never hidden.
    const visibility = page.locator('.comments > .composer select');
    expect(await attributes(visibility.locator('option'), 'value')).toEqual([
      'public',
      'private',
      'internal',
    ]);
    await visibility.selectOption('private');
    await page.click('button[type=submit]:text-is("Comment")');
    await page.waitForSelector(`.comment:has-text("@${team.judge.username} ?")`);
    expect(await box.inputValue()).toBe('');
    await context.close();

    const judge = await newPage();
    await signIn(judge.page, team.judge.token);
    await judge.page.waitForSelector('[data-testid=unread-notifications]:text-is("1")');
    await judge.page.goto(`${url}/app/findings`);
    await judge.page.waitForSelector(
      'tr.unread:has-text("Reentrancy in Vault.withdraw") .badge:has-text("1 unread")',
    );
    await judge.page.click('nav >> text=Notifications');
    await judge.page.waitForSelector(`.notification.unread:has-text("@${manager.username} mentioned you")`);
    await check(judge.page, 'notifications');
    await judge.page.click('.notification.unread a:has-text("Reentrancy in Vault.withdraw")');
    await judge.page.waitForURL(/\/findings\/1$/);
    // The comment unread when the page opened carries the marker; the notification is read.
    const marked = judge.page.locator('.comment.unread');
    await marked.first().waitFor();
    expect(await marked.count()).toBe(1);
    expect(await marked.textContent()).toContain(`@${team.judge.username} ?`);
    await judge.page.waitForSelector('[data-testid=unread-notifications]', { state: 'detached' });
    await check(judge.page, 'finding-comments');
    // Read now: a fresh load has no marker, and the findings table no unread count.
    await judge.page.reload();
    await judge.page.waitForSelector(`.comment:has-text("@${team.judge.username} ?")`);
    expect(await judge.page.locator('.comment.unread').count()).toBe(0);
    await judge.page.goto(`${url}/app/findings`);
    await judge.page.waitForSelector('tr:has-text("Reentrancy in Vault.withdraw")');
    expect(await judge.page.locator('tr.unread').count()).toBe(0);
    await judge.page.goto(`${url}/app/notifications`);
    await judge.page.click('button:text-is("Unread")');
    await judge.page.waitForSelector('text=No unread notifications.');
    await judge.context.close();
  });

  it('replies in a thread, edits and deletes one’s own reply, and shows the server’s refusal in place', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}${findingPath()}`);
    await page.click('.thread button:text-is("Reply")');
    const reply = page.getByLabel(`Reply to @${manager.username}`);
    await reply.fill('Confirmed: the balance is written after the call.');
    // A reply is never more visible than its private thread.
    const replyVisibility = page.locator('.thread .composer select');
    expect(await replyVisibility.inputValue()).toBe('private');
    expect(await replyVisibility.locator('option').count()).toBe(1);
    await page.click('.thread .composer button[type=submit]:text-is("Reply")');
    const mine = page.locator('.replies .comment').first();
    await mine.locator('text=Confirmed: the balance').waitFor();
    let threads = await threadsOf(team.judge.token);
    expect(threads[0]?.replies.map((r) => r.content)).toEqual([
      'Confirmed: the balance is written after the call.',
    ]);

    await mine.locator('button:text-is("Edit")').click();
    await page.getByLabel('Edit your comment').fill('Confirmed, see lines 18–22.');
    await page.click('button:text-is("Save")');
    await mine.locator('text=Confirmed, see lines 18–22.').waitFor();
    await mine.locator('text=edited').waitFor();
    // Others' comments offer no edit to a judge.
    expect(await page.locator('.thread > .comment button:text-is("Edit")').count()).toBe(0);

    await mine.locator('button:text-is("Delete")').click();
    await mine.locator('button:text-is("Delete for good")').click();
    await mine.locator('text=This comment was deleted.').waitFor();
    threads = await threadsOf(team.judge.token);
    expect(threads[0]?.replies[0]).toMatchObject({ content: null });
    expect(threads[0]?.replies[0]?.deletedAt).not.toBeNull();
    await context.close();

    // A reviewer writes public comments only; with no pings left, @project is refused in place.
    const put = await sendJson(
      t,
      t.adminToken,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/members/${team.reviewer.id}`,
      { role: 'reviewer', pingsLeft: 0 },
    );
    expect(put.status).toBe(200);
    const reviewer = await newPage();
    await signIn(reviewer.page, team.reviewer.token);
    await reviewer.page.goto(`${url}${findingPath()}`);
    const select = reviewer.page.locator('.comments > .composer select');
    await select.waitFor();
    expect(await select.locator('option').count()).toBe(1);
    // Not allowed to reply into the private thread: no reply button there.
    expect(await reviewer.page.locator('.thread button:text-is("Reply")').count()).toBe(0);
    await reviewer.page.getByLabel('New comment').fill('@project please have a look');
    await reviewer.page.click('button[type=submit]:text-is("Comment")');
    const alert = await reviewer.page.waitForSelector('.comments [role=alert]');
    expect(await alert.textContent()).toContain('You have no @project pings left on this repository.');
    expect(await reviewer.page.getByLabel('New comment').inputValue()).toBe('@project please have a look');
    expect((await threadsOf(team.reviewer.token)).map((c) => c.content)).not.toContain(
      '@project please have a look',
    );
    await reviewer.context.close();
  });

  it('is usable at 360 px and in the dark theme', async () => {
    const ping = await sendJson(
      t,
      manager.token,
      'POST',
      `/api/v0/repositories/${team.repository.id}/findings/1/comment`,
      { content: `@${team.judge.username} the fix is merged, please verify.`, visibility: 'private' },
    );
    expect(ping.status).toBe(201);
    const narrow = await newPage(360);
    await signIn(narrow.page, team.judge.token);
    // The folded menu carries the unread count too.
    await narrow.page.waitForSelector('.menu-toggle .badge:text-is("1")');
    for (const p of ['/app/notifications', findingPath()]) {
      await narrow.page.goto(`${url}${p}`);
      await narrow.page.waitForSelector('h1');
      await narrow.page.waitForLoadState('networkidle');
      const width = await narrow.page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, p).toBeLessThanOrEqual(360);
    }
    await narrow.page.waitForSelector('.comment');
    await narrow.page.screenshot({ path: path.join(shots, 'finding-comments-360px.png'), fullPage: false });
    await narrow.context.close();

    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/notifications`);
    await page.waitForSelector('.notification');
    await page.click('button[aria-label="Switch to dark theme"]');
    await check(page, 'notifications-dark');
    await page.goto(`${url}${findingPath()}`);
    await page.waitForSelector('.comment');
    await check(page, 'finding-comments-dark');
    await context.close();
  });

  it("lists the company's scans from the server, not the browser, with a status filter", async () => {
    await grantCredits(t, team.company.id, 20);
    await grantCredits(t, other.company.id, 20);
    const ids: string[] = [];
    for (const company of [team.company.id, team.company.id, other.company.id]) {
      const key = await buildServiceKey(t, { companyId: company });
      const archive = await buildArchive(t, {
        companyId: company,
        files: { 'contracts/Bank.sol': REENTRANT_BANK },
      });
      const res = await postScan(t, key.key, localScanBody(archive));
      expect(res.statusCode, res.body).toBe(202);
      const scan = await waitForScan(t, key.key, res.json().id, isFinal, 120_000);
      expect(scan.status).toBe('completed');
      if (company === team.company.id) ids.push(scan.id);
    }
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}/app/companies/${team.company.id}/scans`);
    await page.waitForSelector('table.scans tbody tr');
    const links = (await attributes(page.locator('table.scans tbody tr a[href*="/scans/"]'), 'href')).map(
      (h) => h?.split('/').pop(),
    );
    // Newest first, only this company's.
    expect(links).toEqual([...ids].reverse());
    expect(await page.locator('table.scans tbody tr').first().textContent()).toContain('completed');
    await check(page, 'company-scans');
    await page.selectOption('label:has-text("Status") select', 'failed');
    await page.waitForSelector('text=No scans with status failed.');
    await page.selectOption('label:has-text("Status") select', 'completed');
    await page.waitForSelector('table.scans tbody tr');
    expect(await page.locator('table.scans tbody tr').count()).toBe(2);
    await page.click(`table.scans a[href$="${ids[0]}"]`);
    await page.waitForSelector('[data-testid=scan-status]:text-is("completed")');
    await context.close();
  });
});
