/**
 * One `vigil engine scan` process over a directory, writing a SAST report, timed as a user runs
 * it (start-up included): wall time here, CPU time of all its threads and peak RSS from GNU time.
 * Shared by bench:engine:solidifi, bench:engine:alternate and bench:engine:audited.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface TimedScan {
  wallMs: number;
  cpuMs: number;
  peakRssMb: number;
}

export function timedEngineScan(options: {
  /** The checkout whose `bin/vigil.js` runs (and its working directory). */
  checkout: string;
  datasetDir: string;
  reportFile: string;
  /** Where GNU time writes its figures. */
  timeFile: string;
  extraArgs?: string[];
  /** Stops the process after this long (the call then throws). */
  timeoutMs?: number;
}): TimedScan {
  const t = performance.now();
  execFileSync(
    '/usr/bin/time',
    [
      '-f',
      '%U %S %M',
      '-o',
      options.timeFile,
      process.execPath,
      path.join(options.checkout, 'bin/vigil.js'),
      'engine',
      'scan',
      options.datasetDir,
      '--type',
      'standard',
      '--format',
      'sast',
      '--output',
      options.reportFile,
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      cwd: options.checkout,
      ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    },
  );
  const wallMs = performance.now() - t;
  const [user, sys, rssKb] = readFileSync(options.timeFile, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  return {
    wallMs,
    cpuMs: ((user ?? 0) + (sys ?? 0)) * 1000,
    peakRssMb: Math.round((rssKb ?? 0) / 1024),
  };
}
