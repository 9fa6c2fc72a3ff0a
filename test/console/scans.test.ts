import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaces } from '../../src/db/schema/index.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompanyWorld, type TestUser } from '../helpers/factories.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/scans.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)('the company’s scans in Chromium: workspace names, "Load more"', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;
  let shots: string;
  let companyId: string;
  let member: TestUser;
  let linked: { id: string };
  let uploads: { id: string };
  let oldestScan: string;
  let newestScan: string;

  beforeAll(async () => {
    t = await createTestApp();
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const world = await buildCompanyWorld(t);
    companyId = world.company.id;
    member = world.member;
    const db = t.container.database.db;
    [linked] = (await db
      .insert(workspaces)
      .values({ companyId, name: 'acme/vault:core', prefix: 'core', repository: 'acme/vault' })
      .returning({ id: workspaces.id })) as [{ id: string }];
    [uploads] = (await db
      .insert(workspaces)
      .values({ companyId, name: 'audit-drop', prefix: 'contracts', repository: null })
      .returning({ id: workspaces.id })) as [{ id: string }];
    // The oldest scan is of the upload workspace; 130 newer ones of the linked workspace follow it.
    const { rows: oldestRows } = await t.container.database.executeSql(
      `insert into scans (company_id, workspace_id, type, status, sources, cost, created_at, completed_at)
       values ($1, $2, 'standard', 'completed', '[]'::jsonb, 2, now() - interval '1 day', now() - interval '1 day')
       returning id`,
      [companyId, uploads.id],
    );
    oldestScan = String(oldestRows[0]!.id);
    const { rows: newer } = await t.container.database.executeSql(
      `insert into scans (company_id, workspace_id, type, status, sources, cost, created_at, completed_at)
       select $1, $2, 'standard', 'completed', '[]'::jsonb, 2, now() - make_interval(secs => 200 - g), now()
       from generate_series(1, 130) g
       returning id, created_at`,
      [companyId, linked.id],
    );
    expect(newer).toHaveLength(130);
    const latest = newer.reduce((a, b) => ((a.created_at as Date) > (b.created_at as Date) ? a : b));
    newestScan = String(latest.id);
    browser = await launchChromium();
    shots = await screenshotDir();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
    const page = await context.newPage();
    await page.goto(`${url}/app/`);
    await page.fill('#token', member.token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
    return page;
  }

  const rowOf = (page: Page, scanId: string) =>
    page.locator(`[data-testid=scans-table] tbody tr:has(a[href$="/scans/${scanId}"])`);

  it('names each scan’s workspace and reaches the oldest scan with "Load more"', async () => {
    const page = await signedIn();
    await page.goto(`${url}/app/companies/${companyId}/scans`);
    await page.waitForSelector('[data-testid=scans-table] tbody tr');
    const newest = rowOf(page, newestScan);
    await newest.locator(`[data-workspace-id="${linked.id}"]`).waitFor();
    expect(await newest.locator(`[data-workspace-id="${linked.id}"]`).textContent()).toBe('acme/vault:core');
    expect(await newest.locator(`[data-workspace-id="${linked.id}"]`).getAttribute('title')).toContain(
      linked.id,
    );
    const firstPage = await page.locator('[data-testid=scans-table] tbody tr').count();
    expect(firstPage).toBeLessThan(131);
    expect(await rowOf(page, oldestScan).count()).toBe(0);

    // Each "Load more" adds the next page, until the list ends and the button goes.
    let clicks = 0;
    while ((await rowOf(page, oldestScan).count()) === 0) {
      const before = await page.locator('[data-testid=scans-table] tbody tr').count();
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.locator('[data-testid=scans-table] tbody tr').nth(before).waitFor();
      clicks += 1;
      expect(clicks).toBeLessThan(5);
    }
    expect(await page.locator('[data-testid=scans-table] tbody tr').count()).toBe(131);
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    const oldest = rowOf(page, oldestScan).locator(`[data-workspace-id="${uploads.id}"]`);
    await oldest.waitFor();
    // A name that does not show the prefix is followed by it.
    expect(await oldest.textContent()).toBe('audit-drop · contracts/');
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'company-scans-load-more.png'), fullPage: true });

    // The scan page names its workspace; the overview is headed with the name.
    await rowOf(page, oldestScan).locator(`a[href$="/scans/${oldestScan}"]`).click();
    await page.waitForURL(new RegExp(`/scans/${oldestScan}$`));
    const onScan = page.locator(`dd [data-workspace-id="${uploads.id}"]`);
    await onScan.waitFor();
    expect(await onScan.textContent()).toBe('audit-drop · contracts/');
    await page.locator('dd a:text-is("Overview")').click();
    await page.waitForURL(new RegExp(`/workspaces/${uploads.id}$`));
    await page.waitForSelector('h1:text-is("Workspace audit-drop")');
    expect(await page.locator('dl.facts').textContent()).toContain('contracts');
    expect(await page.locator('main, body').first().textContent()).toContain(uploads.id);
    await page.context().close();
  }, 60_000);
});
