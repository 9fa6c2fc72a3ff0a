/**
 * Where a bench writes its result. Each bench has one file, `bench/results/<bench>.json`, which
 * a run replaces: the directory holds the latest result of every bench and git holds the history
 * (docs/performance.md is generated from these files).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/**
 * The result file of `bench`. `BENCH_RESULTS` may name an absolute path outside bench/results
 * for a comparison run that must not replace the committed result; any other value is refused,
 * so that bench/results never gathers a second file for one bench.
 */
export function benchResultsPath(bench: string): string {
  const fixed = path.join(resultsDir, `${bench}.json`);
  const chosen = process.env.BENCH_RESULTS;
  if (chosen === undefined || chosen === '') return fixed;
  const resolved = path.resolve(chosen);
  if (!path.isAbsolute(chosen) || (resolved !== fixed && resolved.startsWith(`${resultsDir}${path.sep}`))) {
    throw new Error(
      `BENCH_RESULTS=${chosen}: give an absolute path outside bench/results (there, ${bench} writes only ${path.relative(process.cwd(), fixed)})`,
    );
  }
  return resolved;
}
