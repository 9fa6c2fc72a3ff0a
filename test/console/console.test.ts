import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeTrackerA, startFakeTrackerA } from '../fakes/tracker-a-server.ts';
import { buildTarGz } from '../fixtures/archives.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  buildLabel,
  buildRepositoryTeam,
  buildUser,
  connectTrackerA,
  fileFinding,
  grantCredits,
  type TestUser,
} from '../helpers/factories.ts';
import { REENTRANT_BANK } from '../helpers/scan-helpers.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/console.test.ts skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)('the console in Chromium', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;
  let tracker: FakeTrackerA;
  let shots: string;
  let scratch: string;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let other: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let manager: TestUser;
  const audited: Record<string, string[]> = {};

  beforeAll(async () => {
    tracker = await startFakeTrackerA();
    t = await createTestApp({ worker: true, env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t);
    other = await buildRepositoryTeam(t);
    manager = await buildUser(t, {
      companyId: team.company.id,
      companyRole: 'manager',
      name: 'Mona Manager',
    });
    await grantCredits(t, team.company.id, 20);
    await connectTrackerA(t, team.company.id, tracker);
    await buildLabel(t, { repositoryId: team.repository.id, name: 'needs-info' });
    for (const [title, severity] of [
      ['Reentrancy in Vault.withdraw', 'high'],
      ['Unchecked return value of token transfer', 'medium'],
      ['Oracle price can be manipulated in one block', 'critical'],
      ['Missing event on owner change', 'low'],
    ] as const) {
      await fileFinding(t, team.reviewer.token, team.repository.id, {
        title,
        severity,
        description: `${title}.\n\nAn attacker can exploit this; see the lines below.`,
        relatedFiles: [
          {
            path: 'contracts/Vault.sol',
            lines: { start: 18, end: 22 },
            language: 'solidity',
            relevantContent: REENTRANT_BANK.split('\n').slice(17, 22).join('\n'),
          },
        ],
      });
    }
    await fileFinding(t, other.reviewer.token, other.repository.id, {
      title: 'Another company’s secret finding',
    });
    browser = await launchChromium();
    shots = await screenshotDir();
    scratch = await mkdtemp(path.join(os.tmpdir(), 'vigil-console-'));
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await tracker?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
    console.log('axe-core serious/critical violations per page:', JSON.stringify(audited));
  });

  async function newPage(width = 1280): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: 'light' });
    const page = await context.newPage();
    return { context, page };
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
    // Selectors, not waitForFunction: the console's CSP forbids the eval that string predicates use.
    await page.waitForSelector('[role=status]:has-text("Loading")', { state: 'detached' });
    const violations = await seriousViolations(page);
    audited[name] = violations.map((v) => v.id);
    expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  }

  it('signs in with a user token: HttpOnly cookie, nothing of the token in storage, visible focus', async () => {
    const { context, page } = await newPage();
    await page.goto(`${url}/app/`);
    await page.waitForSelector('#token');
    await check(page, 'sign-in');
    await page.fill('#token', 'vgl_u_wrong');
    await page.click('button[type=submit]');
    const error = await page.waitForSelector('[role=alert]');
    expect(await error.textContent()).toMatch(/token|credential/i);
    await page.fill('#token', manager.token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'vigil_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    // The cookie holds a session id of its own: reading it gives no API token.
    expect(session?.value).toMatch(/^vgl_cs_/);
    expect(session?.value).not.toContain(manager.token);
    const storage = await page.evaluate<string>(
      'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie',
    );
    expect(storage).not.toContain(manager.token);
    await page.keyboard.press('Tab');
    const focus = await page.evaluate<{ text: string; outline: string }>(
      '({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })',
    );
    expect(focus.text).toBe('Skip to content');
    expect(focus.outline).not.toBe('none');
    await check(page, 'home');
    // The user's sessions: this one marked; another one ended from here stops working at once.
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/v0/session',
      payload: { token: manager.token },
      headers: { 'user-agent': 'Other Browser' },
    });
    const otherCookie = [other.headers['set-cookie'] ?? []].flat()[0]!.split(';')[0]!;
    await page.goto(`${url}/app/sessions`);
    await page.waitForSelector('td:text-is("Other Browser")');
    expect(await page.textContent('main')).toContain('this session');
    await check(page, 'sessions');
    await page.click('tr:has(td:text-is("Other Browser")) >> button:text-is("End")');
    await page.waitForSelector('td:text-is("Other Browser")', { state: 'detached' });
    const ended = await t.app.inject({
      method: 'GET',
      url: '/api/v0/session',
      headers: { cookie: otherCookie },
    });
    expect(ended.statusCode).toBe(401);
    await context.close();
  });

  it('invites by username: the manager sees only what was typed, the invitee accepts on the home page', async () => {
    const invitee = await buildUser(t, { name: 'Ivy Invitee', email: 'ivy@elsewhere.example' });
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}/app/companies/${team.company.id}/users`);
    await page.fill('input[name=username]', invitee.username);
    await page.fill('input[name=name]', 'Ivy');
    await page.click('button:has-text("Invite")');
    const row = await page.waitForSelector(`tr:has-text("@${invitee.username}")`);
    expect(await row.textContent()).not.toContain('ivy@elsewhere.example');
    expect(await row.textContent()).not.toContain('Ivy Invitee');
    await check(page, 'company-invitations');
    await context.close();

    const second = await newPage();
    await signIn(second.page, invitee.token);
    await second.page.waitForSelector(`text=${team.company.name}`);
    await second.page.click('button:has-text("Accept")');
    await second.page.waitForSelector(`a:has-text("${team.company.name}")`);
    await second.context.close();
    const { users: listed } = (
      await t.app.inject({
        method: 'GET',
        url: `/api/v0/companies/${team.company.id}/users`,
        headers: { authorization: `Bearer ${manager.token}` },
      })
    ).json() as { users: Array<{ userId: string }> };
    expect(listed.map((u) => u.userId)).toContain(invitee.id);
  });

  it('shows the company pages to a manager: repositories, users, audit log, SSO rules, keys, integrations', async () => {
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    const base = `${url}/app/companies/${team.company.id}`;
    await page.goto(base);
    await page.waitForSelector(`text=${team.repository.name}`);
    await check(page, 'company-repositories');
    await page.goto(`${base}/users`);
    await page.waitForSelector('text=Invite a user');
    await check(page, 'company-users');
    await page.goto(`${base}/sso`);
    await page.fill('input[name=domain]', 'example.org');
    await page.click('text=Add rule');
    await page.waitForSelector('text=example.org');
    // An API error appears in place, with the server's message.
    await page.fill('input[name=domain]', 'example.org');
    await page.click('text=Add rule');
    await page.waitForSelector('[role=alert]');
    await check(page, 'company-sso');
    await page.goto(`${base}/audit-log`);
    await page.waitForSelector('table');
    await check(page, 'company-audit-log');
    await page.goto(`${base}/service-keys`);
    await page.fill('input[name=name]', 'ci');
    await page.click('text=Create key');
    const key = await page.waitForSelector('[data-testid=new-key]');
    expect(await key.textContent()).toMatch(/^vgl_sk_/);
    await check(page, 'company-service-keys');
    await page.goto(`${base}/integrations`);
    await page.waitForSelector('text=tracker_a');
    await check(page, 'company-integrations');
    await page.goto(`${url}/app/repositories/${team.repository.id}`);
    await page.waitForSelector('text=reviewers (2)');
    await check(page, 'repository');
    await context.close();
  });

  it('lets a judge triage a finding through every status a judge may set', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/repositories/${team.repository.id}/findings/1`);
    await page.waitForSelector('.chip.status-new');
    await check(page, 'finding');
    const path = ['in_review', 'disputed', 'spam', 'rejected', 'new', 'confirmed', 'acknowledged', 'fixed'];
    for (const status of path) {
      await page.click(`aside[aria-label=Triage] fieldset button:text-is("${status.replace(/_/g, ' ')}")`);
      // Every change is confirmed; the reason is optional or required, and always accepted.
      await page.fill('form.confirm textarea', `Moved to ${status} in the console test.`);
      await page.click('form.confirm button[type=submit]');
      await page.waitForSelector(`h1 + p .chip.status-${status}`);
    }
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v0/repositories/${team.repository.id}/findings/1`,
      headers: { authorization: `Bearer ${team.judge.token}` },
    });
    expect(res.json().status).toBe('fixed');
    await page.selectOption('#severity', 'critical');
    await page.click('button:text-is("Apply severity")');
    await page.waitForSelector('h1 + p .chip.severity-critical');
    await page.selectOption('select:near(:text("Add label"))', { label: 'needs-info' });
    await page.waitForSelector('.labels >> text=needs-info');
    // A reviewer who did not file it sees no status buttons and no severity control.
    const reviewer = await newPage();
    await signIn(reviewer.page, team.otherReviewer.token);
    await reviewer.page.goto(`${url}/app/repositories/${team.repository.id}/findings/2`);
    await reviewer.page.waitForSelector('h1');
    expect(await reviewer.page.locator('aside[aria-label=Triage] fieldset').count()).toBe(0);
    await reviewer.context.close();
    await context.close();
  }, 180_000);

  it('filters, orders and searches findings with completion, saves a view and reopens it, at 360 px too', async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    await page.goto(`${url}/app/findings`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    await check(page, 'findings');
    await page.click('#s');
    await page.keyboard.type('sev');
    await page.waitForSelector('[role=option]:text-is("severity:")');
    await page.keyboard.press('Tab');
    expect(await page.inputValue('#s')).toBe('severity:');
    await page.keyboard.type('crit');
    await page.waitForSelector('[role=option]:text-is("severity:critical")');
    await page.keyboard.press('Tab');
    expect(await page.inputValue('#s')).toBe('severity:critical ');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=filtered-total]:has-text("2 findings")');
    expect(page.url()).toContain('s=severity');
    await page.selectOption('select:near(:text("Order"))', 'number_desc');
    await page.waitForSelector('table.findings tbody tr:first-child td:nth-child(2) a:text-matches("#3$")');
    await page.click('summary:has-text("Saved views")');
    await page.fill('.views input[name=name]', 'Critical ones');
    await page.click('text=Save view');
    await page.waitForSelector('.views button[aria-pressed=true]:text-is("Critical ones")');
    await page.goto(`${url}/app/findings`);
    await page.waitForSelector('[data-testid=filtered-total]:has-text("4 findings")');
    await page.click('summary:has-text("Saved views")');
    await page.click('.views button:text-is("Critical ones")');
    await page.waitForSelector('[data-testid=filtered-total]:has-text("2 findings")');
    expect(await page.inputValue('#s')).toBe('severity:critical');
    // An invalid search shows the API's message in place.
    await page.fill('#s', 'nonsense:key');
    await page.keyboard.press('Enter');
    const alert = await page.waitForSelector('[role=alert]');
    expect(await alert.textContent()).toMatch(/unknown search key/);
    await context.close();

    const narrow = await newPage(360);
    await signIn(narrow.page, team.judge.token);
    for (const p of ['/app/findings', `/app/repositories/${team.repository.id}/findings/1`]) {
      await narrow.page.goto(`${url}${p}`);
      await narrow.page.waitForSelector('h1');
      await narrow.page.waitForLoadState('networkidle');
      const width = await narrow.page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, p).toBeLessThanOrEqual(360);
    }
    await narrow.page.screenshot({ path: path.join(shots, 'findings-360px.png'), fullPage: false });
    await narrow.context.close();
  });

  it('uploads a project, follows the scan live, reads the threat model and findings, and sends a ticket', async () => {
    const archive = path.join(scratch, 'bank.tar.gz');
    await writeFile(archive, buildTarGz([{ name: 'contracts/Bank.sol', content: REENTRANT_BANK }]));
    const { context, page } = await newPage();
    await signIn(page, manager.token);
    await page.goto(`${url}/app/companies/${team.company.id}/scans`);
    await page.waitForSelector('[data-testid=credits]:has-text("20")');
    await page.waitForSelector('text=costs 2 credits');
    await check(page, 'scan-new');
    await page.setInputFiles('input[type=file][accept]', archive);
    await page.click('text=Upload and scan');
    await Promise.race([
      page.waitForURL(/\/scans\/[0-9a-f-]{36}$/),
      page.waitForSelector('[role=alert]').then(async (e) => {
        throw new Error(`the scan did not start: ${await e.textContent()}`);
      }),
    ]);
    await page.waitForSelector('[data-testid=scan-status]:text-is("completed")', { timeout: 120_000 });
    // The threat model is rendered Markdown (issue 39, defect 8): headings and tables, not its source.
    await page.waitForSelector('.threat-model');
    expect(await page.locator('.threat-model h1:text-is("Threat model")').count()).toBe(1);
    expect(await page.locator('.threat-model h2:text-is("Threats")').count()).toBe(1);
    expect(await page.locator('.threat-model table').count()).toBeGreaterThan(0);
    expect(await page.textContent('.threat-model')).not.toMatch(/(^|\n)#+ |\|---/);
    await page.waitForSelector('[data-testid=drafts-table] tbody tr');
    // Identifiers name their registry (issue 39, defect 8): never bare numbers such as "107 · 841".
    const ids = await page.locator('[data-testid=drafts-table] tbody tr').first().textContent();
    expect(ids).toMatch(/\b(SWC|CWE)-\d+\b/);
    expect(ids).not.toMatch(/(^|\s)\d+ · \d+/);
    await check(page, 'scan');
    await page.click('[data-testid=drafts-table] tbody tr >> text=Details');
    await page.click('[data-testid=drafts-table] tbody tr >> text=Tickets…');
    await page.click('[data-testid=drafts-table] tbody tr >> text=Send to Linear');
    await page.waitForSelector('[data-testid=drafts-table] tbody tr a[target=_blank]');
    expect(tracker.issues.count()).toBe(1);
    const download = page.waitForEvent('download');
    await page.click('text=Download SARIF');
    expect((await download).suggestedFilename()).toMatch(/\.sarif\.json$/);
    await page.click('button[aria-label="Switch to dark theme"]');
    await page.screenshot({ path: path.join(shots, 'scan-dark.png'), fullPage: true });
    await check(page, 'scan-dark');
    await context.close();
  });

  it("answers another company's finding, scan or repository with the not-found page", async () => {
    const { context, page } = await newPage();
    await signIn(page, team.judge.token);
    for (const p of [
      `/app/repositories/${other.repository.id}/findings/1`,
      `/app/repositories/${other.repository.id}`,
      '/app/no/such/page',
    ]) {
      await page.goto(`${url}${p}`);
      await page.waitForSelector('h1:text-is("Not found")');
      expect(await page.textContent('main')).not.toContain('secret finding');
    }
    await check(page, 'not-found');
    await page.goto(`${url}/app/reports`);
    await page.waitForSelector('h1:text-is("Reports")');
    await check(page, 'reports');
    // A copy of the cookie taken before signing out stops working too: sign-out ends the session.
    const copied = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    await page.click('text=Sign out');
    await page.waitForSelector('#token');
    for (const cookie of [(await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; '), copied]) {
      const after = await t.app.inject({ method: 'GET', url: '/api/v0/session', headers: { cookie } });
      expect(after.statusCode).toBe(401);
    }
    await context.close();
  });
});
