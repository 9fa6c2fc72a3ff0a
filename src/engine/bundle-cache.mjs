// Bundles of TypeScript entry points for code that runs from source: loading a module graph
// through tsx costs a loader thread and a round trip per module; one esbuild bundle (packages stay
// external, each module keeps its own `import.meta.url`) loads in milliseconds. Bundles live in
// `node_modules/.cache/vigil-engine/` and are rebuilt when an input's size or modification time
// changes. Plain JavaScript: `bin/vigil.js` uses it before tsx is registered.
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheDir = path.join(repoRoot, 'node_modules/.cache/vigil-engine');

/**
 * The bundle of `entry` (a path relative to the repository root) under `name`: reused when
 * fresh, built otherwise; `undefined` when it cannot be built (no esbuild, a build error).
 * @param {string} name
 * @param {string} entry
 * @returns {Promise<URL | undefined>}
 */
export async function bundleOf(name, entry) {
  try {
    return (await current(name)) ?? (await build(name, entry));
  } catch {
    return undefined;
  }
}

/** @param {string} file */
async function fingerprint(file) {
  try {
    const st = await stat(path.join(repoRoot, file));
    return [st.size, Math.round(st.mtimeMs)];
  } catch {
    return undefined;
  }
}

/** @param {string} name */
async function current(name) {
  let manifest;
  try {
    manifest = JSON.parse(await readFile(path.join(cacheDir, `${name}.json`), 'utf8'));
  } catch {
    return undefined;
  }
  const entries = Object.entries(manifest.inputs ?? {});
  if (entries.length === 0) return undefined;
  const checks = await Promise.all(
    entries.map(async ([file, [size, mtime]]) => {
      const now = await fingerprint(file);
      return now !== undefined && now[0] === size && now[1] === mtime;
    }),
  );
  if (!checks.every(Boolean)) return undefined;
  const bundle = path.join(cacheDir, manifest.bundle);
  if (!(await fingerprint(path.relative(repoRoot, bundle)))) return undefined;
  return pathToFileURL(bundle);
}

/** Each module keeps the `import.meta.url` of its source file (paths next to it stay right). */
const keepModuleUrls = {
  name: 'keep-module-urls',
  /** @param {import('esbuild').PluginBuild} b */
  setup(b) {
    b.onLoad({ filter: /\.(ts|mjs)$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(
        /\bimport\.meta\.url\b/g,
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: args.path.endsWith('.ts') ? 'ts' : 'js',
    }));
  },
};

/**
 * @param {string} name
 * @param {string} entry
 */
async function build(name, entry) {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(repoRoot, entry)],
    absWorkingDir: repoRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [keepModuleUrls],
  });
  const out = result.outputFiles[0];
  if (!out) return undefined;
  /** @type {Record<string, number[]>} */
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const fp = await fingerprint(file);
    if (!fp) return undefined;
    inputs[file] = fp;
  }
  // Unique names renamed into place: concurrent runs never read a half-written file.
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  const bundleName = `${name}-${tag}.mjs`;
  await mkdir(cacheDir, { recursive: true });
  await writeFile(path.join(cacheDir, `${bundleName}.tmp`), out.contents);
  await rename(path.join(cacheDir, `${bundleName}.tmp`), path.join(cacheDir, bundleName));
  const manifestTmp = path.join(cacheDir, `${name}.json.${tag}.tmp`);
  await writeFile(manifestTmp, JSON.stringify({ bundle: bundleName, inputs }));
  await rename(manifestTmp, path.join(cacheDir, `${name}.json`));
  await removeStale(name, bundleName);
  return pathToFileURL(path.join(cacheDir, bundleName));
}

/**
 * Bundles replaced more than an hour ago (a run started before the rebuild may still load its own).
 * @param {string} name
 * @param {string} keep
 */
async function removeStale(name, keep) {
  const cutoff = Date.now() - 3600_000;
  for (const file of await readdir(cacheDir)) {
    if (file === keep || !file.startsWith(`${name}-`)) continue;
    const st = await stat(path.join(cacheDir, file)).catch(() => undefined);
    if (st && st.mtimeMs < cutoff) await rm(path.join(cacheDir, file), { force: true });
  }
}
