import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reports } from '../../src/db/schema/index.ts';
import { findingEventsRepo } from '../../src/platform/findings/finding-events.repo.ts';
import { sendJson, sharedTestApp } from '../helpers/app.ts';
import { buildRepositoryTeam } from '../helpers/factories.ts';
import { browserSkipReason, launchChromium, screenshotDir, seriousViolations } from './browser.ts';

const skipReason = browserSkipReason();
if (skipReason) console.log(`test/console/reading.test.ts skipped: ${skipReason}`);

/**
 * Markdown that tries every way to run script or fetch from a reader's browser: a script element,
 * event handlers on elements Markdown passes through as HTML, `javascript:` and `data:` links in
 * Markdown and in HTML, frames, SVG, forms, styles and a remote image (a tracking pixel).
 */
const HOSTILE = [
  '# Impact',
  'The **balance** is written after the `call`.',
  '<script>window.__pwned = "script"</script>',
  '<img src="x" onerror="window.__pwned = \'img onerror\'">',
  '<svg><script>window.__pwned = "svg"</script><circle onload="window.__pwned=\'svg onload\'"/></svg>',
  '[markdown js link](javascript:window.__pwned="markdown-link")',
  '<a href="javascript:window.__pwned=\'html-link\'" id="hostile-html-link">html js link</a>',
  '[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '<iframe src="javascript:window.__pwned=\'iframe\'"></iframe>',
  '<div onmouseover="window.__pwned=\'hover\'" style="position:fixed;inset:0;z-index:9">cover</div>',
  '<form action="https://evil.example/"><button formaction="javascript:window.__pwned=1">go</button></form>',
  '![pixel](https://tracker.example/pixel.png)',
  '[the docs](https://example.com/docs)',
].join('\n\n');

const SOLIDITY = [
  'function withdraw(uint256 amount) external {',
  '    require(balances[msg.sender] >= amount, "low");',
  '    (bool ok, ) = msg.sender.call{value: amount}("");',
  '    balances[msg.sender] -= amount; // written after the call',
  '}',
].join('\n');
/** Generous: Chromium pages are slow on a loaded machine; each test still fails on its own checks. */
const BROWSER_TEST_MS = 180_000;
const COMMIT = 'abcdef1234567890abcdef1234567890abcdef12';

describe.skipIf(skipReason !== null)('reading findings in Chromium: Markdown, code and activity', () => {
  let url: string;
  let browser: Browser;
  let shots: string;
  let team: Awaited<ReturnType<typeof buildRepositoryTeam>>;
  let findingId: string;
  const t = sharedTestApp();

  beforeAll(async () => {
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    team = await buildRepositoryTeam(t, { url: 'https://github.com/acme/vault' });
    const filed = await sendJson<{ id: string; number: number }>(
      t,
      team.reviewer.token,
      'POST',
      `/api/v0/repositories/${team.repository.id}/findings`,
      {
        title: 'Reentrancy in Vault.withdraw',
        severity: 'high',
        description: HOSTILE,
        relatedFiles: [
          {
            path: 'src/Vault.sol',
            lines: { start: 41, end: 43 },
            language: 'solidity',
            relevantContent: SOLIDITY,
            commit: COMMIT,
          },
        ],
      },
    );
    expect(filed.status).toBe(201);
    findingId = filed.body.id;
    const comment = await sendJson(
      t,
      team.judge.token,
      'POST',
      `/api/v0/repositories/${team.repository.id}/findings/${findingId}/comment`,
      { content: `Reproduced.\n\n${HOSTILE}` },
    );
    expect(comment.status).toBe(201);
    browser = await launchChromium();
    shots = await screenshotDir();
  });

  afterAll(async () => {
    await browser?.close();
  });

  /**
   * A page whose Content-Security-Policy is switched off: the console's CSP would stop inline
   * scripts and handlers by itself, so only with it off does the test show what the sanitiser does.
   */
  async function newPage(
    colorScheme: 'light' | 'dark' = 'light',
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme,
      bypassCSP: true,
    });
    const page = await context.newPage();
    page.on('dialog', (dialog) => {
      throw new Error(`a script opened a dialog: ${dialog.message()}`);
    });
    return { context, page };
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${url}/app/`);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=signed-in-as]');
  }

  const findingPath = () => `/app/repositories/${team.repository.id}/findings/1`;

  /** What a rendered Markdown block holds that could run or fetch; every list must be empty. */
  async function dangerIn(page: Page, selector: string) {
    return page.$$eval(selector, (blocks) => {
      const found: string[] = [];
      for (const block of blocks) {
        for (const el of block.querySelectorAll('*')) {
          const tag = el.tagName.toLowerCase();
          if (['script', 'iframe', 'svg', 'img', 'form', 'button', 'style', 'object', 'embed'].includes(tag))
            found.push(`<${tag}>`);
          for (const attr of el.getAttributeNames()) {
            if (attr.startsWith('on') || attr === 'style' || attr === 'formaction' || attr === 'srcdoc')
              found.push(`${tag}[${attr}]`);
          }
          const href = el.getAttribute('href');
          if (href !== null && !/^(https?:|mailto:|#)/i.test(href)) found.push(`${tag}[href=${href}]`);
        }
      }
      return found;
    });
  }

  it(
    'renders a hostile description and comment as inert Markdown: no script runs, nothing dangerous in the DOM, links safe',
    async () => {
      const { context, page } = await newPage();
      await signIn(page, team.reviewer.token);
      await page.goto(`${url}${findingPath()}`);
      const description = page.locator('.markdown.description');
      const comment = page.locator('.markdown.comment-body').first();
      // Rendered, not shown raw: a heading, bold text and code.
      await description.locator('h1:text-is("Impact")').waitFor();
      expect(await description.locator('strong').first().textContent()).toBe('balance');
      expect(await description.locator('code').first().textContent()).toBe('call');
      await comment.locator('h1:text-is("Impact")').waitFor();
      expect(await comment.locator('p').first().textContent()).toBe('Reproduced.');

      expect(await dangerIn(page, '.markdown')).toEqual([]);
      // The JavaScript links are left as text without a target; the safe one opens apart.
      const jsLink = description.locator('a:text-is("markdown js link")');
      expect(await jsLink.getAttribute('href')).toBeNull();
      expect(await description.locator('#hostile-html-link').count()).toBe(0);
      const docs = description.locator('a:text-is("the docs")');
      expect(await docs.getAttribute('href')).toBe('https://example.com/docs');
      expect(await docs.getAttribute('rel')).toBe('noopener noreferrer nofollow');
      expect(await docs.getAttribute('target')).toBe('_blank');
      // The remote image is a link to it, never loaded.
      expect(await description.locator('a:text-is("pixel")').getAttribute('href')).toBe(
        'https://tracker.example/pixel.png',
      );

      // Interacting with what the payload aimed at runs nothing either.
      await description.locator('text=cover').hover();
      await jsLink.click();
      await comment.locator('a:text-is("html js link")').click();
      // A string: this file is compiled without the DOM library; the code runs in the page.
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(page.url()).toBe(`${url}${findingPath()}`);
      await context.close();
    },
    BROWSER_TEST_MS,
  );

  it(
    'renders a report’s hostile text as inert Markdown too',
    async () => {
      const [report] = await t.container.database.db
        .insert(reports)
        .values({
          companyId: team.company.id,
          projectTitle: 'Vault audit',
          clientName: 'Acme',
          description: HOSTILE,
          isPrivate: false,
          publishedAt: new Date(),
        })
        .returning({ id: reports.id });
      const { context, page } = await newPage();
      await signIn(page, team.reviewer.token);
      await page.goto(`${url}/app/reports/${report!.id}`);
      const description = page.locator('.markdown.description');
      await description.locator('h1:text-is("Impact")').waitFor();
      expect(await dangerIn(page, '.markdown')).toEqual([]);
      await description.locator('a:text-is("markdown js link")').click();
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      await context.close();
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows related code with line numbers, Solidity highlighting, the finding’s lines marked and links to the commit',
    async () => {
      const { context, page } = await newPage();
      await signIn(page, team.judge.token);
      // Prism is not part of the first page: the findings table loads without it.
      const prismOnFirstPage: string[] = [];
      const onRequest = (r: { url(): string }) => {
        if (/\/assets\/prism/.test(r.url())) prismOnFirstPage.push(r.url());
      };
      page.on('request', onRequest);
      await page.goto(`${url}/app/findings`);
      await page.waitForSelector('tr:has-text("Reentrancy in Vault.withdraw")');
      await page.waitForLoadState('networkidle');
      expect(prismOnFirstPage).toEqual([]);
      page.off('request', onRequest);

      await page.goto(`${url}${findingPath()}`);
      const code = page.locator('pre.code-view');
      await page.waitForSelector('pre.code-view[data-highlighted=true]');
      expect(await code.getAttribute('data-language')).toBe('solidity');
      expect(await code.locator('.line-number').allTextContents()).toEqual(['41', '42', '43', '44', '45']);
      expect(
        await code.locator('.line.marked').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-line'))),
      ).toEqual(['41', '42', '43']);
      expect(await code.locator('.tok-keyword').allTextContents()).toEqual(
        expect.arrayContaining(['function', 'external', 'require']),
      );
      expect(await code.locator('.tok-builtin').allTextContents()).toEqual(
        expect.arrayContaining(['uint256', 'bool']),
      );
      expect(await code.locator('.tok-comment').allTextContents()).toEqual(['// written after the call']);
      expect(await code.locator('.line[data-line="44"] .line-text').textContent()).toBe(
        '    balances[msg.sender] -= amount; // written after the call',
      );
      const caption = page.locator('figure.code figcaption');
      expect(await caption.locator('a:has(code:text-is("src/Vault.sol"))').getAttribute('href')).toBe(
        `https://github.com/acme/vault/blob/${COMMIT}/src/Vault.sol#L41-L43`,
      );
      expect(
        await caption.locator(`a:has(code:text-is("${COMMIT.slice(0, 12)}"))`).getAttribute('href'),
      ).toBe(`https://github.com/acme/vault/commit/${COMMIT}`);
      await page.waitForLoadState('networkidle');
      const violations = await seriousViolations(page);
      expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);
      await page.locator('figure.code').screenshot({ path: path.join(shots, 'finding-code.png') });
      await context.close();

      const dark = await newPage('dark');
      await signIn(dark.page, team.judge.token);
      await dark.page.goto(`${url}${findingPath()}`);
      await dark.page.waitForSelector('pre.code-view[data-highlighted=true]');
      await dark.page.waitForLoadState('networkidle');
      const darkViolations = await seriousViolations(dark.page);
      expect(darkViolations, JSON.stringify(darkViolations, null, 1)).toEqual([]);
      await dark.context.close();
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows the activity timeline beside the comments, including kinds it does not know',
    async () => {
      const base = `/api/v0/repositories/${team.repository.id}/findings/${findingId}`;
      for (const [method, pathPart, body] of [
        ['PUT', 'status', { status: 'confirmed' }],
        ['PUT', 'severity', { severity: 'critical' }],
        ['PUT', 'assignee', { assignee: team.triager.username }],
      ] as const) {
        expect((await sendJson(t, team.judge.token, method, `${base}/${pathPart}`, body)).status).toBe(200);
      }
      const events = findingEventsRepo(t.container.database.db);
      await events.record({
        findingId,
        kind: 'scan_present',
        data: { scanId: '7b0c4d8e-0000-4000-8000-000000000001', commit: COMMIT },
      });
      await events.record({
        findingId,
        kind: 'bounty_paid',
        data: { amount: '1500 USDC', txHash: '0xfeed' },
      });

      const { context, page } = await newPage();
      await signIn(page, team.judge.token);
      await page.goto(`${url}${findingPath()}`);
      const timeline = page.locator('section.timeline');
      await timeline.locator('li[data-kind=bounty_paid]').waitFor();
      const items = timeline.locator('li.event');
      expect(await items.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-kind')))).toEqual([
        'created',
        'status',
        'severity',
        'assignee',
        'scan_present',
        'bounty_paid',
      ]);
      const text = async (kind: string) =>
        (await timeline.locator(`li[data-kind=${kind}]`).textContent())?.replace(/\s+/g, ' ');
      expect(await text('created')).toContain(`@${team.reviewer.username} filed the finding`);
      expect(await text('status')).toContain(
        `@${team.judge.username} changed the status from new to confirmed`,
      );
      expect(await text('severity')).toContain('changed the severity from high to critical');
      expect(await text('assignee')).toContain(`assigned the finding to @${team.triager.username}`);
      expect(await text('scan_present')).toContain(
        `Vigil scanner still present in scan 7b0c4d8e at commit ${COMMIT.slice(0, 12)}`,
      );
      // An unknown kind: its name and facts, as they come.
      expect(await text('bounty_paid')).toContain('bounty paid');
      expect(await timeline.locator('li[data-kind=bounty_paid] dd').allTextContents()).toEqual([
        '1500 USDC',
        '0xfeed',
      ]);

      // A later change shows up at its place, last.
      expect(
        (await sendJson(t, team.judge.token, 'PUT', `${base}/severity`, { severity: 'medium' })).status,
      ).toBe(200);
      await page.reload();
      await timeline.locator('li[data-kind=severity]:has-text("from critical to medium")').waitFor();
      expect(await timeline.locator('li.event').last().getAttribute('data-kind')).toBe('severity');
      await page.waitForLoadState('networkidle');
      const violations = await seriousViolations(page);
      expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);
      await page.screenshot({ path: path.join(shots, 'finding-activity.png'), fullPage: true });
      await context.close();
    },
    BROWSER_TEST_MS,
  );
});
