/**
 * Summarises a V8 .cpuprofile (`node --cpu-prof`): self time by category and the functions with
 * the most self time. Run: `npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top] [from-s]`:
 * with `from-s`, only the samples taken that many seconds or more after the profile began (bench/api.ts
 * records when its load on `vigil serve` began as `profileLoadFromSeconds`), so that start-up (module
 * loading, schema compilation) is left out. Percentages are of the sampled time and of the busy
 * (not idle) time.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [top]');
const top = Number(process.argv[3] ?? 25);
const fromUs = Number(process.argv[4] ?? 0) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
let elapsedUs = 0;
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0;
  elapsedUs += delta;
  if (elapsedUs >= fromUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
});

/** Where a function lives, by its script URL. */
function category(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (!url) {
    if (functionName === '(idle)') return 'idle (waiting: database, network)';
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(program)') return 'V8/native (program)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) {
    const name = pkg[1] as string;
    if (/^(pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(name)) return 'node-postgres';
    if (name === 'drizzle-orm') return 'drizzle-orm';
    if (/fastify|find-my-way|avvio|light-my-request|fast-json-stringify|ajv|fast-uri|pino/.test(name))
      return `fastify & co (${name})`;
    if (name === 'tsx' || name === 'esbuild') return 'tsx loader';
    return `package ${name}`;
  }
  if (url.startsWith('node:')) {
    if (/net|stream|http|_http/.test(url)) return 'node: sockets, http, streams';
    return 'node: other internals';
  }
  const src = /\/src\/(.*)$/.exec(url);
  if (src) return `vigil src/${(src[1] as string).split('/').slice(0, 2).join('/')}`;
  return url;
}

const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const categories = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id);
  if (!node) continue;
  const cat = category(node);
  categories.set(cat, (categories.get(cat) ?? 0) + us);
  const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/src\//, 'src/');
  const key = `${node.callFrame.functionName || '(anonymous)'}  ${where}:${node.callFrame.lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
}
const idle = categories.get('idle (waiting: database, network)') ?? 0;
const pct = (us: number) =>
  `${((100 * us) / total).toFixed(1).padStart(5)}%${us === idle ? '       ' : ` ${((100 * us) / (total - idle)).toFixed(1).padStart(5)}%`}`;
process.stdout.write(
  `${file}: ${(total / 1e6).toFixed(1)} s sampled${fromUs ? ` from ${fromUs / 1e6} s on` : ''}, ${((total - idle) / 1e6).toFixed(1)} s busy\n\n  of all  of busy\nself time by category\n`,
);
for (const [cat, us] of [...categories].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
  process.stdout.write(`${pct(us)}  ${cat}\n`);
}
process.stdout.write(`\ntop ${top} functions by self time\n`);
for (const [fn, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${pct(us)}  ${fn}\n`);
}
