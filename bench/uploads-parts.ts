/**
 * The parts of an upload completion measured apart, on the archive `bench:uploads` builds (run that
 * first; it is cached in the OS temporary folder): reading the file, its SHA-256, gunzip with 16 KiB
 * and with 64 KiB output chunks, the whole verification (`verifyArchive`), and the old way of
 * keeping a copy (a second file written and flushed). Reports CPU seconds (user + system of this
 * process, its thread pool included) beside wall seconds: on a shared machine CPU time is the
 * figure that compares. Medians of `--repeats` rounds.
 *
 * Run: `npm run bench:uploads:parts [-- --size 50 --repeats 5]`. Prints a table; writes nothing.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { verifyArchive } from '../src/engine/sources/archive-verify.ts';
import { createFsObjectStore } from '../src/integrations/storage/fs-object-store.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const discard = () =>
  new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });

async function main(): Promise<void> {
  const size = arg('size', '50');
  const repeats = Number(arg('repeats', '5'));
  const file = join(tmpdir(), 'vigil-bench-uploads-cache', `source-${size}.tar.gz`);
  const work = await mkdtemp(join(tmpdir(), 'vigil-bench-upload-parts-'));
  const store = createFsObjectStore({ root: work });
  const parts: Array<[string, () => Promise<unknown>]> = [
    ['read', () => pipeline(createReadStream(file), discard())],
    [
      'read + sha256',
      async () => {
        const hash = createHash('sha256');
        for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
        return hash.digest('hex');
      },
    ],
    ['gunzip, 16 KiB chunks', () => pipeline(createReadStream(file), createGunzip(), discard())],
    [
      'gunzip, 64 KiB chunks',
      () => pipeline(createReadStream(file), createGunzip({ chunkSize: 64 * 1024 }), discard()),
    ],
    ['verifyArchive', () => verifyArchive(createReadStream(file))],
    [
      'second copy written + fsync',
      () => store.putStream('copy/archive.tar.gz', createReadStream(file), { maxBytes: 2 ** 40 }),
    ],
  ];
  const seconds = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  try {
    for (let round = 0; round < repeats; round += 1) {
      for (const [name, run] of parts) {
        const cpuBefore = process.cpuUsage();
        const started = process.hrtime.bigint();
        await run();
        const used = process.cpuUsage(cpuBefore);
        seconds.set(name, [...(seconds.get(name) ?? []), Number(process.hrtime.bigint() - started) / 1e9]);
        cpu.set(name, [...(cpu.get(name) ?? []), (used.user + used.system) / 1e6]);
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(`${file}, ${repeats} rounds (medians)`);
  console.log('| part | wall s | CPU s |');
  console.log('|---|---:|---:|');
  for (const [name] of parts) {
    console.log(
      `| ${name} | ${median(seconds.get(name)!).toFixed(3)} | ${median(cpu.get(name)!).toFixed(3)} |`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
