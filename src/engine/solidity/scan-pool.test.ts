import { describe, expect, it } from 'vitest';
import { SolidityScanPool } from './scan-pool.ts';

const SOURCE = `pragma solidity ^0.8.0;
contract Bank {
  mapping(address => uint) balances;
  function withdraw() public {
    (bool ok, ) = msg.sender.call{value: balances[msg.sender]}("");
    require(ok);
    balances[msg.sender] = 0;
  }
}
`;

describe('the scan pool started early', () => {
  it('is taken over once, by the scan that asks for the same size, and analyses as a pool started then', async () => {
    const started = SolidityScanPool.startEarly(1);
    expect(started).toBeDefined();
    const other = await SolidityScanPool.start(2);
    const taken = await SolidityScanPool.start(1);
    const later = await SolidityScanPool.start(1);
    try {
      // Another size does not take it; the same size does, once.
      expect(other).not.toBe(await started);
      expect(taken).toBe(await started);
      expect(later).not.toBe(taken);
      const [a, b] = await Promise.all(
        [taken, later].map(async (pool) => pool.run(await pool.acquire(), 'Bank.sol', SOURCE, 'standard')),
      );
      expect(a!.vulnerabilities.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
    } finally {
      await Promise.all([other.close(), taken.close(), later.close()]);
    }
  }, 60_000);
});
