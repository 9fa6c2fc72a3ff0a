/**
 * The local file system object store: one file per key under a root directory. Bodies are
 * written to `<root>/.tmp/<uuid>.part`, flushed to disk, then renamed over the target, so readers
 * see either the old object or the complete new one, never a partial file. A stored file is never
 * written again (a new body is a new file renamed over the name), so a hard link to it is a
 * snapshot: that is how `copy` works without copying bytes.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../errors.ts';
import { assertObjectKey, createByteLimiter, type ObjectStore } from './object-store.ts';

/** Options of {@link createFsObjectStore}. */
export interface FsObjectStoreOptions {
  /** Directory holding the objects; created on first write. Default `./data/objects`. */
  root?: string;
  /**
   * Staging files older than this are removed on the store's first write: they are what a crash
   * in the middle of an upload leaves behind. Default 24 hours.
   */
  staleStagingMs?: number;
}

/** The staging folder; object keys cannot start with a dot, so it never collides with one. */
const STAGING_DIR = '.tmp';

/** Creates the file system object store rooted at `options.root`. */
export function createFsObjectStore(options: FsObjectStoreOptions = {}): ObjectStore {
  const root = resolve(options.root ?? './data/objects');
  const stagingDir = join(root, STAGING_DIR);
  const staleStagingMs = options.staleStagingMs ?? 24 * 3600 * 1000;
  let swept: Promise<void> | undefined;

  const pathOf = (key: string): string => {
    assertObjectKey(key);
    return join(root, ...key.split('/'));
  };

  return {
    kind: 'fs',

    async putStream(key, body, { maxBytes }) {
      const target = pathOf(key);
      const staging = join(stagingDir, `${randomUUID()}.part`);
      await mkdir(stagingDir, { recursive: true });
      // Best effort: a failed sweep must not fail uploads; the next start tries again.
      swept ??= removeStaleStaging(stagingDir, staleStagingMs).catch(() => undefined);
      await swept;
      let sizeBytes = 0;
      const out = createWriteStream(staging, { flags: 'wx' });
      try {
        await pipeline(
          body,
          createByteLimiter(maxBytes, (n) => {
            sizeBytes = n;
          }),
          out,
        );
        // The rename is only atomic for data already on disk; without the sync a crash could
        // leave the new name pointing at an empty file.
        const handle = await open(staging, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        await mkdir(dirname(target), { recursive: true });
        await rename(staging, target);
      } catch (err) {
        // A stream destroyed before its file opened still creates the file when the open lands:
        // wait for it to close, or the removal could run first and leave the file behind.
        if (!out.closed) await once(out, 'close').catch(() => undefined);
        await rm(staging, { force: true });
        throw err;
      }
      return { sizeBytes };
    },

    async copy(sourceKey, targetKey) {
      const source = pathOf(sourceKey);
      const target = pathOf(targetKey);
      const staging = join(stagingDir, `${randomUUID()}.part`);
      await mkdir(stagingDir, { recursive: true });
      try {
        try {
          await link(source, staging);
        } catch (err) {
          if (isMissing(err)) throw notFound(sourceKey);
          // A file system without hard links (or the store spread over two): copy the bytes.
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw err;
          await copyFile(source, staging).catch((copyErr: unknown) => {
            throw isMissing(copyErr) ? notFound(sourceKey) : copyErr;
          });
          const handle = await open(staging, 'r');
          try {
            await handle.sync();
          } finally {
            await handle.close();
          }
        }
        const info = await stat(staging);
        if (!info.isFile()) throw notFound(sourceKey);
        await mkdir(dirname(target), { recursive: true });
        await rename(staging, target);
        return { sizeBytes: info.size };
      } catch (err) {
        await rm(staging, { force: true });
        throw err;
      }
    },

    async getStream(key) {
      const path = pathOf(key);
      // Opening first turns a missing object into NOT_FOUND here rather than a stream error later.
      const handle = await open(path, 'r').catch((err: unknown) => {
        if (isMissing(err)) throw notFound(key);
        throw err;
      });
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        throw notFound(key);
      }
      return handle.createReadStream();
    },

    async head(key) {
      try {
        const info = await stat(pathOf(key));
        return info.isFile() ? { sizeBytes: info.size } : null;
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },

    async deletePrefix(prefix) {
      await rm(pathOf(prefix.replace(/\/+$/, '')), { recursive: true, force: true });
    },

    async *list(prefix) {
      const base = prefix.replace(/\/+$/, '');
      const start = pathOf(base);
      const pending: Array<{ dir: string; key: string }> = [{ dir: start, key: base }];
      while (pending.length > 0) {
        const { dir, key } = pending.pop()!;
        const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
          if (isMissing(err)) return [];
          throw err;
        });
        for (const entry of entries) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) pending.push({ dir: path, key: `${key}/${entry.name}` });
          else if (entry.isFile()) {
            // Removed between the listing and the stat: no longer an object to report.
            const info = await stat(path).catch(() => null);
            if (info) yield { key: `${key}/${entry.name}`, modifiedAt: info.mtime };
          }
        }
      }
    },

    async presignPut() {
      return null;
    },

    async close() {},
  };
}

async function removeStaleStaging(stagingDir: string, staleMs: number): Promise<void> {
  const cutoff = Date.now() - staleMs;
  for (const name of await readdir(stagingDir)) {
    const path = join(stagingDir, name);
    // A file may vanish between the listing and the stat when another put finishes; that is fine.
    const info = await stat(path).catch(() => null);
    if (info && info.mtimeMs < cutoff) await rm(path, { force: true });
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

function notFound(key: string): AppError {
  return new AppError('NOT_FOUND', { message: `No object with key "${key}".`, details: { key } });
}
