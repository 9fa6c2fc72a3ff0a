/**
 * `vigil engine …` runs the engine's own file of the compiled build (`engine-cli.cjs`, see
 * scripts/build.mjs): one CommonJS file with the packages it uses and none of the server, and
 * V8's code cache beside it. Built in a copy of the checkout, as test/foundation/compiled-build
 * does, so that the real `dist/` is left alone.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDirectoryTree, scanTree } from '../engine/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const exec = promisify(execFile);
let checkout: string;
let buildDir: string;

const engineFile = () => path.join(buildDir, 'engine-cli.cjs');
const cacheFile = () => `${engineFile()}.v8-cache`;

/** `vigil engine scan` of the example project in the copy, as a SAST report (findings only). */
async function scanExample(): Promise<Array<{ rule: string; line: number; file: string }>> {
  const out = path.join(checkout, 'report.json');
  await exec(
    process.execPath,
    [
      path.join(checkout, 'bin/vigil.js'),
      'engine',
      'scan',
      path.join(checkout, 'examples/sample-project'),
      '--format',
      'sast',
      '--output',
      out,
    ],
    { cwd: checkout },
  );
  const report = JSON.parse(await readFile(out, 'utf8')) as {
    vulnerabilities: Array<{
      location: { file: string; start_line: number };
      identifiers: Array<{ type: string; value: string }>;
    }>;
  };
  return report.vulnerabilities.map((v) => ({
    rule: v.identifiers.find((i) => i.type === 'vigil_rule')?.value ?? '',
    file: v.location.file,
    line: v.location.start_line,
  }));
}

beforeAll(async () => {
  checkout = await mkdtemp(path.join(os.tmpdir(), 'vigil-engine-build-'));
  for (const part of ['src', 'scripts', 'bin', 'examples', 'package.json'])
    await cp(path.join(root, part), path.join(checkout, part), { recursive: true });
  await symlink(path.join(root, 'node_modules'), path.join(checkout, 'node_modules'));
  await exec(process.execPath, [path.join(checkout, 'scripts/build.mjs')], { cwd: checkout });
  const manifest = JSON.parse(await readFile(path.join(checkout, 'dist/server/build.json'), 'utf8')) as {
    dir: string;
  };
  buildDir = path.join(checkout, 'dist/server', manifest.dir);
}, 180_000);

afterAll(async () => {
  if (checkout) await rm(checkout, { recursive: true, force: true });
});

describe('the engine commands of the compiled build', () => {
  it('are one CommonJS file that requires Node modules only, none of the server', async () => {
    const source = await readFile(engineFile(), 'utf8');
    const required = new Set([...source.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]));
    expect([...required].filter((r) => !isBuiltin(r ?? ''))).toEqual([]);
    expect(required.size).toBeGreaterThan(3);
    // No dynamic import is left (code compiled through vm.Script cannot run one).
    expect(source).not.toMatch(/[^\w.]import\(\s*["']/);
    expect(source).not.toMatch(/fastify|drizzle-orm|@aws-sdk|pg-boss/);
  });

  it('come with a code cache made at build time, and find what the engine finds in-process', async () => {
    expect((await stat(cacheFile())).size).toBeGreaterThan(100_000);
    // The copy has no native/ sources, so its engine parses with WASM (the fallback) while this
    // process parses natively: the findings must not differ.
    expect(await stat(path.join(checkout, 'dist/native/solidity-tree.node')).catch(() => null)).toBeNull();
    const expected = await scanTree(await openDirectoryTree(path.join(root, 'examples/sample-project')), {
      type: 'standard',
    });
    const found = await scanExample();
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(
      expected.vulnerabilities.map((v) => ({
        rule: v.ruleId,
        file: v.location.file,
        line: v.location.startLine,
      })),
    );
  }, 60_000);

  it('write a new cache when it is missing or V8 rejects it, and scan the same either way', async () => {
    const before = await scanExample();
    await rm(cacheFile());
    expect(await scanExample()).toEqual(before);
    expect((await stat(cacheFile())).size).toBeGreaterThan(100_000);
    // A cache of other code (another build, another Node): rejected, replaced after the scan.
    await writeFile(cacheFile(), Buffer.alloc(4096, 7));
    expect(await scanExample()).toEqual(before);
    expect((await stat(cacheFile())).size).toBeGreaterThan(100_000);
  }, 60_000);

  it('keep the cache a scan wrote: the V8 flags a short scan changes are restored before', async () => {
    // A small project parses with baseline WebAssembly code only (a V8 flag set for the scan);
    // a cache written under that flag would be rejected by every later start.
    await rm(cacheFile());
    await scanExample();
    const written = await stat(cacheFile());
    await scanExample();
    await scanExample();
    const after = await stat(cacheFile());
    expect(after.mtimeMs).toBe(written.mtimeMs);
    expect(after.size).toBe(written.size);
  }, 60_000);
});
