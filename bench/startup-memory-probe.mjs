// Loaded with `node --import` by bench/startup.ts into the `vigil start` it measures: on SIGUSR2
// it writes the process's memory figures as V8 sees them to VIGIL_MEMORY_PROBE.
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

const out = process.env.VIGIL_MEMORY_PROBE;
if (out) {
  process.on('SIGUSR2', () => {
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1024)]),
    );
    writeFileSync(out, JSON.stringify({ ...process.memoryUsage(), heapSpacesUsedKb: spaces }));
  });
}
