/**
 * The two tree-sitter runtimes the parser runs on (ADR 0100): the native one the build compiles
 * (`native/solidity_tree.c`) and the WASM one it falls back to. They must hand the rules the same
 * tree, to the offset, on every file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type AstNode,
  type ParsedSource,
  parseSolidity,
  solidityParserKind,
  startSolidityParse,
} from './parser.ts';
import { SOLIDITY_RULE_EXAMPLES } from './rules/examples.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function solidityFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return solidityFiles(p);
    return e.name.endsWith('.sol') ? [p] : [];
  });
}

/** The tree without parent links, which `toEqual` would follow in circles. */
function plain(n: AstNode): unknown {
  const { parent: _parent, src: _src, children, ...rest } = n;
  return { ...rest, children: children.map(plain) };
}

async function expectSameTree(source: string, name: string): Promise<ParsedSource> {
  const native = await parseSolidity(source, { runtime: 'native' });
  const wasm = await parseSolidity(source, { runtime: 'wasm' });
  expect(plain(native.root), name).toEqual(plain(wasm.root));
  expect(native.errors, name).toEqual(wasm.errors);
  return native;
}

describe('the native and the WASM tree-sitter runtimes', () => {
  it('are what the build made: the native one compiled and chosen by default', async () => {
    const stamp = JSON.parse(await readFile(path.join(root, 'dist/native/solidity-tree.json'), 'utf8')) as {
      ok: boolean;
      error?: string;
    };
    expect(stamp.error).toBeUndefined();
    expect(stamp.ok).toBe(true);
    expect(solidityParserKind()).toBe(process.env.VIGIL_SOLIDITY_PARSER === 'wasm' ? 'wasm' : 'native');
  });

  it('build the same tree from every Solidity file of the tests, the examples and the rules’ examples', async () => {
    const files = [
      ...solidityFiles(path.join(root, 'test/fixtures')),
      ...solidityFiles(path.join(root, 'examples')),
    ];
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) await expectSameTree(readFileSync(file, 'utf8'), path.relative(root, file));
    for (const [rule, example] of Object.entries(SOLIDITY_RULE_EXAMPLES)) {
      await expectSameTree(example.vulnerable, `${rule} vulnerable`);
      await expectSameTree(example.safe, `${rule} safe`);
    }
  });

  it('count offsets in UTF-16 code units, as JavaScript strings do, past characters outside ASCII', async () => {
    const src = [
      '// Größe — 日本語 — 🦄🦄',
      'contract Ünïcode {',
      '  string s = unicode"héllo 🌍";',
      '  /* ✓ */ function f() public { uint x = 1; }',
      '}',
    ].join('\n');
    const p = await expectSameTree(src, 'unicode');
    const fn = p.root.children[0]!.children.find((c) => c.type === 'contract_body')!.children[1]!;
    expect(src.slice(fn.start, fn.end)).toBe('function f() public { uint x = 1; }');
    expect(fn.line).toBe(4);
  });

  it('report the same syntax errors and inserted tokens in broken files', async () => {
    for (const src of [
      'contract Broken { function f( { uint x = ; } mapping(address => uint storage) m; }',
      'contract A { function f() public { uint x = 1 } }', // a missing `;`
      'contract A { function f() public { if (x { y(); } }',
      '}}}} contract',
      '',
      'pragma solidity ^0.8.0;',
    ]) {
      const p = await expectSameTree(src, JSON.stringify(src));
      if (src.includes('Broken')) expect(p.errors.length).toBeGreaterThan(0);
    }
    const missing = await parseSolidity('contract A { function f() public { uint x = 1 } }', {
      runtime: 'native',
    });
    expect(missing.errors).toContainEqual({ line: 1, kind: 'missing' });
  });

  it('build the same tree from generated deep and long files', async () => {
    const nested = `contract D { function f(uint x) public { ${'if (x > 0) { '.repeat(300)}x--;${' }'.repeat(300)} } }`;
    const chain = `contract C { function f(uint x) public returns (uint) { return ${Array.from({ length: 2000 }, (_, i) => `x * ${i}`).join(' + ')}; } }`;
    const many = Array.from(
      { length: 500 },
      (_, i) => `contract K${i} { uint v${i}; function g${i}() public { v${i} += ${i}; } }`,
    ).join('\n');
    for (const [name, src] of Object.entries({ nested, chain, many })) await expectSameTree(src, name);
  });

  it('parse ahead on the thread pool: many parses in flight, each finished in any order, the same trees', async () => {
    const sources = [
      ...solidityFiles(path.join(root, 'test/fixtures')).map((f) => readFileSync(f, 'utf8')),
      ...Object.values(SOLIDITY_RULE_EXAMPLES).map((e) => e.vulnerable),
    ];
    const finishes = sources.map((s) => startSolidityParse(s));
    // Finished last to first: a parse waits for no other.
    for (let i = sources.length - 1; i >= 0; i--) {
      const ahead = await finishes[i]!();
      const alone = await parseSolidity(sources[i]!);
      expect(plain(ahead.root)).toEqual(plain(alone.root));
      expect(ahead.errors).toEqual(alone.errors);
    }
    // Started and never finished: nothing is left to reject unhandled.
    startSolidityParse('contract Forgotten {}');
  });

  it('refuse what is not a source or a grammar with a TypeError, not a crash', () => {
    const require = createRequire(import.meta.url);
    const tree = require(path.join(root, 'dist/native/solidity-tree.node')) as {
      parse(source: unknown, language: unknown): Int32Array;
      parseAsync(source: unknown, language: unknown): Promise<Int32Array>;
      symbols(language: unknown): unknown;
    };
    const { language } = require('tree-sitter-solidity') as { language: unknown };
    expect(() => tree.parse(42, language)).toThrow(TypeError);
    expect(() => tree.parse('contract A {}', {})).toThrow(TypeError);
    expect(() => tree.symbols('solidity')).toThrow(TypeError);
    expect(() => (tree.parse as (...a: unknown[]) => unknown)()).toThrow(/two arguments/);
    expect(() => tree.parseAsync(null, language)).toThrow(TypeError);
    expect(() => tree.parseAsync('contract A {}', 7)).toThrow(TypeError);
    // Six fields a node, the root first, its subtree ending after the last record.
    const records = tree.parse('contract A {}', language);
    expect(records.length % 6).toBe(0);
    expect(records[4]).toBe(records.length / 6);
  });
});
