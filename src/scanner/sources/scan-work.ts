/**
 * What a scan's first job leaves in the object store for the scan's later jobs, which may run on
 * other workers:
 *
 * - the fetched sources of a sourcehost scan: a commit is fetched once per scan, by the first
 *   job that needs it. The snapshot is the tree as the scan sees it (already limited to the
 *   workspace prefix) as a tar.gz, read back with the archive reader that serves uploads, plus
 *   the list of files the fetch left out (so that their scan messages stay the same);
 * - the engine's one pass over the sources (`analyzeTree`): the threat-model job parses each
 *   Solidity file once and keeps the rule results for the scan job, which does not parse again.
 *
 * Keys, under `scan-work/<scanId>/`: `sources.tar.gz`, `sources-skipped.json` (written last and
 * read first: sources without it are incomplete and not used) and `analysis.json.gz`. Everything
 * of a scan is removed when the scan ends; the scan sweep removes what is left of scans that are
 * no longer active (a worker killed before it could remove it). Nothing here is needed for a
 * correct result: a job that finds nothing fetches and parses again.
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import tar from 'tar-stream';
import type { PreparedScan } from '../../engine/index.ts';
import { openArchiveTree } from '../../engine/sources/archive-tree.ts';
import type { SkippedEntry, SourceTree } from '../../engine/sources/tree.ts';
import { isAppError } from '../../errors.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';

/** Folder of the object store that holds every scan's work. */
export const SCAN_WORK_PREFIX = 'scan-work';
/** Largest snapshot stored (the archive tree holds at most 2 GiB of files; gzip adds little). */
const MAX_SNAPSHOT_BYTES = 2200 * 1024 * 1024;
/** Largest skipped list read back. */
const MAX_SKIPPED_BYTES = 16 * 1024 * 1024;
/** Largest analysis stored (compressed). */
const MAX_ANALYSIS_BYTES = 512 * 1024 * 1024;

const treeKey = (scanId: string) => `${SCAN_WORK_PREFIX}/${scanId}/sources.tar.gz`;
const skippedKey = (scanId: string) => `${SCAN_WORK_PREFIX}/${scanId}/sources-skipped.json`;
const analysisKey = (scanId: string) => `${SCAN_WORK_PREFIX}/${scanId}/analysis.json.gz`;
// A fixed time keeps the archive's bytes a function of the files alone.
const EPOCH = new Date(0);

async function readAll(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buffer.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new Error(`The object is larger than ${maxBytes} bytes.`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size);
}

function isSkippedList(value: unknown): value is SkippedEntry[] {
  return (
    Array.isArray(value) &&
    value.every(
      (e) =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as SkippedEntry).path === 'string' &&
        typeof (e as SkippedEntry).size === 'number' &&
        typeof (e as SkippedEntry).reason === 'string',
    )
  );
}

/** The scans' work kept in `objectStore`. */
export function createScanWork(objectStore: ObjectStore) {
  return {
    /**
     * Stores every file of `tree` (and its skipped list) as the scan's sources. Rejects when the
     * store or the tree fails; nothing usable is left then (the skipped list is written last).
     */
    async saveSources(scanId: string, tree: SourceTree, signal?: AbortSignal): Promise<void> {
      const pack = tar.pack();
      const body = new PassThrough();
      const packed = pipeline(pack, createGzip(), body);
      const stored = objectStore.putStream(treeKey(scanId), body, { maxBytes: MAX_SNAPSHOT_BYTES });
      try {
        for (const entry of await tree.list()) {
          signal?.throwIfAborted();
          const content = await tree.read(entry.path);
          await new Promise<void>((resolve, reject) => {
            pack.entry(
              { name: entry.path, size: content.length, mode: 0o644, mtime: EPOCH },
              content,
              (err) => (err ? reject(err) : resolve()),
            );
          });
        }
        pack.finalize();
        await Promise.all([packed, stored]);
      } catch (err) {
        pack.destroy(err as Error);
        body.destroy(err as Error);
        await Promise.allSettled([packed, stored]);
        throw err;
      }
      const skipped = JSON.stringify(tree.skipped ?? []);
      await objectStore.putStream(skippedKey(scanId), PassThrough.from([Buffer.from(skipped)]), {
        maxBytes: MAX_SKIPPED_BYTES,
      });
    },

    /**
     * The scan's stored sources as a tree (the caller closes it), or null when there are none
     * (never stored, incomplete, or removed).
     */
    async openSources(scanId: string, signal?: AbortSignal): Promise<SourceTree | null> {
      let skipped: SkippedEntry[];
      try {
        const parsed: unknown = JSON.parse(
          (await readAll(await objectStore.getStream(skippedKey(scanId)), MAX_SKIPPED_BYTES)).toString(
            'utf8',
          ),
        );
        if (!isSkippedList(parsed)) return null;
        skipped = parsed;
      } catch (err) {
        if (isAppError(err) && err.code === 'NOT_FOUND') return null;
        throw err;
      }
      let tree: SourceTree;
      try {
        // The snapshot holds only files the fetch listed: no size limit is applied a second time.
        tree = await openArchiveTree([{ open: () => objectStore.getStream(treeKey(scanId)) }], {
          maxFileBytes: Number.MAX_SAFE_INTEGER,
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        if (isAppError(err) && err.code === 'NOT_FOUND') return null;
        throw err;
      }
      return {
        skipped,
        list: () => tree.list(),
        read: (path) => tree.read(path),
        close: () => tree.close(),
      };
    },

    /** Stores the engine's pass over the scan's sources (see `analyzeTree`). */
    async saveAnalysis(scanId: string, prepared: PreparedScan): Promise<void> {
      const body = Readable.from([Buffer.from(JSON.stringify(prepared))]).pipe(createGzip());
      await objectStore.putStream(analysisKey(scanId), body, { maxBytes: MAX_ANALYSIS_BYTES });
    },

    /** The engine's pass stored for the scan, or null when there is none. */
    async openAnalysis(scanId: string): Promise<PreparedScan | null> {
      let stream: Readable;
      try {
        stream = await objectStore.getStream(analysisKey(scanId));
      } catch (err) {
        if (isAppError(err) && err.code === 'NOT_FOUND') return null;
        throw err;
      }
      const json = (await readAll(stream.pipe(createGunzip()), Number.MAX_SAFE_INTEGER)).toString('utf8');
      const parsed = JSON.parse(json) as PreparedScan;
      return parsed.version === 1 && Array.isArray(parsed.files) ? parsed : null;
    },

    /** Removes everything kept for the scan (nothing is not an error). */
    async remove(scanId: string): Promise<void> {
      await objectStore.deletePrefix(`${SCAN_WORK_PREFIX}/${scanId}`);
    },

    /** The ids of the scans that have anything kept, in no set order. */
    async *scanIds(): AsyncIterable<string> {
      const seen = new Set<string>();
      for await (const object of objectStore.list(SCAN_WORK_PREFIX)) {
        const scanId = object.key.split('/')[1];
        if (scanId === undefined || seen.has(scanId)) continue;
        seen.add(scanId);
        yield scanId;
      }
    },
  };
}

export type ScanWork = ReturnType<typeof createScanWork>;
