/** Worker thread of `SolidityScanPool`: scans one Solidity file per message. */
import { parentPort } from 'node:worker_threads';
import type { ScanType } from '../types.ts';
import { scanSolidityFile } from './scan-file.ts';

parentPort?.on('message', async (m: { path: string; source: string; type: ScanType }) => {
  try {
    const r = await scanSolidityFile(m.path, m.source, m.type);
    parentPort?.postMessage({ vulnerabilities: r.vulnerabilities, messages: r.messages });
  } catch (err) {
    parentPort?.postMessage({
      vulnerabilities: [],
      messages: [{ level: 'error', value: `${m.path}: ${err instanceof Error ? err.message : String(err)}` }],
    });
  }
});
