/**
 * What `vigil scan` packs from a local directory: its files after `.gitignore` and the default
 * excludes, checked against the engine's selection settings, as a reproducible tar.gz.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import ignore, { type Ignore } from 'ignore';
import tar from 'tar-stream';
import { classifyPath, loadSelectionSettings, ProjectSettingsError } from '../engine/sources/selection.ts';
import { UsageError } from './cli-error.ts';

/** Folders never packed, whatever `.gitignore` says: dependencies, VCS data and build output. */
export const DEFAULT_EXCLUDES = [
  'node_modules/',
  '.git/',
  '.hg/',
  '.svn/',
  'artifacts/',
  'cache/',
  'out/',
  'coverage/',
  '.next/',
  'typechain-types/',
  'broadcast/',
  '.vigil-scan/',
];
/** What the Solidity rules analyse (secrets are looked for in every file). */
export const SOLIDITY = /\.sol$/i;

/** The files a directory contributes: `.gitignore` files (at every level) and the default excludes honoured. */
export async function collectFiles(root: string): Promise<Array<{ path: string; size: number }>> {
  const files: Array<{ path: string; size: number }> = [];
  async function walk(relative: string, rules: Array<{ base: string; ig: Ignore }>): Promise<void> {
    const here = path.join(root, relative);
    const local = await readFile(path.join(here, '.gitignore'), 'utf8').catch(() => null);
    const scoped = local === null ? rules : [...rules, { base: relative, ig: ignore().add(local) }];
    const entries = await readdir(here, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      const isDir = entry.isDirectory();
      const ignored = scoped.some(({ base, ig }) => {
        const inner = base ? rel.slice(base.length + 1) : rel;
        return ig.ignores(isDir ? `${inner}/` : inner);
      });
      if (ignored) continue;
      if (isDir) await walk(rel, scoped);
      else if (entry.isFile()) files.push({ path: rel, size: (await stat(path.join(root, rel))).size });
    }
  }
  await walk('', [{ base: '', ig: ignore().add(DEFAULT_EXCLUDES) }]);
  return files;
}

/**
 * How the server's engine will select the files of a local scan (its settings files read as it
 * reads them, under the workspace prefix). A settings file it cannot use is a UsageError.
 */
export async function selectionOf(
  root: string,
  files: Array<{ path: string; size: number }>,
  prefix: string | undefined,
): Promise<{ solidityReported: number }> {
  const under = prefix
    ?.split('/')
    .filter((s) => s && s !== '.')
    .join('/');
  const listed = under ? files.filter((f) => f.path.startsWith(`${under}/`)) : files;
  try {
    const settings = await loadSelectionSettings(
      { read: (p: string) => readFile(path.join(root, ...p.split('/'))) },
      listed,
    );
    return {
      solidityReported: listed.filter(
        (f) => SOLIDITY.test(f.path) && classifyPath(f.path, settings) === 'report',
      ).length,
    };
  } catch (err) {
    if (err instanceof ProjectSettingsError)
      throw new UsageError(`${err.message} Nothing was uploaded or charged.`);
    throw err;
  }
}

/** Packs the listed files into a tar.gz; the same files give the same bytes (for `--resume`). */
export async function packFiles(root: string, files: Array<{ path: string }>, target: string): Promise<void> {
  const pack = tar.pack();
  const output = pipeline(pack, createGzip(), createWriteStream(target));
  for (const file of files) {
    const full = path.join(root, file.path);
    const { size, mode, mtime } = await stat(full);
    await new Promise<void>((resolve, reject) => {
      const sink = pack.entry({ name: file.path, size, mode, mtime }, (err) =>
        err ? reject(err) : resolve(),
      );
      createReadStream(full).on('error', reject).pipe(sink);
    });
  }
  pack.finalize();
  await output;
}

/** Packs a directory as `vigil scan` would. */
export async function packDirectory(root: string, target: string): Promise<{ files: number }> {
  const files = await collectFiles(root);
  await packFiles(root, files, target);
  return { files: files.length };
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
