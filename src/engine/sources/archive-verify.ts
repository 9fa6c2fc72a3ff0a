/**
 * Verification of an uploaded tar.gz before it may be used as scan source.
 *
 * The archive is read once as a stream: its compressed bytes are hashed and counted, the inflated
 * bytes are counted as they leave gunzip, and every tar header is checked. The pipeline is
 * destroyed the moment a limit is crossed, so a gzip bomb costs at most a few buffers past the
 * limit, never its expanded size. Entry contents are discarded as they stream; memory does not
 * grow with the archive.
 */
import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { AppError } from '../../errors.ts';
import { type ArchiveEntryHeader, readTarGz } from './archive-read.ts';

const MIB = 1024 * 1024;

/** Limits applied while verifying an archive. */
export interface ArchiveLimits {
  /** Largest stored (compressed) archive in bytes. Default 512 MiB. */
  maxCompressedBytes: number;
  /**
   * Largest inflated tar stream in bytes (headers, contents and padding), and also the largest
   * sum of the sizes the headers declare. Default 2 GiB.
   */
  maxExpandedBytes: number;
  /** Most entries (files, directories and symlinks together). Default 100 000. */
  maxEntries: number;
  /**
   * Largest ratio of inflated to compressed bytes. Source code compresses 3–10×; a tar of many
   * tiny files or of generated data reaches 50×; zeros reach 1000×. Default 200.
   */
  maxExpansionRatio: number;
  /**
   * The ratio is only enforced once this many bytes have been inflated, so that small archives
   * of very repetitive text are never refused for their ratio. Default 64 MiB.
   */
  expansionRatioFloorBytes: number;
}

/** The default limits; each can be overridden per call. */
export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxCompressedBytes: 512 * MIB,
  maxExpandedBytes: 2048 * MIB,
  maxEntries: 100_000,
  maxExpansionRatio: 200,
  expansionRatioFloorBytes: 64 * MIB,
});

/** Options of {@link verifyArchive}. */
export interface VerifyArchiveOptions {
  /** Overrides of {@link DEFAULT_ARCHIVE_LIMITS}. */
  limits?: Partial<ArchiveLimits>;
  /** The sha256 (hex) the client declared; a different computed value → CHECKSUM_MISMATCH. */
  expectedSha256?: string;
  /** Return the accepted entries (bounded by `maxEntries`). */
  listEntries?: boolean;
  signal?: AbortSignal;
}

/** What verification learnt about a well-formed, safe archive. */
export interface VerifiedArchive {
  /** Lowercase hex SHA-256 of the compressed bytes as stored. */
  sha256: string;
  /** Compressed size in bytes. */
  sizeBytes: number;
  /** Regular files. */
  fileCount: number;
  /** Files, directories and symlinks, the root `./` entry included. */
  entryCount: number;
  /** Inflated tar stream size in bytes (headers, contents and padding). */
  expandedBytes: number;
  /** Sum of the regular files' sizes. */
  fileBytes: number;
  /** The entries in archive order, when `listEntries` was set (without the root `./`). */
  entries?: ArchiveEntryHeader[];
}

/**
 * Reads an archive stream to its end and verifies that it is a well-formed, safe tar.gz within
 * the limits. Accepted entries: regular files, directories and symlinks whose target stays inside
 * the archive root (checked lexically; readers never follow links). Hard links, devices, fifos
 * and unknown entry types are refused even when they point inside the root. pax and GNU long
 * names and link targets are read, and checked after they are applied.
 *
 * Errors (all AppError, with a message naming the entry when there is one): INVALID_ARCHIVE
 * (not gzip, truncated gzip, trailing garbage, bad tar header or truncated tar),
 * UNSAFE_ARCHIVE_PATH, UNSAFE_ARCHIVE_ENTRY, ARCHIVE_TOO_LARGE, ARCHIVE_TOO_MANY_ENTRIES,
 * ARCHIVE_EXPANSION_RATIO, CHECKSUM_MISMATCH. An error of the stream itself (the object store)
 * is rethrown unchanged. Details of a limit error carry `compressedBytes` and `expandedBytes`
 * read when it stopped.
 */
export async function verifyArchive(
  stream: Readable,
  options: VerifyArchiveOptions = {},
): Promise<VerifiedArchive> {
  const limits: ArchiveLimits = { ...DEFAULT_ARCHIVE_LIMITS, ...options.limits };
  const expected = options.expectedSha256?.trim().toLowerCase();
  const hash = createHash('sha256');
  let compressedBytes = 0;
  let expandedBytes = 0;
  let entryCount = 0;
  let fileCount = 0;
  let fileBytes = 0;
  let currentEntry: string | undefined;
  const entries: ArchiveEntryHeader[] | undefined = options.listEntries ? [] : undefined;

  const progress = (): Record<string, unknown> => ({
    ...(currentEntry === undefined ? {} : { entry: currentEntry }),
    compressedBytes,
    expandedBytes,
  });
  const where = (): string => (currentEntry === undefined ? '' : ` (at entry "${currentEntry}")`);

  const compressedTap = createCountingTap((chunk) => {
    compressedBytes += chunk.length;
    if (compressedBytes > limits.maxCompressedBytes) {
      throw new AppError('ARCHIVE_TOO_LARGE', {
        message: `The archive is larger than ${limits.maxCompressedBytes} bytes.`,
        details: { limit: 'maxCompressedBytes', max: limits.maxCompressedBytes, ...progress() },
      });
    }
    hash.update(chunk);
  });

  const inflatedTap = createCountingTap((chunk) => {
    expandedBytes += chunk.length;
    if (expandedBytes > limits.maxExpandedBytes) {
      throw new AppError('ARCHIVE_TOO_LARGE', {
        message: `The archive expands to more than ${limits.maxExpandedBytes} bytes${where()}.`,
        details: { limit: 'maxExpandedBytes', max: limits.maxExpandedBytes, ...progress() },
      });
    }
    if (
      expandedBytes > limits.expansionRatioFloorBytes &&
      expandedBytes > limits.maxExpansionRatio * compressedBytes
    ) {
      throw new AppError('ARCHIVE_EXPANSION_RATIO', {
        message: `The archive expands more than ${limits.maxExpansionRatio} times its compressed size${where()}.`,
        details: { limit: 'maxExpansionRatio', max: limits.maxExpansionRatio, ...progress() },
      });
    }
  });

  await readTarGz(stream, {
    compressedTaps: [compressedTap],
    inflatedTaps: [inflatedTap],
    ...(options.signal ? { signal: options.signal } : {}),
    async onEntry(entry) {
      currentEntry = entry.path === '' ? './' : entry.path;
      entryCount += 1;
      if (entryCount > limits.maxEntries) {
        throw new AppError('ARCHIVE_TOO_MANY_ENTRIES', {
          message: `The archive has more than ${limits.maxEntries} entries (stopped at "${currentEntry}").`,
          details: { limit: 'maxEntries', max: limits.maxEntries, ...progress() },
        });
      }
      if (entry.kind === 'file') {
        fileCount += 1;
        fileBytes += entry.size;
        // Refused from the header alone, before a byte of the content is inflated.
        if (fileBytes > limits.maxExpandedBytes) {
          throw new AppError('ARCHIVE_TOO_LARGE', {
            message: `The archive's files add up to more than ${limits.maxExpandedBytes} bytes (at entry "${entry.path}", ${entry.size} bytes).`,
            details: {
              limit: 'maxExpandedBytes',
              max: limits.maxExpandedBytes,
              declaredBytes: fileBytes,
              ...progress(),
            },
          });
        }
      }
      if (entry.path !== '') entries?.push(entry);
    },
  });

  const sha256 = hash.digest('hex');
  if (expected !== undefined && expected !== sha256) {
    throw new AppError('CHECKSUM_MISMATCH', {
      message: `The archive sha256 is ${sha256}, not ${expected}.`,
      details: { expected, actual: sha256 },
    });
  }
  return {
    sha256,
    sizeBytes: compressedBytes,
    fileCount,
    entryCount,
    expandedBytes,
    fileBytes,
    ...(entries ? { entries } : {}),
  };
}

/** A pass-through that lets `inspect` see (and refuse, by throwing) every chunk. */
function createCountingTap(inspect: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        inspect(chunk);
      } catch (err) {
        callback(err as Error);
        return;
      }
      callback(null, chunk);
    },
  });
}
