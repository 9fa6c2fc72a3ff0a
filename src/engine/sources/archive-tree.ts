/**
 * A read-only source tree over verified tar.gz archives, for one scan.
 *
 * Each archive is streamed once. The regular files that fall under the workspace prefix are
 * copied, one after the other, into a single spill file in a fresh temporary directory, and an
 * index keeps each file's offset and length; `read` is a positioned read of that file. Nothing
 * is ever written under a name taken from an archive, links are never followed, and memory holds
 * only the index, whatever the size of the sources.
 *
 * Paths are repository paths: an entry `src/A.sol` of an archive mounted at `packages/core` is
 * listed as `packages/core/src/A.sol`. With a prefix, only files under it are listed, still by
 * their repository path. When several archives (or several entries of one archive) hold the same
 * path, the later one wins, as when the archives are unpacked one over the other in order.
 */
import { randomUUID } from 'node:crypto';
import { type FileHandle, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '../../errors.ts';
import { normalizeArchivePath, readTarGz } from './archive-read.ts';
import type { SourceEntry, SourceTree } from './tree.ts';

const MIB = 1024 * 1024;

/** One archive of a scan's sources. */
export interface ArchiveTreeSource {
  /** Opens a fresh stream of the archive (called once). */
  open: () => Promise<Readable>;
  /** Repository folder the archive's root is placed at, e.g. `packages/core`. Default: the root. */
  mountPath?: string;
}

/** Options of {@link openArchiveTree}. */
export interface OpenArchiveTreeOptions {
  /** Workspace prefix: only files under this repository folder are listed. Default: all. */
  prefix?: string;
  /** Files larger than this are left out (see `skipped`). Default 2 MiB. */
  maxFileBytes?: number;
  /** Most bytes of file content the tree will hold; more → ARCHIVE_TOO_LARGE. Default 2 GiB. */
  maxTotalBytes?: number;
  /** Parent of the tree's temporary directory. Default: the OS temporary directory. */
  tempDir?: string;
  signal?: AbortSignal;
}

/** A file of the archives that the tree leaves out. */
export interface SkippedSourceFile {
  readonly path: string;
  readonly size: number;
  readonly reason: 'too-large';
}

/** A {@link SourceTree} that also reports the files it left out. */
export interface ArchiveSourceTree extends SourceTree {
  /** Files under the prefix that are not listed, in archive order. */
  readonly skipped: readonly SkippedSourceFile[];
}

interface IndexedFile {
  offset: number;
  size: number;
}

/** Spill writes are gathered to this size, so many small files do not mean many small writes. */
const WRITE_BUFFER_BYTES = 256 * 1024;

/**
 * Indexes the archives (in order) and returns the tree. Errors: INVALID_ARCHIVE,
 * UNSAFE_ARCHIVE_PATH or UNSAFE_ARCHIVE_ENTRY for an archive that is not what verification
 * accepted; ARCHIVE_TOO_LARGE past `maxTotalBytes`; VALIDATION_FAILED for a `prefix` or
 * `mountPath` with `..` or a backslash. Nothing is left on disk when it fails.
 */
export async function openArchiveTree(
  archives: readonly ArchiveTreeSource[],
  options: OpenArchiveTreeOptions = {},
): Promise<ArchiveSourceTree> {
  const prefix = normalizeRepositoryPath(options.prefix ?? '', 'prefix');
  const mounts = archives.map((archive) => normalizeRepositoryPath(archive.mountPath ?? '', 'mountPath'));
  const maxFileBytes = options.maxFileBytes ?? 2 * MIB;
  const maxTotalBytes = options.maxTotalBytes ?? 2048 * MIB;

  // The owner's pid in the name lets a later start remove the folders of a killed process.
  const dir = await mkdtemp(join(options.tempDir ?? tmpdir(), `${SPILL_PREFIX}${process.pid}-`));
  let handle: FileHandle | undefined;
  try {
    handle = await open(join(dir, `${randomUUID()}.spill`), 'w+');
    const spill = createSpillWriter(handle);
    const index = new Map<string, IndexedFile>();
    const skipped: SkippedSourceFile[] = [];

    for (const [i, archive] of archives.entries()) {
      const mount = mounts[i] ?? '';
      await readTarGz(await archive.open(), {
        ...(options.signal ? { signal: options.signal } : {}),
        async onEntry(entry, body) {
          if (entry.kind !== 'file') return;
          const path = mount === '' ? entry.path : `${mount}/${entry.path}`;
          if (!isUnder(path, prefix)) return;
          if (entry.size > maxFileBytes) {
            skipped.push({ path, size: entry.size, reason: 'too-large' });
            return;
          }
          if (spill.size() + entry.size > maxTotalBytes) {
            throw new AppError('ARCHIVE_TOO_LARGE', {
              message: `The sources hold more than ${maxTotalBytes} bytes of files (at "${path}").`,
              details: { entry: path, limit: 'maxTotalBytes', max: maxTotalBytes },
            });
          }
          const offset = spill.size();
          for await (const chunk of body) {
            // The tar parser yields buffers; anything else is a bug of ours, not a bad archive.
            if (!Buffer.isBuffer(chunk))
              throw new TypeError('An archive entry yielded a chunk that is not a buffer.');
            await spill.write(chunk);
          }
          index.set(path, { offset, size: spill.size() - offset });
        },
      });
    }
    await spill.flush();
    return createTree(dir, handle, index, skipped);
  } catch (err) {
    await handle?.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

const SPILL_PREFIX = 'vigil-tree-';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the spill folders left in `tempDir` by processes that no longer run (a worker killed in
 * the middle of a job cannot remove its own). Folders of live processes are left alone. Returns
 * the names it removed.
 */
export async function sweepSpillFolders(tempDir: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(tempDir).catch(() => [] as string[])) {
    const match = new RegExp(`^${SPILL_PREFIX}(\\d+)-`).exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    await rm(join(tempDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function createTree(
  dir: string,
  handle: FileHandle,
  index: Map<string, IndexedFile>,
  skipped: SkippedSourceFile[],
): ArchiveSourceTree {
  const listing: SourceEntry[] = [...index.entries()]
    .map(([path, file]) => ({ path, size: file.size }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let closing: Promise<void> | undefined;

  return {
    skipped,

    async list() {
      return listing.map((entry) => ({ ...entry }));
    },

    async read(path) {
      if (closing) throw new Error('The source tree is closed.');
      const file = index.get(path);
      if (!file) {
        throw new AppError('NOT_FOUND', {
          message: `"${path}" is not in the source tree.`,
          details: { path },
        });
      }
      const buffer = Buffer.alloc(file.size);
      let done = 0;
      while (done < file.size) {
        const { bytesRead } = await handle.read(buffer, done, file.size - done, file.offset + done);
        if (bytesRead === 0) throw new Error(`The spill file ended early reading "${path}".`);
        done += bytesRead;
      }
      return buffer;
    },

    close() {
      closing ??= (async () => {
        await handle.close();
        await rm(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

function createSpillWriter(handle: FileHandle) {
  let written = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async (): Promise<void> => {
    if (pendingBytes === 0) return;
    const data = Buffer.concat(pending, pendingBytes);
    const position = written - pendingBytes;
    pending = [];
    pendingBytes = 0;
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await handle.write(data, done, data.length - done, position + done);
      done += bytesWritten;
    }
  };
  return {
    /** Bytes appended so far, flushed or not. */
    size: () => written,
    async write(chunk: Buffer): Promise<void> {
      pending.push(chunk);
      pendingBytes += chunk.length;
      written += chunk.length;
      if (pendingBytes >= WRITE_BUFFER_BYTES) await flush();
    },
    flush,
  };
}

/** Repository-relative folder: leading `/` and `./` are dropped; `..` and backslashes are refused. */
function normalizeRepositoryPath(value: string, field: 'prefix' | 'mountPath'): string {
  try {
    return normalizeArchivePath(value.replace(/^\/+/, ''));
  } catch (err) {
    throw new AppError('VALIDATION_FAILED', {
      message: `The ${field} "${value.slice(0, 200)}" is not a valid repository folder.`,
      details: { [field]: value.slice(0, 200) },
      cause: err,
    });
  }
}

function isUnder(path: string, folder: string): boolean {
  return folder === '' || path.startsWith(`${folder}/`);
}
