import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildManyEntriesTarGz,
  buildTar,
  buildTarGz,
  corruptHeaderChecksum,
  createGzipBomb,
  hostileEntryCases,
} from '../../../test/fixtures/archives.ts';
import { AppError, type ErrorCode } from '../../errors.ts';
import { DEFAULT_ARCHIVE_LIMITS, verifyArchive } from './archive-verify.ts';

const MIB = 1024 * 1024;

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

function streamOf(buffer: Buffer, chunkSize = 64 * 1024): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < buffer.length; i += chunkSize) chunks.push(buffer.subarray(i, i + chunkSize));
  return Readable.from(chunks);
}

const sha256 = (buffer: Buffer): string => createHash('sha256').update(buffer).digest('hex');

describe('verifyArchive on well-formed archives', () => {
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'vigil-verify-'));
  });
  afterAll(async () => {
    await rm(workDir, { recursive: true, force: true });
  });

  it('reports sha256, sizes and counts of an archive with nested directories, long names and an inner symlink', async () => {
    const longName = `contracts/${'deep/'.repeat(30)}Vault.sol`;
    const archive = buildTarGz([
      { name: './', type: 'directory' },
      { name: 'contracts/', type: 'directory' },
      { name: 'contracts/Token.sol', content: 'contract Token {}\n' },
      { name: longName, content: 'contract Vault {}\n' },
      { name: 'contracts/current', type: 'symlink', linkname: 'Token.sol' },
      { name: 'lib/up', type: 'symlink', linkname: '../contracts/Token.sol' },
    ]);

    const result = await verifyArchive(streamOf(archive, 100), { listEntries: true });

    expect(result.sha256).toBe(sha256(archive));
    expect(result.sizeBytes).toBe(archive.length);
    expect(result.fileCount).toBe(2);
    expect(result.entryCount).toBe(6);
    expect(result.fileBytes).toBe(36);
    expect(result.expandedBytes).toBe(gunzipSync(archive).length);
    expect(result.entries?.map((e) => `${e.kind}:${e.path}`)).toEqual([
      'directory:contracts',
      'file:contracts/Token.sol',
      `file:${longName}`,
      'symlink:contracts/current',
      'symlink:lib/up',
    ]);
  });

  it('reads GNU long names written with the GNU format', async () => {
    const longName = `${'x'.repeat(120)}/file.txt`;
    const archive = buildTarGz([{ name: longName, content: 'gnu' }], { longNames: 'gnu' });

    const result = await verifyArchive(streamOf(archive), { listEntries: true });

    expect(result.entries?.[0]?.path).toBe(longName);
  });

  it.each(['gnu', 'posix'])('accepts an archive written by GNU tar in %s format', async (format) => {
    const root = join(workDir, `tree-${format}`);
    const longDir = join(root, 'src', 'a'.repeat(90), 'b'.repeat(90));
    await mkdir(longDir, { recursive: true });
    await writeFile(join(longDir, 'Long.sol'), 'contract Long {}\n');
    await writeFile(join(root, 'src', 'Main.sol'), 'contract Main {}\n');
    await symlink('Main.sol', join(root, 'src', 'Alias.sol'));
    const file = join(workDir, `${format}.tar.gz`);
    execFileSync('tar', [`--format=${format}`, '-czf', file, '-C', root, '.']);
    const archive = await readFile(file);

    const result = await verifyArchive(streamOf(archive), { listEntries: true });

    expect(result.sha256).toBe(sha256(archive));
    expect(result.fileCount).toBe(2);
    expect(result.entries?.map((e) => e.path)).toContain(`src/${'a'.repeat(90)}/${'b'.repeat(90)}/Long.sol`);
    expect(result.entries?.find((e) => e.path === 'src/Alias.sol')?.kind).toBe('symlink');
  });

  it('accepts a small archive of very repetitive text, below the expansion-ratio floor', async () => {
    const text = 'uint256 constant X = 1;\n'.repeat(200_000);
    const archive = buildTarGz([{ name: 'Generated.sol', content: text }]);
    expect(text.length / archive.length).toBeGreaterThan(DEFAULT_ARCHIVE_LIMITS.maxExpansionRatio);

    const result = await verifyArchive(streamOf(archive));

    expect(result.fileBytes).toBe(text.length);
  });

  it('accepts the declared sha256 in any case', async () => {
    const archive = buildTarGz([{ name: 'a.sol', content: 'x' }]);

    const result = await verifyArchive(streamOf(archive), { expectedSha256: sha256(archive).toUpperCase() });

    expect(result.sha256).toBe(sha256(archive));
  });

  it('accepts an archive of zero entries', async () => {
    const archive = gzipSync(Buffer.alloc(1024));

    const result = await verifyArchive(streamOf(archive));

    expect(result).toMatchObject({ fileCount: 0, entryCount: 0, expandedBytes: 1024 });
  });
});

describe('verifyArchive on hostile entries', () => {
  it.each(hostileEntryCases())(
    'refuses $title with $code naming the entry',
    async ({ entries, code, entry }) => {
      const archive = buildTarGz(entries);

      const err = await rejectionOf(verifyArchive(streamOf(archive)), code);

      expect(err.message).toContain(entry);
      expect(err.status).toBe(400);
    },
  );

  it('refuses a .. path written as a GNU long name', async () => {
    const archive = buildTarGz([{ name: `${'a/'.repeat(60)}${'../'.repeat(70)}x`, content: 'x' }], {
      longNames: 'gnu',
    });

    await rejectionOf(verifyArchive(streamOf(archive)), 'UNSAFE_ARCHIVE_PATH');
  });

  it('refuses a symlink whose long pax link target leaves the root', async () => {
    const archive = buildTarGz([
      { name: 'l', type: 'symlink', linkname: `${'d/'.repeat(60)}${'../'.repeat(61)}x` },
    ]);

    const err = await rejectionOf(verifyArchive(streamOf(archive)), 'UNSAFE_ARCHIVE_ENTRY');

    expect(err.details).toMatchObject({ entry: 'l' });
  });
});

describe('verifyArchive on malformed archives', () => {
  const valid = buildTarGz([
    { name: 'a.sol', content: 'contract A {}\n'.repeat(100) },
    { name: 'b.sol', content: 'contract B {}\n' },
  ]);

  it('refuses data that is not gzip', async () => {
    const err = await rejectionOf(
      verifyArchive(streamOf(Buffer.from('PK\u0003\u0004 this is a zip'))),
      'INVALID_ARCHIVE',
    );

    expect(err.details).toMatchObject({ reason: 'gzip' });
  });

  it('refuses an empty body', async () => {
    await rejectionOf(verifyArchive(streamOf(Buffer.alloc(0))), 'INVALID_ARCHIVE');
  });

  it('refuses a truncated gzip stream', async () => {
    const err = await rejectionOf(
      verifyArchive(streamOf(valid.subarray(0, valid.length - 20))),
      'INVALID_ARCHIVE',
    );

    expect(err.details).toMatchObject({ reason: 'gzip' });
  });

  it('refuses garbage after the gzip stream', async () => {
    await rejectionOf(
      verifyArchive(streamOf(Buffer.concat([valid, Buffer.from('trailing')]))),
      'INVALID_ARCHIVE',
    );
  });

  it('refuses a tar header whose checksum does not match', async () => {
    const tar = buildTar([{ name: 'a.sol', content: 'x' }]);

    const err = await rejectionOf(
      verifyArchive(streamOf(gzipSync(corruptHeaderChecksum(tar)))),
      'INVALID_ARCHIVE',
    );

    expect(err.details).toMatchObject({ reason: 'tar' });
  });

  it('refuses a tar cut in the middle of an entry', async () => {
    const tar = buildTar([{ name: 'a.sol', content: 'x'.repeat(2000) }], { endBlocks: false });

    const err = await rejectionOf(
      verifyArchive(streamOf(gzipSync(tar.subarray(0, 1024)))),
      'INVALID_ARCHIVE',
    );

    expect(err.details).toMatchObject({ reason: 'tar' });
  });

  it('refuses gzipped text that is not a tar', async () => {
    await rejectionOf(
      verifyArchive(streamOf(gzipSync(Buffer.from('just some text\n'.repeat(100))))),
      'INVALID_ARCHIVE',
    );
  });

  it('refuses a valid archive whose declared sha256 differs', async () => {
    const wrong = sha256(Buffer.from('something else'));

    const err = await rejectionOf(
      verifyArchive(streamOf(valid), { expectedSha256: wrong }),
      'CHECKSUM_MISMATCH',
    );

    expect(err.details).toEqual({ expected: wrong, actual: sha256(valid) });
  });

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();

    await expect(verifyArchive(streamOf(valid), { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('stops reading when its signal is aborted midway', async () => {
    const bomb = createGzipBomb({ expandedMiB: 10 * 1024, layout: 'zero-blocks' });
    const limits = { maxExpansionRatio: 1_000_000, maxExpandedBytes: 64 * 1024 * MIB };
    const controller = new AbortController();
    const started = setInterval(() => {
      if (bomb.bytesRead() === 0) return;
      clearInterval(started);
      controller.abort();
    }, 5);

    await expect(verifyArchive(bomb.stream, { limits, signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });

    expect(bomb.bytesRead()).toBeLessThan(bomb.compressedBytes);
    expect(bomb.stream.destroyed).toBe(true);
  });

  it('passes an error of the stream itself through unchanged', async () => {
    const failure = new Error('connection reset by the object store');
    const source = new Readable({
      read() {
        this.destroy(failure);
      },
    });

    await expect(verifyArchive(source)).rejects.toBe(failure);
  });
});

describe('verifyArchive limits', () => {
  it('stops a 10 GiB gzip bomb of zero blocks early, on the expansion ratio', async () => {
    const bomb = createGzipBomb({ expandedMiB: 10 * 1024, layout: 'zero-blocks' });
    expect(bomb.compressedBytes).toBeLessThan(11 * MIB);

    const err = await rejectionOf(verifyArchive(bomb.stream), 'ARCHIVE_EXPANSION_RATIO');

    const expanded = err.details?.expandedBytes as number;
    expect(expanded).toBeGreaterThan(DEFAULT_ARCHIVE_LIMITS.expansionRatioFloorBytes);
    expect(expanded).toBeLessThan(DEFAULT_ARCHIVE_LIMITS.expansionRatioFloorBytes + 2 * MIB);
    expect(bomb.bytesRead()).toBeLessThan(bomb.compressedBytes / 50);
  });

  it('refuses a 10 GiB single-file bomb from its header, before inflating its content', async () => {
    const bomb = createGzipBomb({ expandedMiB: 10 * 1024, layout: 'one-file' });

    const err = await rejectionOf(verifyArchive(bomb.stream), 'ARCHIVE_TOO_LARGE');

    expect(err.message).toContain('bomb.bin');
    expect(err.details?.expandedBytes as number).toBeLessThan(MIB);
    expect(bomb.bytesRead()).toBeLessThan(bomb.compressedBytes / 100);
  });

  it('stops inflating as soon as the expanded size limit is crossed', async () => {
    const bomb = createGzipBomb({ expandedMiB: 1024, layout: 'zero-blocks' });
    const limits = { maxExpandedBytes: 8 * MIB, maxExpansionRatio: 1_000_000 };

    const err = await rejectionOf(verifyArchive(bomb.stream, { limits }), 'ARCHIVE_TOO_LARGE');

    const expanded = err.details?.expandedBytes as number;
    expect(expanded).toBeGreaterThan(8 * MIB);
    expect(expanded).toBeLessThan(8 * MIB + 256 * 1024);
    expect(err.details).toMatchObject({ limit: 'maxExpandedBytes', entry: 'README' });
  });

  it('builds bombs that are valid gzip when read to the end', () => {
    const bomb = createGzipBomb({ expandedMiB: 3, layout: 'one-file' });
    const chunks: Buffer[] = [];
    bomb.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    return new Promise<void>((resolve) => {
      bomb.stream.on('end', () => {
        const compressed = Buffer.concat(chunks);
        expect(compressed.length).toBe(bomb.compressedBytes);
        expect(gunzipSync(compressed).length).toBe(bomb.expandedBytes);
        resolve();
      });
    });
  });

  it('refuses 200 000 empty entries once the entry limit is passed', async () => {
    const archive = await buildManyEntriesTarGz(200_000);

    const err = await rejectionOf(verifyArchive(streamOf(archive)), 'ARCHIVE_TOO_MANY_ENTRIES');

    expect(err.message).toContain('f/0100000');
    expect(err.details).toMatchObject({ entry: 'f/0100000', max: DEFAULT_ARCHIVE_LIMITS.maxEntries });
  });

  it('counts repeated root entries toward the entry limit', async () => {
    const archive = buildTarGz(
      Array.from({ length: 50 }, () => ({ name: './', type: 'directory' as const })),
    );

    await rejectionOf(
      verifyArchive(streamOf(archive), { limits: { maxEntries: 10 } }),
      'ARCHIVE_TOO_MANY_ENTRIES',
    );
  });

  it('refuses an archive larger than the compressed limit', async () => {
    const archive = buildTarGz([{ name: 'random.bin', content: randomBytes(64 * 1024) }]);

    const err = await rejectionOf(
      verifyArchive(streamOf(archive, 4096), { limits: { maxCompressedBytes: 16 * 1024 } }),
      'ARCHIVE_TOO_LARGE',
    );

    expect(err.details).toMatchObject({ limit: 'maxCompressedBytes' });
  });
});
