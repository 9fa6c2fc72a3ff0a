import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, sendJson, sharedTestApp } from '../helpers/app.ts';
import { buildRepositoryTeam, buildUser, fileFinding, type TestUser } from '../helpers/factories.ts';
import { browserSkipReason, launchChromium } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/controls.test.ts skipped: ${skipReason}`);

interface Finding {
  id: string;
  number: number;
  status: string;
  severity: string | null;
  assignedTo: { username: string } | null;
  labels: Array<{ name: string }>;
}

/** Issue 39: the table's controls, bulk triage, labels, service keys, and public reports. */
describe.skipIf(skipReason !== null)('console controls (issue 39) in Chromium', () => {
  let url: string;
  let browser: Browser;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let manager: TestUser;

  const t = sharedTestApp();
  beforeAll(async () => {
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t);
    manager = await buildUser(t, {
      companyId: team.company.id,
      companyRole: 'manager',
      name: 'Mona Manager',
    });
    for (const [title, severity] of [
      ['Reentrancy in Vault.withdraw', 'high'],
      ['Unchecked return value of token transfer', 'medium'],
      ['Oracle price can be manipulated in one block', 'critical'],
      ['Missing event on owner change', 'low'],
    ] as const) {
      await fileFinding(t, team.reviewer.token, team.repository.id, { title, severity });
    }
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    return { context, page: await context.newPage() };
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${url}/app/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
  }

  const finding = async (n: number) =>
    (await getJson<Finding>(t, team.judge.token, `/api/v0/repositories/${team.repository.id}/findings/${n}`))
      .body;

  const severities = async (page: Page) =>
    page
      .locator('table.findings tbody tr td:nth-child(5)')
      .evaluateAll((tds) => tds.map((td) => (td.textContent ?? '').trim()));

  it('sorts by a column header, filters by assignee from a picker', async () => {
    await sendJson(
      t,
      team.judge.token,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/findings/2/assignee`,
      {
        assignee: team.triager.username,
      },
    );
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/findings`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    await page.click('th button:has-text("severity")');
    await page.waitForURL(/order_by=severity_asc/);
    await page.waitForSelector('th[aria-sort=ascending]:has-text("severity")');
    const asc = await severities(page);
    await page.click('th button:has-text("severity")');
    await page.waitForURL(/order_by=severity_desc/);
    await page.waitForSelector('th[aria-sort=descending]:has-text("severity")');
    const desc = await severities(page);
    expect(desc).toEqual([...asc].reverse());
    expect(new Set(asc)).toEqual(new Set(['critical', 'high', 'medium', 'low']));
    // The assignee picker lists the assignees shown; choosing one filters at once.
    const picker = page.getByLabel('Assignee');
    const listId = await picker.getAttribute('list');
    const options = await page
      .locator(`datalist[id="${listId}"] option`)
      .evaluateAll((os) => os.map((o) => (o as { value: string }).value));
    expect(options).toContain(team.triager.username);
    await picker.fill(team.triager.username);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("1 finding")');
    expect(new URL(page.url()).searchParams.get('assigned_to')).toBe(team.triager.username);
    await context.close();
  });

  it('triages several findings at once: status with a reason, severity, assignee, label', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.admin.token);
    // An admin creates a label from the finding page and it lands on the finding.
    await page.goto(`${url}/app/repositories/${team.repository.id}/findings/1`);
    await page.click('button:text-is("New label…")');
    await page.fill('form[aria-label="New label"] input[name=name]', 'bulk-reviewed');
    await page.click('button:text-is("Create and add")');
    await page.waitForSelector('.labels >> text=bulk-reviewed');
    expect((await finding(1)).labels.map((l) => l.name)).toEqual(['bulk-reviewed']);

    await page.goto(`${url}/app/findings?order_by=number_asc`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    await page.check('input[aria-label$=" #3"]');
    await page.check('input[aria-label$=" #4"]');
    await page.waitForSelector('[data-testid=selected-count]:text-is("2 selected")');
    const bar = page.locator('form[aria-label="Bulk triage"]');
    await bar.locator('select:near(:text("Status"))').first().selectOption('rejected');
    // Rejecting needs a reason: Apply stays disabled without one.
    expect(await bar.locator('button[type=submit]').isDisabled()).toBe(true);
    await bar.getByLabel('Reason (required)').fill('Known issue, accepted risk.');
    await bar.getByLabel('Severity').selectOption('low');
    await bar.getByLabel('Assign to').fill(team.triager.username);
    await bar.getByLabel('Add label').selectOption({ label: 'bulk-reviewed' });
    await bar.locator('button[type=submit]').click();
    await page.waitForSelector('[role=status]:has-text("2 findings updated.")');
    for (const n of [3, 4]) {
      const f = await finding(n);
      expect(f).toMatchObject({ status: 'rejected', severity: 'low' });
      expect(f.assignedTo?.username).toBe(team.triager.username);
      expect(f.labels.map((l) => l.name)).toEqual(['bulk-reviewed']);
    }
    // Untouched rows stay as they were.
    expect((await finding(2)).status).toBe('new');
    await context.close();
  });

  it('shows a new service key once with a copy button; lists keys with created and last-used times', async () => {
    const { context, page } = await newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    await signIn(page, manager.token);
    await page.goto(`${url}/app/companies/${team.company.id}/service-keys`);
    await page.fill('input[name=name]', 'CI pipeline');
    await page.check('label:has-text("credits:read") input');
    await page.click('button:text-is("Create key")');
    const key = (await page.textContent('[data-testid=new-key]')) ?? '';
    expect(key).toMatch(/^vgl_sk_/);
    await page.click('button[aria-label="Copy the new service key"]');
    await page.waitForSelector('text=Copied.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    const row = page.locator('tr:has(td:text-is("CI pipeline"))');
    expect(await page.locator('th:text-is("Created")').count()).toBe(1);
    expect(await page.locator('th:text-is("Last used")').count()).toBe(1);
    expect(await row.locator('td').nth(4).textContent()).toBe('never');
    // The key is used once; the list shows when.
    const used = await t.app.inject({
      method: 'GET',
      url: '/api/scanner/v1/credits',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(used.statusCode).toBe(200);
    await page.reload();
    await page.waitForSelector('tr:has(td:text-is("CI pipeline"))');
    expect(await row.locator('td').nth(4).textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    await context.close();
  });

  it('6: a public report opens without signing in, with severities, statuses and named statistics', async () => {
    await sendJson(
      t,
      team.judge.token,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/findings/1/status`,
      {
        status: 'confirmed',
      },
    );
    await sendJson(
      t,
      team.judge.token,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/findings/2/status`,
      {
        status: 'confirmed',
      },
    );
    await sendJson(
      t,
      team.client.token,
      'PUT',
      `/api/v0/repositories/${team.repository.id}/findings/2/status`,
      {
        status: 'fixed',
      },
    );
    expect(
      (await sendJson(t, manager.token, 'POST', `/api/v0/repositories/${team.repository.id}/finish`)).status,
    ).toBe(200);
    const created = await sendJson<{ id: string }>(t, manager.token, 'POST', '/api/v0/reports', {
      repositoryId: team.repository.id,
    });
    expect(created.status).toBe(201);
    const published = await sendJson(t, manager.token, 'POST', `/api/v0/reports/${created.body.id}/publish`, {
      isPrivate: false,
    });
    expect(published.status).toBe(200);

    const { context, page } = await newPage();
    await page.goto(`${url}/app/reports/${created.body.id}`);
    await page.waitForSelector('h2:text-is("Statistics")');
    expect(await page.locator('#token').count()).toBe(0);
    const stats = await page.textContent('table.report-stats');
    expect(stats).toContain('high');
    expect(stats).toContain('medium');
    expect(await page.textContent('table.report-stats tr:has-text("medium")')).toContain('1 of 1');
    expect(await page.textContent('table.report-stats tr:has-text("high")')).toContain('0 of 1');
    const first = page.locator('article ol li').first();
    expect(await first.locator('.chip.severity-high').count()).toBe(1);
    expect(await first.locator('.chip.status-confirmed').count()).toBe(1);
    await context.close();
  });
});
