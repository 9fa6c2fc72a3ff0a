import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { CONSOLE_DIST } from '../../src/http/console.ts';

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download is not used. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or null when they can. */
export function browserSkipReason(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is absent (apt-get install chromium)`;
  if (!existsSync(path.join(CONSOLE_DIST, 'index.html')))
    return 'the console is not built (npm run build:console)';
  return null;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** Runs axe-core in the page; returns the serious and critical violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated rather than added as a script tag: the console's CSP refuses inline scripts.
  await page.evaluate(AXE_SOURCE);
  // A string: this file is compiled without the DOM library; the code runs in the page.
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`)) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * Where screenshots go: `docs/console/` when CONSOLE_SCREENSHOTS=docs (to refresh the committed
 * ones), a scratch folder otherwise.
 */
export async function screenshotDir(): Promise<string> {
  const dir =
    process.env.CONSOLE_SCREENSHOTS === 'docs'
      ? path.resolve('docs/console')
      : path.resolve('.scratch/console-screenshots');
  await mkdir(dir, { recursive: true });
  return dir;
}
