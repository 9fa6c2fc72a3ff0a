/**
 * Streaming reader of tar.gz archives shared by verification and by the source tree.
 *
 * It never writes an entry to disk under the entry's own name and never follows a link: every
 * header is checked (path, type, link target) before its body is handed on, so an archive that
 * slipped past verification is still refused here.
 */
import { posix } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Header } from 'tar-stream';
import tar from 'tar-stream';
import { AppError, isAppError } from '../../errors.ts';

/** The entry kinds an archive may hold; every other tar type is refused. */
export type ArchiveEntryKind = 'file' | 'directory' | 'symlink';

/** A tar header that passed the safety checks. */
export interface ArchiveEntryHeader {
  /** Normalized POSIX path relative to the archive root (no `./`, no trailing `/`; `''` is the root directory). */
  readonly path: string;
  readonly kind: ArchiveEntryKind;
  /** Bytes of content the header declares (0 for directories and links). */
  readonly size: number;
  /** The link target as written in the archive, for symlinks only. */
  readonly linkTarget?: string;
}

/** Longest entry path accepted, in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_ARCHIVE_PATH_BYTES = 4096;

const DRIVE_LETTER = /^[A-Za-z]:/;

/** Size of the inflated chunks gunzip hands on (zlib's default is 16 KiB). */
const GUNZIP_CHUNK_BYTES = 64 * 1024;

/**
 * Normalizes an entry name to a POSIX path relative to the archive root, or refuses it.
 *
 * Refused (UNSAFE_ARCHIVE_PATH): absolute paths, Windows drive paths (`C:\x`, `C:/x`), any
 * backslash (a separator on Windows, so `a\..\b` would escape there), `..` segments, control
 * characters and paths longer than {@link MAX_ARCHIVE_PATH_BYTES}. `.` and empty segments are
 * dropped, so `./src//a.sol` becomes `src/a.sol`. Returns `''` for the root itself (`./`).
 */
export function normalizeArchivePath(name: string): string {
  const refuse = (why: string): never => {
    throw new AppError('UNSAFE_ARCHIVE_PATH', {
      message: `The archive entry "${printable(name)}" has an unsafe path: ${why}.`,
      details: { entry: printable(name) },
    });
  };
  if (Buffer.byteLength(name) > MAX_ARCHIVE_PATH_BYTES) refuse(`longer than ${MAX_ARCHIVE_PATH_BYTES} bytes`);
  if (hasControlCharacter(name)) refuse('it contains a control character');
  if (name.includes('\\')) refuse('it contains a backslash');
  if (DRIVE_LETTER.test(name)) refuse('it starts with a drive letter');
  if (name.startsWith('/')) refuse('it is absolute');
  const segments: string[] = [];
  for (const segment of name.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') refuse('it has a ".." segment');
    segments.push(segment);
  }
  return segments.join('/');
}

/**
 * Resolves a symlink target against the link's directory without touching any file system.
 * Returns the normalized target, or null when it is absolute or leaves the archive root.
 * Links are never followed by the readers, so a lexical check is all that is needed.
 */
export function resolveSymlinkTarget(linkPath: string, target: string): string | null {
  if (target === '' || target.startsWith('/') || target.includes('\\') || DRIVE_LETTER.test(target))
    return null;
  if (hasControlCharacter(target)) return null;
  const stack = posix.dirname(linkPath) === '.' ? [] : posix.dirname(linkPath).split('/');
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (stack.length === 0) return null;
      stack.pop();
    } else {
      stack.push(segment);
    }
  }
  return stack.join('/');
}

/**
 * Checks one raw tar header and returns it normalized, or throws UNSAFE_ARCHIVE_PATH /
 * UNSAFE_ARCHIVE_ENTRY naming the entry. The root directory entry (`./`) has the path `''`.
 */
export function checkArchiveHeader(header: Header): ArchiveEntryHeader {
  const path = normalizeArchivePath(header.name);
  const name = printable(header.name);
  const refuseEntry = (why: string): never => {
    throw new AppError('UNSAFE_ARCHIVE_ENTRY', {
      message: `The archive entry "${name}" is not allowed: ${why}.`,
      details: { entry: name },
    });
  };
  switch (header.type) {
    case 'file':
    case 'contiguous-file':
      if (path === '') return refuseEntry('a file needs a name');
      return { path, kind: 'file', size: header.size ?? 0 };
    case 'directory':
      return { path, kind: 'directory', size: 0 };
    case 'symlink': {
      const target = header.linkname ?? '';
      if (path === '') return refuseEntry('a link needs a name');
      if (resolveSymlinkTarget(path, target) === null) {
        return refuseEntry(`it is a symlink to "${printable(target)}", outside the archive root`);
      }
      return { path, kind: 'symlink', size: 0, linkTarget: target };
    }
    case 'link':
      return refuseEntry('hard links are not accepted');
    case 'character-device':
    case 'block-device':
      return refuseEntry('device entries are not accepted');
    case 'fifo':
      return refuseEntry('fifo entries are not accepted');
    default:
      return refuseEntry('its tar entry type is not supported');
  }
}

/** Hooks of {@link readTarGz}. */
export interface ReadTarGzOptions {
  /**
   * Called for each accepted entry (the root `./` included), in archive order, with its content. The body may be left
   * unread: the reader drains it. The next entry is not parsed until the promise settles, which
   * keeps memory flat however large the archive is.
   */
  onEntry(entry: ArchiveEntryHeader, body: AsyncIterable<unknown>): Promise<void>;
  /** Transforms placed before gunzip (they see the compressed bytes). */
  compressedTaps?: Transform[];
  /** Transforms placed after gunzip (they see the tar bytes as they are inflated). */
  inflatedTaps?: Transform[];
  signal?: AbortSignal;
}

/**
 * Streams a tar.gz through gunzip and a tar parser, checking every header.
 *
 * Errors: malformed gzip or tar → INVALID_ARCHIVE; unsafe entries → UNSAFE_ARCHIVE_PATH or
 * UNSAFE_ARCHIVE_ENTRY; an AppError thrown by a tap or by `onEntry` is passed through unchanged;
 * an error of the source stream (the object store) is rethrown as it is, because it says nothing
 * about the archive.
 */
export async function readTarGz(source: Readable, options: ReadTarGzOptions): Promise<void> {
  // 64 KiB output chunks: a quarter of the default's callbacks, stream hops and tar parser calls.
  const gunzip = createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES });
  const extract = tar.extract();
  // Pipeline failures spread: the stream that failed first is where the error comes from, the
  // others are only destroyed with it. The first stage to report an error owns it.
  const origins = new WeakMap<object, ErrorOrigin>();
  const mark = (origin: ErrorOrigin) => (err: unknown) => {
    if (typeof err === 'object' && err !== null && !origins.has(err)) origins.set(err, origin);
  };
  source.on('error', mark('source'));
  gunzip.on('error', mark('gzip'));
  extract.on('error', mark('tar'));

  extract.on('entry', (header, stream, next) => {
    // The parser destroys the entry stream when the pipeline fails; without a listener that
    // destruction would surface as an uncaught error.
    stream.on('error', noop);
    const settled = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
    });
    const handle = async (): Promise<void> => {
      await options.onEntry(checkArchiveHeader(header), stream);
      stream.resume();
      await settled;
    };
    handle().then(
      () => next(),
      (err: unknown) => next(err instanceof Error ? err : new Error(String(err))),
    );
  });

  try {
    await pipeline(
      [source, ...(options.compressedTaps ?? []), gunzip, ...(options.inflatedTaps ?? []), extract],
      options.signal ? { signal: options.signal } : {},
    );
  } catch (err) {
    // An abort is the caller's doing, not a fault of the archive.
    if (options.signal?.aborted) throw err;
    throw translateReadError(err, origins);
  }
}

type ErrorOrigin = 'source' | 'gzip' | 'tar';

function translateReadError(err: unknown, origins: WeakMap<object, ErrorOrigin>): unknown {
  if (isAppError(err) || typeof err !== 'object' || err === null) return err;
  const origin = origins.get(err);
  const message = err instanceof Error ? err.message : String(err);
  if (origin === 'gzip') {
    return new AppError('INVALID_ARCHIVE', {
      message: `The archive is not a valid gzip stream (${message}).`,
      details: { reason: 'gzip' },
      cause: err,
    });
  }
  if (origin === 'tar') {
    return new AppError('INVALID_ARCHIVE', {
      message: `The archive is not a valid tar file (${message}).`,
      details: { reason: 'tar' },
      cause: err,
    });
  }
  return err;
}

/** Entry names go into messages and logs; keep them short and free of control characters. */
function printable(name: string): string {
  let clean = '';
  for (const char of name) clean += isControlCode(char.charCodeAt(0)) ? '?' : char;
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

/** C0 controls and DEL never occur in real source paths and confuse terminals and logs. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) if (isControlCode(value.charCodeAt(i))) return true;
  return false;
}

function isControlCode(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

function noop(): void {}
