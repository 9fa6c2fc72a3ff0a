// The compiled build of the server and the command line: esbuild bundles `src/main.ts` and the
// engine commands (`src/cli/engine-main.ts`) into `dist/server/build-<hash>/`, code shared between them in chunks and every dynamic import in
// its own chunk (so `vigil --help` loads neither Fastify nor the database). npm packages stay
// external. `dist/server/build.json` names the current build and fingerprints its inputs; the
// `vigil` binary checks them before each start and, in a source checkout, rebuilds when a source
// changed (see docs/adr/0041-compiled-build.md).
//
//   node scripts/build.mjs                  build once
//   node scripts/build.mjs --watch [args]   rebuild on every change and (re)start `vigil <args>`
//
// Plain JavaScript: it runs before anything is compiled.
// `node:crypto` and `node:child_process` load when a build or a changed file needs them: the
// freshness check before every start needs neither (~6 ms less at each start).
import { statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(root, 'dist/server');
const manifestFile = path.join(serverDir, 'build.json');
const thisFile = path.relative(root, fileURLToPath(import.meta.url));

/** Entry points: output name → source. */
const ENTRIES = {
  main: 'src/main.ts',
  'engine-main': 'src/cli/engine-main.ts',
};

/** A build replaced this long ago is deleted (a process started from it may still load its chunks). */
const KEEP_REPLACED_MS = 24 * 3600_000;

/**
 * The file URL of the entry `name` (`main`, `engine-main`) of the current build, or `undefined`
 * when there is none or a source changed since it was made (size, then content when only the
 * modification time moved). Without `src/` (an installation of the build alone) the build is
 * current by definition.
 * @param {keyof typeof ENTRIES} name
 * @returns {Promise<URL | undefined>}
 */
export async function currentEntry(name) {
  let manifest;
  try {
    manifest = JSON.parse(await readFile(manifestFile, 'utf8'));
  } catch {
    return undefined;
  }
  const entry = path.join(serverDir, manifest.dir, `${name}.js`);
  if (!(await exists(entry))) return undefined;
  if (!(await exists(path.join(root, 'src')))) return pathToFileURL(entry);
  const inputs = Object.entries(manifest.inputs ?? {});
  if (inputs.length === 0) return undefined;
  const same = await Promise.all(inputs.map(([file, fp]) => unchanged(file, fp)));
  return same.every(Boolean) ? pathToFileURL(entry) : undefined;
}

/**
 * The file URL of the entry `name` of the build in `dir` (what `build` returns).
 * @param {string} dir
 * @param {keyof typeof ENTRIES} name
 */
export function entryOf(dir, name) {
  return pathToFileURL(path.join(serverDir, dir, `${name}.js`));
}

/** Whether the source directory exists (a checkout, where the build can be made). */
export function canBuild() {
  return exists(path.join(root, 'src/main.ts'));
}

/**
 * Builds into a new `dist/server/build-<hash>/` and makes it current. Throws a `BuildError` with
 * esbuild's messages when the sources do not compile.
 * @param {{ log?: (line: string) => void }} [options]
 */
export async function build(options = {}) {
  const esbuild = await import('esbuild');
  const started = Date.now();
  let result;
  try {
    result = await esbuild.build(buildOptions());
  } catch (err) {
    throw new BuildError(await formatErrors(esbuild, err));
  }
  const dir = await writeBuild(result);
  options.log?.(`built dist/server/${dir} in ${Date.now() - started} ms`);
  return dir;
}

/** Compile errors, formatted as esbuild prints them. */
export class BuildError extends Error {
  name = 'BuildError';
}

/** @returns {import('esbuild').BuildOptions & { write: false, metafile: true }} */
function buildOptions() {
  return {
    entryPoints: ENTRIES,
    absWorkingDir: root,
    // The output folder only names the files and sets the relative paths: esbuild writes nothing
    // (`write: false`); `writeBuild` puts them into the build's own folder beside it (the same
    // depth, so relative paths to the sources hold).
    outdir: path.join(serverDir, 'build'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [sourceLocations],
  };
}

/**
 * `import.meta.url` in a source module names its source file, wherever the module's code lands:
 * the paths resolved next to it (migrations, the console's files, the examples, packages through
 * `createRequire`) stay the ones of the checkout. The URL is computed from the chunk's own
 * location, so the checkout can move.
 */
const sourceLocations = {
  name: 'source-locations',
  /** @param {import('esbuild').PluginBuild} b */
  setup(b) {
    b.onLoad({ filter: /\.(ts|mjs)$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (/\bimport\.meta\.(dirname|filename)\b/.test(source))
        return {
          errors: [
            { text: 'use import.meta.url (import.meta.dirname/filename are not rewritten by the build)' },
          ],
        };
      const here = JSON.stringify(path.relative(path.join(serverDir, 'build'), args.path));
      return {
        contents: source.replace(/\bimport\.meta\.url\b/g, () => `new URL(${here}, import.meta.url).href`),
        loader: args.path.endsWith('.ts') ? 'ts' : 'js',
      };
    });
  },
};

/**
 * @param {typeof import('esbuild')} esbuild
 * @param {unknown} err
 */
async function formatErrors(esbuild, err) {
  const errors = /** @type {{ errors?: import('esbuild').Message[] }} */ (err).errors;
  if (!errors?.length) return String(err);
  return (await esbuild.formatMessages(errors, { kind: 'error', color: false })).join('').trimEnd();
}

/**
 * Writes the outputs into a folder named by their hash (concurrent builds of the same sources
 * write the same files), then points `build.json` at it and removes builds replaced long ago.
 * @param {import('esbuild').BuildResult & { outputFiles: import('esbuild').OutputFile[], metafile: import('esbuild').Metafile }} result
 */
async function writeBuild(result) {
  const { createHash } = await import('node:crypto');
  const hash = createHash('sha256');
  for (const out of result.outputFiles) hash.update(out.path).update(out.hash);
  const dir = `build-${hash.digest('hex').slice(0, 12)}`;
  const esbuildDir = path.join(serverDir, 'build');
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  for (const out of result.outputFiles) {
    const file = path.join(serverDir, dir, path.relative(esbuildDir, out.path));
    await mkdir(path.dirname(file), { recursive: true });
    // Renamed into place: a process starting meanwhile never reads a half-written file.
    await writeFile(`${file}.${tag}.tmp`, out.contents);
    await rename(`${file}.${tag}.tmp`, file);
  }
  /** @type {Record<string, [number, number, string]>} */
  const inputs = {};
  for (const file of [...Object.keys(result.metafile.inputs), thisFile]) {
    if (file.startsWith('node_modules/')) continue;
    inputs[file] = await fingerprint(file);
  }
  let replaced = {};
  try {
    const previous = JSON.parse(await readFile(manifestFile, 'utf8'));
    replaced = previous.replaced ?? {};
    if (previous.dir && previous.dir !== dir) replaced[previous.dir] = Date.now();
  } catch {
    // no build yet
  }
  delete replaced[dir];
  const manifestTmp = `${manifestFile}.${tag}.tmp`;
  await writeFile(manifestTmp, JSON.stringify({ dir, inputs, replaced }));
  await rename(manifestTmp, manifestFile);
  await removeOld(dir, replaced);
  return dir;
}

/**
 * Builds other than `keep` replaced more than a day ago, and any folder the manifest no longer
 * knows (lost to a concurrent build) older than that.
 * @param {string} keep
 * @param {Record<string, number>} replaced
 */
async function removeOld(keep, replaced) {
  const cutoff = Date.now() - KEEP_REPLACED_MS;
  for (const name of await readdir(serverDir)) {
    if (name === keep || !name.startsWith('build-')) continue;
    const since = replaced[name] ?? (await stat(path.join(serverDir, name)).catch(() => undefined))?.mtimeMs;
    if (since !== undefined && since < cutoff)
      await rm(path.join(serverDir, name), { recursive: true, force: true });
  }
}

/**
 * Size, modification time and content hash of a file relative to the root.
 * @param {string} file
 * @returns {Promise<[number, number, string]>}
 */
async function fingerprint(file) {
  const abs = path.join(root, file);
  const [st, content, { createHash }] = await Promise.all([stat(abs), readFile(abs), import('node:crypto')]);
  return [st.size, Math.round(st.mtimeMs), createHash('sha1').update(content).digest('hex')];
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
  const st = statSync(abs, { throwIfNoEntry: false });
  if (!st || st.size !== size) return false;
  if (Math.round(st.mtimeMs) === mtime) return true;
  const { createHash } = await import('node:crypto');
  return (
    createHash('sha1')
      .update(await readFile(abs))
      .digest('hex') === sha1
  );
}

/** @param {string} file */
async function exists(file) {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

/**
 * Rebuilds on every change of an input and restarts `node bin/vigil.js <args>` after each
 * build that succeeds (nothing is started when no arguments are given).
 * @param {string[]} args
 */
async function watch(args) {
  const esbuild = await import('esbuild');
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  const stop = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const restart = {
    name: 'restart',
    /** @param {import('esbuild').PluginBuild} b */
    setup(b) {
      b.onEnd(async (result) => {
        if (result.errors.length > 0) {
          process.stderr.write(`${await formatErrors(esbuild, result)}\n[build] waiting for a change\n`);
          return;
        }
        const dir = await writeBuild(/** @type {any} */ (result));
        process.stderr.write(`[build] dist/server/${dir}\n`);
        if (args.length === 0) return;
        await stop();
        const { spawn } = await import('node:child_process');
        child = spawn(process.execPath, [path.join(root, 'bin/vigil.js'), ...args], { stdio: 'inherit' });
      });
    },
  };
  const options = buildOptions();
  const context = await esbuild.context({ ...options, plugins: [...(options.plugins ?? []), restart] });
  await context.watch();
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, async () => {
      await context.dispose();
      await stop();
      process.exit(0);
    });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [flag, ...rest] = process.argv.slice(2);
  if (flag === '--watch') await watch(rest);
  else {
    try {
      await build({ log: (line) => process.stdout.write(`${line}\n`) });
    } catch (err) {
      process.stderr.write(`${err instanceof BuildError ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
