// The native Solidity tree: `native/solidity_tree.c` and tree-sitter's C runtime (the sources the
// `tree-sitter` package ships), compiled by node-gyp into `dist/native/solidity-tree.node`. The
// engine parses with it when it loads, and with tree-sitter's WASM build otherwise (ADR 0100).
//
//   node scripts/build-native.mjs     build it unless the one in dist/native is of the same inputs
//
// `dist/native/solidity-tree.json` records the inputs' key and the outcome, so a machine without
// a C compiler tries once per change of the inputs, not at every build. Plain JavaScript: it runs
// before anything is compiled.
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = path.join(root, 'native');
const outDir = path.join(root, 'dist/native');
/** What the engine loads (src/engine/solidity/parser.ts). */
export const NATIVE_TREE_FILE = path.join(outDir, 'solidity-tree.node');
const stampFile = path.join(outDir, 'solidity-tree.json');

/**
 * The key of what the addon is built from: its sources, the runtime's version, this platform.
 * N-API is stable across Node versions, so Node's own version is not part of it.
 */
async function inputsKey() {
  const { createHash } = await import('node:crypto');
  const require = createRequire(path.join(root, 'package.json'));
  const runtime = JSON.parse(await readFile(require.resolve('tree-sitter/package.json'), 'utf8')).version;
  const hash = createHash('sha256').update(`${process.platform}-${process.arch} tree-sitter ${runtime}\n`);
  for (const file of ['solidity_tree.c', 'binding.gyp'])
    hash.update(await readFile(path.join(sourceDir, file)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the addon when its inputs changed since the last attempt. Never throws for a failed
 * compilation: the engine then parses with WASM, and `log` says why.
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {Promise<{ ok: boolean, built: boolean, error?: string }>}
 */
export async function buildNative(options = {}) {
  if (!existsSync(path.join(sourceDir, 'solidity_tree.c'))) {
    // An installation of the build alone: whatever dist/native holds stays.
    return { ok: existsSync(NATIVE_TREE_FILE), built: false };
  }
  const key = await inputsKey();
  /** @type {{ key?: string, ok?: boolean, error?: string }} */
  let stamp = {};
  try {
    stamp = JSON.parse(await readFile(stampFile, 'utf8'));
  } catch {
    // never built here
  }
  if (stamp.key === key && (!stamp.ok || existsSync(NATIVE_TREE_FILE)))
    return { ok: Boolean(stamp.ok), built: false, error: stamp.error };
  await mkdir(outDir, { recursive: true });
  const started = Date.now();
  // A folder of its own: two builds at once never share node-gyp's build folder.
  const work = await mkdtemp(path.join(outDir, 'build-'));
  let result;
  try {
    await cp(sourceDir, work, { recursive: true });
    await nodeGyp(work);
    const tag = `${process.pid}-${Date.now().toString(36)}`;
    // Renamed into place: a process loading it meanwhile gets the old file or the new one.
    await copyFile(path.join(work, 'build/Release/solidity_tree.node'), `${NATIVE_TREE_FILE}.${tag}.tmp`);
    await rename(`${NATIVE_TREE_FILE}.${tag}.tmp`, NATIVE_TREE_FILE);
    result = { ok: true, built: true };
    options.log?.(`built dist/native/solidity-tree.node in ${Date.now() - started} ms`);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    result = { ok: false, built: false, error };
    options.log?.(`the native Solidity parser did not build, the engine parses with WASM: ${error}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const tmp = `${stampFile}.${process.pid}.tmp`;
  await writeFile(
    tmp,
    JSON.stringify({ key, ok: result.ok, ...(result.error ? { error: result.error } : {}) }),
  );
  await rename(tmp, stampFile);
  return result;
}

/**
 * `node-gyp rebuild` in `dir`, against this Node's own headers when it has them (Debian's
 * `/usr/include/node`, an official tarball's `include/node`), else those node-gyp fetches.
 * Rejects with the last lines node-gyp printed.
 * @param {string} dir
 */
async function nodeGyp(dir) {
  const { execFile } = await import('node:child_process');
  const require = createRequire(path.join(root, 'package.json'));
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  const args = [
    require.resolve('node-gyp/bin/node-gyp.js'),
    'rebuild',
    '--directory',
    dir,
    '--loglevel',
    'error',
  ];
  if (existsSync(path.join(prefix, 'include/node/node_api.h'))) args.push(`--nodedir=${prefix}`);
  await new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve(undefined);
      const lines = `${stderr}\n${stdout}`
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('gyp info'));
      const errors = lines.filter((l) => /error/i.test(l) && !l.startsWith('gyp ERR! stack'));
      reject(new Error((errors.length > 0 ? errors : lines).slice(0, 3).join(' | ') || err.message));
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await buildNative({ log: (line) => process.stdout.write(`${line}\n`) });
  if (!result.built && result.ok) process.stdout.write('dist/native/solidity-tree.node is current\n');
}
