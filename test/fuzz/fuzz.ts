/**
 * `npm run test:fuzz`: the fuzz suite (openapi.fuzz.test.ts) with 4 cases per operation, the size
 * the CI suite runs, writing bench/results/fuzz.json. `npm run test:fuzz -- --long` runs 100 cases
 * per operation and writes bench/results/fuzz-long.json. FUZZ_RUNS and FUZZ_SEED override the
 * number of cases and the seed; other arguments go to vitest.
 */
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const long = args.includes('--long');
const rest = args.filter((a) => a !== '--long');
const env = {
  ...process.env,
  FUZZ_RUNS: process.env.FUZZ_RUNS ?? (long ? '100' : '4'),
  FUZZ_RESULTS: long ? 'bench/results/fuzz-long.json' : 'bench/results/fuzz.json',
};
const run = spawnSync('npx', ['vitest', 'run', 'test/fuzz', ...rest], { stdio: 'inherit', env });
process.exitCode = run.status ?? 1;
