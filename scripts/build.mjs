// The compiled build of the server and the command line, in `dist/server/build-<hash>/`:
// - `main.js`: esbuild bundles `src/main.ts`, every dynamic import in its own chunk (so
//   `vigil --help` loads neither Fastify nor the database); npm packages stay external.
// - `engine-cli.cjs`: the engine commands (`src/cli/engine-main.ts`, what `vigil engine …` runs) in
//   one CommonJS file with the npm packages they use, and `engine-cli.cjs.v8-cache`, V8's code
//   cache of that file made by a scan of the example project: a process then loads one file and
//   compiles almost nothing (docs/adr/0021-engine-cli-single-file-and-code-cache.md).
// `dist/server/build.json` names the current build and fingerprints its inputs; the `vigil` binary
// checks them before each start and, in a source checkout, rebuilds when a source changed (see
// docs/adr/0041-compiled-build.md).
//
//   node scripts/build.mjs                  build once
//   node scripts/build.mjs --watch [args]   rebuild on every change and (re)start `vigil <args>`
//
// Plain JavaScript: it runs before anything is compiled. The freshness check before every start
// and the engine's loader are in build-entry.cjs, which needs neither this module nor
// `node:crypto` nor `node:child_process` (unless a file changed).
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CODE_CACHE_SUFFIX,
  canBuild,
  currentEntry,
  ENTRIES,
  entryOf,
  manifestFile,
  root,
  runEngineCli,
  serverDir,
} from './build-entry.cjs';
import { buildNative } from './build-native.mjs';

// What a start needs (which entry is current, running the engine's file) lives in
// build-entry.cjs, which bin/vigil.js loads without the ES module loader.
export { canBuild, currentEntry, entryOf, runEngineCli };

const thisFile = path.relative(root, fileURLToPath(import.meta.url));

/** A build replaced this long ago is deleted (a process started from it may still load its chunks). */
const KEEP_REPLACED_MS = 24 * 3600_000;

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
    result = mergeResults(
      await Promise.all([esbuild.build(buildOptions()), esbuild.build(engineCliOptions())]),
    );
  } catch (err) {
    throw new BuildError(await formatErrors(esbuild, err));
  }
  const dir = await writeBuild(result);
  // Before the code cache: the scan that writes it then runs the parser the engine will run.
  await buildNative({ log: options.log });
  await makeEngineCodeCache(dir);
  options.log?.(`built dist/server/${dir} in ${Date.now() - started} ms`);
  return dir;
}

/**
 * The outputs and inputs of several esbuild builds as one result.
 * @param {Array<import('esbuild').BuildResult & { outputFiles: import('esbuild').OutputFile[], metafile: import('esbuild').Metafile }>} results
 */
function mergeResults(results) {
  return {
    ...results[0],
    outputFiles: results.flatMap((r) => r.outputFiles),
    metafile: {
      inputs: Object.assign({}, ...results.map((r) => r.metafile.inputs)),
      outputs: Object.assign({}, ...results.map((r) => r.metafile.outputs)),
    },
  };
}

/** Compile errors, formatted as esbuild prints them. */
export class BuildError extends Error {
  name = 'BuildError';
}

/** @returns {import('esbuild').BuildOptions & { write: false, metafile: true }} */
function buildOptions() {
  return {
    entryPoints: { main: ENTRIES.main.source },
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
 * The engine commands as one CommonJS file, npm packages included: Node then resolves and loads
 * one file instead of a module graph, and V8 can keep its compiled code (`runEngineCli`). Each
 * package comes in the build it gives `require` (one module format throughout, and no `import()`,
 * which code compiled through `vm.Script` cannot run). `import.meta.url` is the bundle's own URL,
 * from which `sourceLocations` computes each source file's. Whitespace and comments are left out
 * (names are kept; the source map leads back to the sources): a third less to read and hash at
 * each start, and an all-ASCII file V8 keeps one byte a character.
 * @returns {import('esbuild').BuildOptions & { write: false, metafile: true }}
 */
function engineCliOptions() {
  return {
    entryPoints: { 'engine-cli': ENTRIES['engine-cli'].source },
    absWorkingDir: root,
    outdir: path.join(serverDir, 'build'),
    outExtension: { '.js': '.cjs' },
    bundle: true,
    minifyWhitespace: true,
    legalComments: 'none',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    write: false,
    metafile: true,
    logLevel: 'silent',
    define: { 'import.meta.url': '__vigilBundleUrl' },
    banner: { js: 'var __vigilBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [requireBuilds, sourceLocations],
  };
}

/**
 * Node modules a package requires at its top but only uses on paths a `vigil engine` process
 * never takes (`commander` spawns executable subcommands with `child_process`, which with the
 * streams, `net` and `dgram` it loads costs each start ~3 ms): required on first use instead.
 */
const LAZY_NODE_MODULES = ['child_process'];

/**
 * Bare package imports resolved as `require` resolves them, from the importing file: the
 * CommonJS build of a package that ships both (`web-tree-sitter`'s ES module build imports Node
 * modules with `import()`). An `import()` of a Node module left in a package's code becomes a
 * `require`; a top-level `const x = require('node:<one of LAZY_NODE_MODULES>')` becomes an object
 * that requires the module on first use.
 */
const requireBuilds = {
  name: 'require-builds',
  /** @param {import('esbuild').PluginBuild} b */
  setup(b) {
    b.onResolve({ filter: /^[@a-z]/ }, async (args) => {
      if (args.kind !== 'import-statement' && args.kind !== 'dynamic-import' && args.kind !== 'require-call')
        return undefined;
      const { createRequire, isBuiltin } = await import('node:module');
      if (isBuiltin(args.path)) return undefined;
      return { path: createRequire(path.join(args.resolveDir, 'index.js')).resolve(args.path) };
    });
    const lazy = new RegExp(
      `^const (\\w+) = require\\((["'])(?:node:)?(${LAZY_NODE_MODULES.join('|')})\\2\\);$`,
      'gm',
    );
    b.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      lazy.lastIndex = 0;
      if (!source.includes('import(') && !lazy.test(source)) return undefined;
      const { isBuiltin } = await import('node:module');
      return {
        contents: source
          .replace(/\bimport\((["'])([\w:/]+)\1\)/g, (call, _q, name) =>
            isBuiltin(name) ? `Promise.resolve(require(${JSON.stringify(name)}))` : call,
          )
          .replace(
            lazy,
            (_line, name, _q, module) =>
              `const ${name} = new Proxy({}, { get: (_, key) => require("node:${module}")[key] });`,
          ),
        loader: 'js',
      };
    });
  },
};

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
  // Package files too: the engine's file includes the packages it uses.
  for (const file of [...Object.keys(result.metafile.inputs), thisFile])
    inputs[file] = await fingerprint(file);
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
  await writeFile(
    manifestTmp,
    JSON.stringify({ dir, inputs, entryInputs: singleFileInputs(result), replaced }),
  );
  await rename(manifestTmp, manifestFile);
  await removeOld(dir, replaced);
  return dir;
}

/**
 * The inputs of each entry built as one file (`engine-cli`), and this script: what decides whether
 * that entry is current. Entries with chunks depend on every input.
 * @param {{ metafile: import('esbuild').Metafile }} result
 * @returns {Record<string, string[]>}
 */
function singleFileInputs(result) {
  /** @type {Record<string, string[]>} */
  const out = {};
  for (const [name, { file }] of Object.entries(ENTRIES)) {
    if (!file.endsWith('.cjs')) continue;
    const output = Object.entries(result.metafile.outputs).find(([o]) => path.basename(o) === file);
    if (output) out[name] = [...Object.keys(output[1].inputs), thisFile];
  }
  return out;
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
        let engine;
        try {
          engine = await esbuild.build(engineCliOptions());
        } catch (err) {
          process.stderr.write(`${await formatErrors(esbuild, err)}\n[build] waiting for a change\n`);
          return;
        }
        const dir = await writeBuild(mergeResults([/** @type {any} */ (result), engine]));
        await makeEngineCodeCache(dir);
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

/**
 * Writes the code cache of the build's engine file: a scan of the example project in a process
 * of its own compiles what a scan runs (the parser, the rules, the reports), and the cache keeps
 * it. Without it the first scan writes one (`runEngineCli`).
 * @param {string} dir
 */
async function makeEngineCodeCache(dir) {
  const { execFile } = await import('node:child_process');
  await new Promise((resolve) => {
    execFile(
      process.execPath,
      [fileURLToPath(import.meta.url), '--engine-code-cache', dir],
      { cwd: root },
      () => resolve(undefined),
    );
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [flag, ...rest] = process.argv.slice(2);
  if (flag === '--engine-code-cache') {
    const [dir = ''] = rest;
    const { devNull } = await import('node:os');
    await rm(path.join(serverDir, dir, `${ENTRIES['engine-cli'].file}${CODE_CACHE_SUFFIX}`), { force: true });
    await runEngineCli(entryOf(dir, 'engine-cli'), [
      process.argv[0] ?? process.execPath,
      'vigil',
      'engine',
      'scan',
      path.join(root, 'examples/sample-project'),
      '--format',
      'sast',
      '--output',
      devNull,
    ]);
  } else if (flag === '--watch') await watch(rest);
  else {
    try {
      await build({ log: (line) => process.stdout.write(`${line}\n`) });
    } catch (err) {
      process.stderr.write(`${err instanceof BuildError ? err.message : String(err)}\n`);
      process.exitCode = 1;
    }
  }
}
