#!/usr/bin/env node
// The `vigil` command: runs the compiled build in dist/server (scripts/build.mjs). In a source
// checkout a build older than the sources is rebuilt first (about half a second), so what runs is
// always what src/ says. VIGIL_NO_BUNDLE=1 runs the TypeScript sources through tsx instead.
// `vigil engine …` loads only the engine commands' file, with its code cache. CommonJS (see
// bin/package.json): a start that needs no ES module (`vigil engine …` with a current build) never
// loads Node's ES module loader.
'use strict';

const name = process.argv[2] === 'engine' ? 'engine-cli' : 'main';
if (process.argv.includes('--debug') || process.env.VIGIL_DEBUG === '1') process.setSourceMapsEnabled(true);

/** The compiled entry, rebuilt when stale; `undefined` to run the sources through tsx. */
async function compiled() {
  if (process.env.VIGIL_NO_BUNDLE === '1') return undefined;
  const { canBuild, currentEntry } = require('../scripts/build-entry.cjs');
  const entry = await currentEntry(name);
  if (entry) return entry;
  if (!canBuild()) {
    process.stderr.write(
      'vigil: dist/server has no build and there are no sources to make one: run "npm run build"\n',
    );
    process.exit(1);
  }
  const { build, BuildError, entryOf } = await import('../scripts/build.mjs');
  try {
    // This build's entry, even if a concurrent build of other sources became current meanwhile.
    return entryOf(await build(), name);
  } catch (err) {
    if (err instanceof BuildError) {
      process.stderr.write(`${err.message}\nvigil: src/ does not compile (above)\n`);
      process.exit(1);
    }
    // Cannot write dist/ (a read-only checkout): the sources still run, through tsx.
    process.stderr.write(
      `vigil: cannot build dist/server (${err.message}); running the sources through tsx\n`,
    );
    return undefined;
  }
}

async function main() {
  const entry = await compiled();
  if (entry && name === 'engine-cli')
    await require('../scripts/build-entry.cjs').runEngineCli(entry, process.argv);
  else if (entry) await (await import(entry.href)).main(process.argv);
  else {
    const { register } = await import('tsx/esm/api');
    register();
    if (name === 'engine-cli') await (await import('../src/cli/engine-main.ts')).engineMain(process.argv);
    else await (await import('../src/main.ts')).main(process.argv);
  }
}

// A rejection ends the process as an uncaught error (printed, exit code 1), as it would at the top
// level of an ES module; the commands report their own errors before that.
main().catch((err) => {
  process.nextTick(() => {
    throw err;
  });
});
