/**
 * The native Solidity parser's build (scripts/build-native.mjs, ADR 0100): compiled once per change
 * of its inputs; a machine where it does not compile gets one clear line and the WASM parser, and
 * does not try again until the inputs change.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);
let checkout: string;

const source = () => path.join(checkout, 'native/solidity_tree.c');
const addon = () => path.join(checkout, 'dist/native/solidity-tree.node');

async function buildNative(): Promise<string> {
  const { stdout } = await exec(process.execPath, [path.join(checkout, 'scripts/build-native.mjs')], {
    cwd: checkout,
  });
  return stdout;
}

async function stamp(): Promise<{ key: string; ok: boolean; error?: string }> {
  return JSON.parse(await readFile(path.join(checkout, 'dist/native/solidity-tree.json'), 'utf8'));
}

beforeAll(async () => {
  checkout = await mkdtemp(path.join(os.tmpdir(), 'vigil-native-'));
  for (const part of ['native', 'scripts', 'package.json'])
    await cp(path.join(root, part), path.join(checkout, part), { recursive: true });
  await symlink(path.join(root, 'node_modules'), path.join(checkout, 'node_modules'));
});

afterAll(async () => {
  if (checkout) await rm(checkout, { recursive: true, force: true });
});

describe('the native Solidity parser build', () => {
  it('says in one line why a source that does not compile left the WASM parser, and waits for a change', async () => {
    const good = await readFile(source(), 'utf8');
    await writeFile(source(), `${good}\nthis is not C;\n`);
    const first = await buildNative();
    expect(first.trim().split('\n')).toHaveLength(1);
    expect(first).toMatch(/^the native Solidity parser did not build, the engine parses with WASM: .*error/);
    expect((await stamp()).ok).toBe(false);
    expect(await stat(addon()).catch(() => null)).toBeNull();
    // Same inputs: no second attempt.
    const failed = await stamp();
    expect(await buildNative()).toBe('');
    expect(await stamp()).toEqual(failed);

    await writeFile(source(), good);
    expect(await buildNative()).toMatch(/^built dist\/native\/solidity-tree\.node in \d+ ms\n$/);
    expect(await stamp()).toMatchObject({ ok: true });
    expect((await stamp()).key).not.toBe(failed.key);
    expect(await buildNative()).toBe('dist/native/solidity-tree.node is current\n');

    const tree = createRequire(import.meta.url)(addon()) as { parse(s: string, l: unknown): Int32Array };
    const { language } = createRequire(import.meta.url)('tree-sitter-solidity') as { language: unknown };
    expect(tree.parse('contract A { uint x; }', language).length).toBeGreaterThan(6);
  }, 120_000);
});
