/**
 * The scan worker as one JavaScript module, for engines that run from TypeScript source. Loading
 * the worker through tsx makes every worker thread start its own loader thread and resolve each
 * module through it (about a third of a second of CPU per worker); a bundle of the worker's
 * fourteen modules loads in a few milliseconds. The bundle is built with esbuild (packages stay
 * external) into `node_modules/.cache/vigil-engine/` and rebuilt when one of its inputs changes
 * (size or modification time); when it cannot be built the pool boots the worker through tsx.
 */
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Manifest {
  bundle: string;
  inputs: Record<string, [number, number]>;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const cacheDir = path.join(repoRoot, 'node_modules/.cache/vigil-engine');
const manifestFile = path.join(cacheDir, 'scan-worker.json');
const entry = path.join(here, 'scan-worker.ts');

let pending: Promise<URL | undefined> | undefined;

/** The bundled worker (built or reused), or `undefined` when it cannot be built here. */
export function bundledWorker(): Promise<URL | undefined> {
  pending ??= current()
    .then((url) => url ?? build())
    .catch(() => undefined);
  return pending;
}

async function fingerprint(file: string): Promise<[number, number] | undefined> {
  try {
    const st = await stat(path.join(repoRoot, file));
    return [st.size, Math.round(st.mtimeMs)];
  } catch {
    return undefined;
  }
}

/** The cached bundle when every recorded input is unchanged. */
async function current(): Promise<URL | undefined> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
  const checks = await Promise.all(
    Object.entries(manifest.inputs).map(async ([file, [size, mtime]]) => {
      const now = await fingerprint(file);
      return now !== undefined && now[0] === size && now[1] === mtime;
    }),
  );
  if (!checks.every(Boolean) || checks.length === 0) return undefined;
  const bundle = path.join(cacheDir, manifest.bundle);
  if (!(await fingerprint(path.relative(repoRoot, bundle)))) return undefined;
  return pathToFileURL(bundle);
}

async function build(): Promise<URL | undefined> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: repoRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const out = result.outputFiles[0];
  if (!out) return undefined;
  const inputs: Manifest['inputs'] = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const fp = await fingerprint(file);
    if (!fp) return undefined;
    inputs[file] = fp;
  }
  // Unique names, renamed into place: concurrent scans never read a half-written file.
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const bundleName = `scan-worker-${tag}.mjs`;
  await mkdir(cacheDir, { recursive: true });
  await writeFile(path.join(cacheDir, `${bundleName}.tmp`), out.contents);
  await rename(path.join(cacheDir, `${bundleName}.tmp`), path.join(cacheDir, bundleName));
  const manifestTmp = `${manifestFile}.${tag}.tmp`;
  await writeFile(manifestTmp, JSON.stringify({ bundle: bundleName, inputs } satisfies Manifest));
  await rename(manifestTmp, manifestFile);
  await removeStale(bundleName);
  return pathToFileURL(path.join(cacheDir, bundleName));
}

/** Bundles replaced more than an hour ago (a scan started before the rebuild may still load its own). */
async function removeStale(keep: string): Promise<void> {
  const cutoff = Date.now() - 3600_000;
  for (const name of await readdir(cacheDir)) {
    if (name === keep || !/^scan-worker-.*\.mjs(\.tmp)?$/.test(name)) continue;
    const file = path.join(cacheDir, name);
    const st = await stat(file).catch(() => undefined);
    if (st && st.mtimeMs < cutoff) await rm(file, { force: true });
  }
}
