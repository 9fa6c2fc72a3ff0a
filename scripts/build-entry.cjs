// What a start of `vigil` needs of the compiled build (scripts/build.mjs makes it): which entry is
// current, and running the engine's single file from its code cache. CommonJS, like
// bin/vigil.js: a `vigil engine scan` then starts without Node's ES module loader, which would
// cost each process about 5 ms before its first line (ADR 0021). Plain JavaScript: it runs
// before anything is compiled.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { fileURLToPath, pathToFileURL } = require('node:url');

const root = path.resolve(__dirname, '..');
const serverDir = path.join(root, 'dist/server');
const manifestFile = path.join(serverDir, 'build.json');

/** Entry points: output name → source and the file the build writes for it. */
const ENTRIES = {
  main: { source: 'src/main.ts', file: 'main.js' },
  'engine-cli': { source: 'src/cli/engine-main.ts', file: 'engine-cli.cjs' },
};
/** Where V8 keeps the compiled code of a CommonJS entry, beside it. */
const CODE_CACHE_SUFFIX = '.v8-cache';

/**
 * The file URL of the entry `name` (`main`, `engine-cli`) of the current build, or `undefined`
 * when there is none or a source changed since it was made (size, then content when only the
 * modification time moved). Without `src/` (an installation of the build alone) the build is
 * current by definition.
 * @param {keyof typeof ENTRIES} name
 * @returns {Promise<URL | undefined>}
 */
async function currentEntry(name) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch {
    return undefined;
  }
  const entry = path.join(serverDir, manifest.dir, ENTRIES[name].file);
  if (!fs.existsSync(entry)) return undefined;
  if (!fs.existsSync(path.join(root, 'src'))) return pathToFileURL(entry);
  // An entry with its own list (a file without chunks) depends on those inputs only.
  const own = manifest.entryInputs?.[name];
  const inputs = Object.entries(manifest.inputs ?? {}).filter(([file]) => !own || own.includes(file));
  if (inputs.length === 0) return undefined;
  const same = await Promise.all(inputs.map(([file, fp]) => unchanged(file, fp)));
  return same.every(Boolean) ? pathToFileURL(entry) : undefined;
}

/**
 * The file URL of the entry `name` of the build in `dir` (what `build` returns).
 * @param {string} dir
 * @param {keyof typeof ENTRIES} name
 */
function entryOf(dir, name) {
  return pathToFileURL(path.join(serverDir, dir, ENTRIES[name].file));
}

/** Whether the source directory exists (a checkout, where the build can be made). */
function canBuild() {
  return fs.existsSync(path.join(root, 'src/main.ts'));
}

/**
 * Whether a file is as fingerprinted: same size and time, or same size and content (a copy
 * that did not keep modification times).
 * @param {string} file
 * @param {[number, number, string]} fp
 */
async function unchanged(file, [size, mtime, sha1]) {
  const abs = path.join(root, file);
  // Synchronous: a few hundred stats take ~1 ms this way, ~5 ms through the thread pool.
  const st = fs.statSync(abs, { throwIfNoEntry: false });
  if (!st || st.size !== size) return false;
  if (Math.round(st.mtimeMs) === mtime) return true;
  const { createHash } = require('node:crypto');
  return (
    createHash('sha1')
      .update(await fs.promises.readFile(abs))
      .digest('hex') === sha1
  );
}

/**
 * Runs `engineMain` of the engine's CommonJS file (`engine-cli.cjs`) with `argv`, its code
 * compiled from V8's code cache beside it when that cache fits this Node. Without a cache, or
 * with one V8 rejects (another Node version or other V8 flags), a new one is written after the
 * command (where the folder can be written; concurrent writers rename whole files into place).
 * With source maps on (`--debug`), Node's own loader runs the file, so that stack traces name the
 * sources.
 * @param {URL} entry
 * @param {string[]} argv
 */
async function runEngineCli(entry, argv) {
  const file = fileURLToPath(entry);
  const Module = require('node:module');
  const vm = require('node:vm');
  const requireFromEntry = Module.createRequire(file);
  if (process.sourceMapsEnabled) return requireFromEntry(file).engineMain(argv);
  const cacheFile = `${file}${CODE_CACHE_SUFFIX}`;
  /** @type {Buffer | undefined} */
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // no cache yet: written below
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, 'utf8')), { filename: file, cachedData });
  const loaded = { exports: /** @type {{ engineMain(argv: string[]): Promise<void> }} */ ({}) };
  script.runInThisContext()(loaded.exports, requireFromEntry, loaded, file, path.dirname(file));
  await loaded.exports.engineMain(argv);
  if (cachedData && !script.cachedDataRejected) return;
  // After the command: the cache then holds the functions it compiled, not only the top level.
  try {
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, script.createCachedData());
    fs.renameSync(tmp, cacheFile);
  } catch {
    // A read-only installation: the next run compiles again.
  }
}

module.exports = {
  root,
  serverDir,
  manifestFile,
  ENTRIES,
  CODE_CACHE_SUFFIX,
  currentEntry,
  entryOf,
  canBuild,
  unchanged,
  runEngineCli,
};
