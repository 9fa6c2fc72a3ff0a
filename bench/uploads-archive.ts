/**
 * Micro-benchmark of archive handling: verification throughput and memory, bomb stop cost, and
 * source tree indexing and reads. Run: `npx tsx bench/uploads-archive.ts [expandedMiB]`.
 * Prints one JSON object; memory is the peak RSS growth over the run's start, sampled every 10 ms.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { openArchiveTree } from '../src/engine/sources/archive-tree.ts';
import { verifyArchive } from '../src/engine/sources/archive-verify.ts';
import { createGzipBomb, writeTarHeader } from '../test/fixtures/archives.ts';

const MIB = 1024 * 1024;
const expandedMiB = Number(process.argv[2] ?? 256);

/** Source-like files (compressible text) plus a share of random bytes, about `mib` MiB in all. */
async function buildArchive(mib: number): Promise<Buffer> {
  const line = Buffer.from('    function transfer(address to, uint256 amount) external returns (bool) {}\n');
  function* blocks(): Generator<Buffer> {
    let total = 0;
    for (let i = 0; total < mib * MIB; i += 1) {
      const random = i % 10 === 0;
      const content = random ? randomBytes(256 * 1024) : Buffer.concat(Array(1 + (i % 400)).fill(line));
      yield writeTarHeader({ name: `src/m${i % 50}/F${i}.sol`, size: content.length, typeflag: '0' });
      yield Buffer.concat([content, Buffer.alloc((512 - (content.length % 512)) % 512)]);
      total += content.length;
    }
    yield Buffer.alloc(1024);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(blocks()).pipe(createGzip({ level: 6 })))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function measure<T>(run: () => Promise<T>): Promise<{ result: T; ms: number; peakRssMiB: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const start = performance.now();
  try {
    const result = await run();
    return { result, ms: Math.round(performance.now() - start), peakRssMiB: Math.round((peak - base) / MIB) };
  } finally {
    clearInterval(timer);
  }
}

function streamOf(buffer: Buffer): Readable {
  function* chunks(): Generator<Buffer> {
    for (let i = 0; i < buffer.length; i += 64 * 1024) yield buffer.subarray(i, i + 64 * 1024);
  }
  return Readable.from(chunks());
}

const archive = await buildArchive(expandedMiB);
const verify = await measure(() => verifyArchive(streamOf(archive)));
const bomb = createGzipBomb({ expandedMiB: 10 * 1024, layout: 'zero-blocks' });
const bombStop = await measure(() => verifyArchive(bomb.stream).catch((err: unknown) => err));
const tree = await measure(() =>
  openArchiveTree([{ open: async () => streamOf(archive) }], { maxFileBytes: 4 * MIB }),
);
const files = await tree.result.list();
const reads = await measure(async () => {
  let bytes = 0;
  for (const file of files) bytes += (await tree.result.read(file.path)).length;
  return bytes;
});
await tree.result.close();

console.log(
  JSON.stringify(
    {
      archive: { compressedMiB: +(archive.length / MIB).toFixed(1), files: files.length },
      verify: {
        ms: verify.ms,
        expandedMiBPerSecond: Math.round(verify.result.expandedBytes / MIB / (verify.ms / 1000)),
        peakRssGrowthMiB: verify.peakRssMiB,
      },
      bomb10GiB: {
        ms: bombStop.ms,
        compressedReadMiB: +(bomb.bytesRead() / MIB).toFixed(2),
        peakRssGrowthMiB: bombStop.peakRssMiB,
      },
      treeOpen: { ms: tree.ms, peakRssGrowthMiB: tree.peakRssMiB },
      treeReadAll: { ms: reads.ms, MiB: Math.round(reads.result / MIB) },
    },
    null,
    2,
  ),
);
