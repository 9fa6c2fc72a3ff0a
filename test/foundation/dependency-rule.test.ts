import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The dependency rule of docs/architecture.md, as `npm run deps:check` checks it. The known
 * exceptions of `.dependency-cruiser.cjs` must be exact: without them the rules report precisely
 * the listed imports (so every rule fires, and no listed import has gone without its entry).
 */

const root = path.resolve(import.meta.dirname, '../..');
const configPath = path.join(root, '.dependency-cruiser.cjs');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Rule {
  name: string;
  from: { path?: string | string[]; pathNot?: string | string[] };
  to: { path?: string | string[]; pathNot?: string | string[] };
}

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

const pathOf = (pattern: string) => pattern.replace(/^\^/, '').replace(/\$$/, '').replace(/\\(.)/g, '$1');
const list = (value: string | string[] | undefined) =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Runs the checker on src/ with a config; its violations as `rule from -> to`. */
async function cruise(config: string): Promise<string[]> {
  const run = promisify(execFile);
  const output = await run(
    process.execPath,
    [depcruise, 'src', '--config', config, '--output-type', 'json'],
    {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  const result = JSON.parse(output.stdout) as { summary: { violations: Violation[] } };
  return [...new Set(result.summary.violations.map((v) => `${v.rule.name} ${v.from} -> ${v.to}`))].sort();
}

describe('dependency rule', () => {
  const rules = createRequire(import.meta.url)(configPath).forbidden as Rule[];
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-deps-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds on src/ with the known exceptions', async () => {
    expect(await cruise(configPath)).toEqual([]);
  });

  it('reports exactly the known exceptions once they are taken out', async () => {
    // A per-file rule names one importing file and the imports it may keep (to.pathNot).
    const known = rules
      .filter((r) => typeof r.from.path === 'string' && /^\^src\/.*\$$/.test(r.from.path))
      .flatMap((r) =>
        list(r.to.pathNot).map((to) => `${r.name} ${pathOf(r.from.path as string)} -> ${pathOf(to)}`),
      )
      .sort();
    expect(known.length).toBeGreaterThan(0);

    const strict = path.join(dir, 'strict.cjs');
    await writeFile(
      strict,
      `const config = require(${JSON.stringify(configPath)});
module.exports = {
  ...config,
  forbidden: config.forbidden.map(({ from: { pathNot: _a, ...from }, to: { pathNot: _b, ...to }, ...rule }) => ({
    ...rule,
    from,
    to,
  })),
};
`,
    );
    const reported = await cruise(strict);
    // A cycle is reported from one of its files; each known cycle edge is listed both ways.
    const knownNonCycles = known.filter((k) => !k.startsWith('no-circular '));
    expect(reported.filter((r) => !r.startsWith('no-circular '))).toEqual(knownNonCycles);
    const cycles = reported.filter((r) => r.startsWith('no-circular '));
    for (const cycle of cycles) expect(known).toContain(cycle);
    for (const edge of known.filter((k) => k.startsWith('no-circular '))) {
      const [, from, , to] = edge.split(' ');
      expect(
        cycles.some((c) => c === edge || c === `no-circular ${to} -> ${from}`),
        `${edge} is no longer a cycle: remove its exception`,
      ).toBe(true);
    }
  });
});
