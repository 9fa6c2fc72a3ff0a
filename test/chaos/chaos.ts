/**
 * `npm run test:chaos`: the chaos run (see chaos-run.ts) on the embedded server and on a PostgreSQL
 * server (CHAOS_DATABASE_URL, default the local one; CHAOS_SKIP_SERVER=1 to skip it).
 * CHAOS_SEED replays a run, CHAOS_KILLS sets the number of SIGKILLs (default 20). Exits 1 on any
 * broken invariant.
 */
import { runChaos } from './chaos-run.ts';

const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const kills = Number(process.env.CHAOS_KILLS ?? 20);
console.log(`chaos seed ${seed} (replay with CHAOS_SEED=${seed}), ${kills} kills per database`);
const targets: (string | undefined)[] = [undefined];
if (process.env.CHAOS_SKIP_SERVER !== '1')
  targets.push(process.env.CHAOS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
let failed = false;
for (const serverUrl of targets) {
  const report = await runChaos({ seed, kills, serverUrl, log: (l) => console.log(l) });
  console.log(JSON.stringify(report, null, 2));
  if (report.violations.length > 0) failed = true;
}
process.exitCode = failed ? 1 : 0;
