#!/usr/bin/env node
// The `vigil` command: loads the TypeScript sources through tsx's loader and runs the CLI.
// `vigil engine …` runs from a bundle of its modules when one can be built (no tsx start-up);
// VIGIL_NO_BUNDLE=1 always goes through tsx.
const engineBundle =
  process.argv[2] === 'engine' && process.env.VIGIL_NO_BUNDLE !== '1'
    ? await (await import('../src/engine/bundle-cache.mjs')).bundleOf('engine-cli', 'src/cli/engine-main.ts')
    : undefined;
if (engineBundle) {
  const { engineMain } = await import(engineBundle.href);
  await engineMain(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../src/main.ts');
  await main(process.argv);
}
