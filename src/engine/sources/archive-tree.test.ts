import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTarGz, type TarEntrySpec } from '../../../test/fixtures/archives.ts';
import { AppError, type ErrorCode } from '../../errors.ts';
import { type ArchiveTreeSource, openArchiveTree } from './archive-tree.ts';

async function rejectionOf(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the promise resolved`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  return err as AppError;
}

function source(entries: TarEntrySpec[], mountPath?: string): ArchiveTreeSource & { opened: () => number } {
  const archive = buildTarGz(entries);
  let opened = 0;
  return {
    open: async () => {
      opened += 1;
      return Readable.from([archive.subarray(0, 100), archive.subarray(100)]);
    },
    ...(mountPath === undefined ? {} : { mountPath }),
    opened: () => opened,
  };
}

const repo: TarEntrySpec[] = [
  { name: './', type: 'directory' },
  { name: 'contracts/', type: 'directory' },
  { name: 'contracts/Vault.sol', content: 'contract Vault {}\n' },
  { name: 'contracts/lib/Math.sol', content: 'library Math {}\n' },
  { name: 'contracts2/Other.sol', content: 'contract Other {}\n' },
  { name: 'README.md', content: '# repo\n' },
  { name: 'contracts/Alias.sol', type: 'symlink', linkname: 'Vault.sol' },
  { name: 'empty.txt', content: '' },
];

describe('openArchiveTree', () => {
  let tempDir: string;
  beforeAll(async () => {
    tempDir = await mkdtemp(join(tmpdir(), 'vigil-tree-test-'));
  });
  afterAll(async () => {
    await rm(tempDir, { recursive: true, force: true });
  });

  it('lists the regular files sorted by path and reads their content, reading each archive once', async () => {
    const archive = source(repo);
    const tree = await openArchiveTree([archive], { tempDir });

    expect(await tree.list()).toEqual([
      { path: 'README.md', size: 7 },
      { path: 'contracts/Vault.sol', size: 18 },
      { path: 'contracts/lib/Math.sol', size: 16 },
      { path: 'contracts2/Other.sol', size: 18 },
      { path: 'empty.txt', size: 0 },
    ]);
    expect((await tree.read('contracts/lib/Math.sol')).toString()).toBe('library Math {}\n');
    expect((await tree.read('empty.txt')).length).toBe(0);
    expect(archive.opened()).toBe(1);
    await tree.close();
  });

  it('places an archive at its mount path', async () => {
    const tree = await openArchiveTree([source(repo, 'packages/core/')], { tempDir });

    const paths = (await tree.list()).map((e) => e.path);

    expect(paths).toContain('packages/core/contracts/Vault.sol');
    expect(paths.every((p) => p.startsWith('packages/core/'))).toBe(true);
    expect((await tree.read('packages/core/README.md')).toString()).toBe('# repo\n');
    await tree.close();
  });

  it('lists only the files under the prefix, by their repository path', async () => {
    const tree = await openArchiveTree([source(repo)], { prefix: '/contracts/', tempDir });

    expect((await tree.list()).map((e) => e.path)).toEqual(['contracts/Vault.sol', 'contracts/lib/Math.sol']);
    await rejectionOf(tree.read('contracts2/Other.sol'), 'NOT_FOUND');
    await tree.close();
  });

  it('applies a prefix that reaches into a mounted archive', async () => {
    const tree = await openArchiveTree(
      [source(repo, 'pkg'), source([{ name: 'x.sol', content: 'x' }], 'other')],
      {
        prefix: 'pkg/contracts/lib',
        tempDir,
      },
    );

    expect((await tree.list()).map((e) => e.path)).toEqual(['pkg/contracts/lib/Math.sol']);
    await tree.close();
  });

  it('merges several archives, the later one winning on the same path', async () => {
    const first = source([
      { name: 'a.sol', content: 'first a' },
      { name: 'b.sol', content: 'first b' },
    ]);
    const second = source([
      { name: 'b.sol', content: 'second b' },
      { name: 'c.sol', content: 'second c' },
    ]);

    const tree = await openArchiveTree([first, second], { tempDir });

    expect(await tree.list()).toEqual([
      { path: 'a.sol', size: 7 },
      { path: 'b.sol', size: 8 },
      { path: 'c.sol', size: 8 },
    ]);
    expect((await tree.read('b.sol')).toString()).toBe('second b');
    expect((await tree.read('a.sol')).toString()).toBe('first a');
    await tree.close();
  });

  it('leaves out files larger than maxFileBytes and reports them', async () => {
    const tree = await openArchiveTree(
      [
        source([
          { name: 'big.json', content: 'x'.repeat(5000) },
          { name: 'small.sol', content: 'ok' },
        ]),
      ],
      { maxFileBytes: 4096, tempDir },
    );

    expect((await tree.list()).map((e) => e.path)).toEqual(['small.sol']);
    expect(tree.skipped).toEqual([{ path: 'big.json', size: 5000, reason: 'too-large' }]);
    await rejectionOf(tree.read('big.json'), 'NOT_FOUND');
    await tree.close();
  });

  it('serves many concurrent reads of files larger than one write buffer', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({
      name: `src/f${i}.sol`,
      content: `// file ${i}\n`.repeat(2000 + i * 100),
    }));
    const tree = await openArchiveTree([source(files)], { tempDir });

    const contents = await Promise.all(files.map((f) => tree.read(f.name)));

    expect(contents.map((c) => c.toString())).toEqual(files.map((f) => f.content));
    await tree.close();
  });

  it('refuses sources beyond maxTotalBytes and leaves nothing on disk', async () => {
    const before = await readdir(tempDir);

    await rejectionOf(
      openArchiveTree(
        [
          source([
            { name: 'a', content: 'x'.repeat(600) },
            { name: 'b', content: 'x'.repeat(600) },
          ]),
        ],
        { maxTotalBytes: 1000, tempDir },
      ),
      'ARCHIVE_TOO_LARGE',
    );

    expect(await readdir(tempDir)).toEqual(before);
  });

  it('refuses an unverified archive with an escaping path and leaves nothing on disk', async () => {
    const before = await readdir(tempDir);

    const err = await rejectionOf(
      openArchiveTree([source([{ name: '../../outside.sol', content: 'x' }])], { tempDir }),
      'UNSAFE_ARCHIVE_PATH',
    );

    expect(err.message).toContain('../../outside.sol');
    expect(await readdir(tempDir)).toEqual(before);
  });

  it.each([
    ['mountPath', { mountPath: '../up' }, {}],
    ['prefix', {}, { prefix: 'a/../../b' }],
    ['prefix', {}, { prefix: 'a\\b' }],
  ])('refuses a %s that climbs or uses backslashes', async (_field, mount, options) => {
    await rejectionOf(
      openArchiveTree([{ ...source(repo), ...mount }], { ...options, tempDir }),
      'VALIDATION_FAILED',
    );
  });

  it('stores file contents only under a generated name and removes it on close, twice safely', async () => {
    const tree = await openArchiveTree([source(repo)], { tempDir });
    const [treeDir] = (await readdir(tempDir)).filter((name) => name.startsWith('vigil-tree-'));
    const stored = await readdir(join(tempDir, treeDir ?? ''));

    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatch(/^[0-9a-f-]{36}\.spill$/);

    await tree.close();
    await tree.close();
    expect(await readdir(tempDir)).not.toContain(treeDir);
    await expect(tree.read('README.md')).rejects.toThrow('closed');
  });
});
