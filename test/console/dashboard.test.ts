import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  buildCompanyWorld,
  buildFinding,
  buildMember,
  buildRepository,
  type TestUser,
} from '../helpers/factories.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/dashboard.test.ts skipped: ${skipReason}`);

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe.skipIf(skipReason !== null)('the company dashboard in Chromium', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;
  let shots: string;
  let world: Awaited<ReturnType<typeof buildCompanyWorld>>;
  let outsider: TestUser;
  let repoIds: string[];

  beforeAll(async () => {
    t = await createTestApp();
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    world = await buildCompanyWorld(t, { name: 'Acme Protocol' });
    const vault = await buildRepository(t, { companyId: world.company.id, name: 'vault' });
    const bridge = await buildRepository(t, { companyId: world.company.id, name: 'bridge' });
    repoIds = [vault.id, bridge.id];
    const now = Date.now();
    const spec: Array<[string, string, string, number, number | null]> = [
      // repository, status, severity, created days ago, hours to fix
      [vault.id, 'new', 'critical', 1, null],
      [vault.id, 'new', 'high', 2, null],
      [vault.id, 'confirmed', 'critical', 10, null],
      [vault.id, 'confirmed', 'medium', 12, null],
      [vault.id, 'fixed', 'high', 20, 6],
      [vault.id, 'fixed', 'medium', 30, 48],
      [bridge.id, 'acknowledged', 'low', 5, null],
      [bridge.id, 'disputed', 'high', 6, null],
      [bridge.id, 'fixed', 'critical', 15, 30],
      [bridge.id, 'rejected', 'low', 3, null],
    ];
    for (const [repositoryId, status, severity, daysAgo, hours] of spec) {
      const createdAt = new Date(now - daysAgo * DAY);
      await buildFinding(t, {
        repositoryId,
        status: status as 'new',
        severity: severity as 'high',
        createdAt,
        fixedAt: hours === null ? null : new Date(createdAt.getTime() + hours * HOUR),
      });
    }
    // Another company's findings never show.
    const other = await buildCompanyWorld(t);
    const otherRepo = await buildRepository(t, { companyId: other.company.id });
    await buildFinding(t, { repositoryId: otherRepo.id, status: 'new', severity: 'critical' });
    outsider = await buildMember(t, { repositoryId: otherRepo.id, role: 'judge' });
    browser = await launchChromium();
    shots = await screenshotDir();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function signedIn(token: string, theme: 'light' | 'dark' = 'light') {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: theme });
    const page = await context.newPage();
    await page.goto(`${url}/app/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
    return { context, page };
  }

  async function openDashboard(page: Page): Promise<void> {
    await page.goto(`${url}/app/companies/${world.company.id}/dashboard`);
    for (const id of ['open-by-severity', 'by-status', 'weekly', 'per-repository'])
      await page.waitForSelector(`[data-testid=chart-${id}] canvas`);
    await page.waitForLoadState('networkidle');
  }

  it('loads the chart library with the dashboard only, and shows the figures of the company', async () => {
    const { context, page } = await signedIn(world.manager.token);
    const scripts: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('.js')) scripts.push(new URL(r.url()).pathname);
    });
    await page.goto(`${url}/app/companies/${world.company.id}`);
    await page.waitForSelector('a:text-is("vault")');
    await page.waitForLoadState('networkidle');
    expect(scripts.filter((s) => /\/dashboard-[^/]*\.js$/.test(s))).toEqual([]);
    await page.click('nav[aria-label="Company sections"] a:text-is("Dashboard")');
    await page.waitForSelector('[data-testid=chart-by-status] canvas');
    expect(scripts.filter((s) => /\/dashboard-[^/]*\.js$/.test(s))).toHaveLength(1);

    const totals = (await page.textContent('.dashboard-totals')) ?? '';
    expect(totals).toMatch(/Open findings\s*6/);
    expect(totals).toMatch(/Fixed\s*3/);
    expect(totals).toMatch(/All findings\s*10/);
    // Median of 6, 30 and 48 hours.
    expect(await page.textContent('[data-testid=median-time-to-fix]')).toContain('30.0 h');
    await page.waitForLoadState('networkidle');
    await page.waitForSelector('[role=status]:has-text("Loading")', { state: 'detached' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'company-dashboard.png'), fullPage: true });
    await context.close();
  });

  it('links each figure to the findings table filtered to what it counts', async () => {
    const { context, page } = await signedIn(world.manager.token);
    await openDashboard(page);
    const card = page.locator('[data-testid=chart-open-by-severity]');
    await card.locator('summary').click();
    const cell = card.locator('tr:has(th:text-is("critical")) td').last();
    expect(await cell.textContent()).toBe('2');
    await cell.locator('a').click();
    await page.waitForURL(/\/app\/findings\?/);
    const search = new URL(page.url()).searchParams;
    expect(search.get('severity')).toBe('critical');
    expect(search.get('status')).toBe('new,in_review,disputed,confirmed,acknowledged');
    expect(search.get('repositories')?.split(',').sort()).toEqual([...repoIds].sort());
    await page.waitForSelector('[data-testid=filtered-total]:has-text("2 findings")');
    expect(await page.locator('table.findings tbody tr').count()).toBe(2);

    await openDashboard(page);
    const repoCard = page.locator('[data-testid=chart-per-repository]');
    await repoCard.locator('summary').click();
    await repoCard.locator('tr:has(th:text-is("bridge")) td').first().locator('a').click();
    await page.waitForURL(/\/app\/findings\?/);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("2 findings")');
    await context.close();
  });

  it('a click on a bar opens the findings of that bar', async () => {
    const { context, page } = await signedIn(world.manager.token);
    await openDashboard(page);
    const canvas = page.locator('[data-testid=chart-by-status] canvas');
    const box = (await canvas.boundingBox())!;
    // Sweep the chart area until the pointer is over a bar (the chart turns the cursor to a pointer).
    let hit: { x: number; y: number } | null = null;
    for (let y = box.y + box.height * 0.85; y > box.y + box.height * 0.2 && !hit; y -= 20) {
      for (let x = box.x + 40; x < box.x + box.width - 10 && !hit; x += 12) {
        await page.mouse.move(x, y);
        if (
          (await canvas.evaluate((c) => (c as unknown as { style: { cursor: string } }).style.cursor)) ===
          'pointer'
        )
          hit = { x, y };
      }
    }
    expect(hit, 'no bar found under the pointer').not.toBeNull();
    await page.mouse.click(hit!.x, hit!.y);
    await page.waitForURL(/\/app\/findings\?/);
    const status = new URL(page.url()).searchParams.get('status');
    const expected: Record<string, number> = {
      new: 2,
      confirmed: 2,
      fixed: 3,
      acknowledged: 1,
      disputed: 1,
      rejected: 1,
    };
    expect(Object.keys(expected)).toContain(status);
    await page.waitForSelector(`[data-testid=filtered-total]:has-text("${expected[status!]} finding")`);
    await context.close();
  });

  it('dark theme', async () => {
    const { context, page } = await signedIn(world.manager.token, 'dark');
    await openDashboard(page);
    await page.waitForSelector('[role=status]:has-text("Loading")', { state: 'detached' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(shots, 'company-dashboard-dark.png'), fullPage: true });
    await context.close();
  });

  it('shows Not found to a user outside the company, and never its figures', async () => {
    const { context, page } = await signedIn(outsider.token);
    const answers: number[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/api/v0/companies/')) answers.push(r.status());
    });
    await page.goto(`${url}/app/companies/${world.company.id}/dashboard`);
    await page.waitForSelector('[role=alert], h1:text-is("Not found")');
    expect(await page.isVisible('[data-testid=chart-by-status]')).toBe(false);
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((s) => s === 404)).toBe(true);
    await context.close();
  });
});
