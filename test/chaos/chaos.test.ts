import { describe, expect, it } from 'vitest';
import { testServerUrl } from '../helpers/database.ts';
import { runChaos } from './chaos-run.ts';

// The short version of `npm run test:chaos`: three SIGKILLs, on the embedded server of a fresh
// data folder, or on the test run's external server when TEST_DATABASE_URL is set.
describe('chaos (short)', () => {
  it('keeps every invariant while vigil serve and vigil worker are killed and restarted', async () => {
    const seed = Math.floor(Math.random() * 2 ** 31);
    console.log(`chaos seed ${seed}`);
    const report = await runChaos({
      seed,
      kills: 3,
      ...(process.env.TEST_DATABASE_URL ? { serverUrl: testServerUrl() } : {}),
    });
    expect(report.violations, `seed ${seed}`).toEqual([]);
    expect(report.acknowledged.scans + report.acknowledged.companies).toBeGreaterThan(0);
  }, 300_000);
});
