import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The dependency rule of docs/architecture.md, as `npm run deps:check` checks it: it holds on
 * src/, and each of its rules fires on a small tree that breaks it (so no rule is a check that
 * cannot fail). Known exceptions, when there are any, must be exact: without them the rules report
 * precisely the listed imports.
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
async function cruise(config: string, cwd = root): Promise<string[]> {
  const run = promisify(execFile);
  const output = await run(
    process.execPath,
    [depcruise, 'src', '--config', config, '--output-type', 'json'],
    {
      cwd,
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

  it('fires each of its rules on a tree that breaks it', async () => {
    const tree = path.join(dir, 'tree');
    // file → its content; each import breaks the rule named beside it.
    const files: Record<string, string> = {
      'src/cycle-a.ts': "import { b } from './cycle-b.ts';\nexport const a = () => b;\n", // no-circular
      'src/cycle-b.ts': "import { a } from './cycle-a.ts';\nexport const b = () => a;\n",
      'src/platform/p.service.ts':
        "import { s } from '../db/schema/s.ts';\nimport { h } from '../http/h.ts';\nexport const p = [s, h];\n", // service-no-sql, service-no-http
      'src/platform/p.repo.ts': "import { p } from './p.service.ts';\nexport const r = p;\n", // repo-not-upwards
      'src/platform/p.routes.ts': "import { r } from './p.repo.ts';\nexport const routes = r;\n", // routes-no-sql
      'src/platform/x.ts': "import { y } from '../scanner/y.ts';\nexport const x = y;\n", // platform-not-scanner
      'src/scanner/y.ts': 'export const y = 1;\n',
      'src/scanner/z.ts': "import { x } from '../platform/x.ts';\nexport const z = x;\n", // scanner-not-platform
      'src/engine/e.ts': "import { x } from '../platform/x.ts';\nexport const e = x;\n", // engine-integrations-no-api
      'src/engine/t.ts': 'export const format = 1;\n',
      'src/auth/a.ts': "import { x } from '../platform/x.ts';\nexport const a = x;\n", // infrastructure-no-api
      'src/db/schema/s.ts': "import { j } from '../../jobs/j.ts';\nexport const s = j;\n", // db-not-upwards
      'src/db/d.ts': "import { format } from '../engine/t.ts';\nexport const d = format;\n", // db-formats-types-only
      'src/jobs/j.ts': 'export const j = 1;\n',
      'src/http/h.ts': 'export const h = 1;\n',
      'src/organization/o.ts': "import { x } from '../platform/x.ts';\nexport const o = x;\n", // organization-no-api
      'tsconfig.json': JSON.stringify({
        compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true },
      }),
    };
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(tree, name)), { recursive: true });
      await writeFile(path.join(tree, name), content);
    }
    const fired = new Set((await cruise(configPath, tree)).map((v) => v.split(' ')[0]));
    // A rule with known exceptions is several entries of one name.
    expect([...fired].sort()).toEqual([...new Set(rules.map((r) => r.name))].sort());
  });
});
