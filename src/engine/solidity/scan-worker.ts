/** Worker thread of `SolidityScanPool`: scans one Solidity file per message. */
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { ScanType } from '../types.ts';
import { scanSolidityFile } from './scan-file.ts';

// Analysis is background work: the thread lowers its own priority (on Linux a nice value is per
// thread) so that the API thread of the same process comes first. Never raised; best effort.
const nice = (workerData as { nice?: number } | null)?.nice ?? 0;
if (nice > 0) {
  try {
    if (getPriority(0) < nice) setPriority(0, nice);
  } catch {
    // Not permitted here: the analysis runs at the inherited priority.
  }
}

parentPort?.on('message', async (m: { path: string; source: string; type: ScanType; budgetMs: number }) => {
  // The pool's watchdog times the file from here (not from when it was queued).
  parentPort?.postMessage({ started: true });
  try {
    const r = await scanSolidityFile(m.path, m.source, m.type, undefined, m.budgetMs);
    parentPort?.postMessage({
      vulnerabilities: r.vulnerabilities,
      messages: r.messages,
      overBudget: r.overBudget,
    });
  } catch (err) {
    parentPort?.postMessage({
      overBudget: false,
      vulnerabilities: [],
      messages: [{ level: 'error', value: `${m.path}: ${err instanceof Error ? err.message : String(err)}` }],
    });
  }
});
