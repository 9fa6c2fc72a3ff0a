import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { buildArchive, buildCompany, buildServiceKey, grantCredits, type TestArchive } from './factories.ts';
import { waitFor } from './wait.ts';

/** A Solidity contract with a textbook reentrancy (state written after an external call). */
export const REENTRANT_BANK = `pragma solidity ^0.4.24;

contract Bank {
    mapping(address => uint256) public balances;

    function deposit() public payable {
        balances[msg.sender] += msg.value;
    }

    function withdraw() public {
        uint256 amount = balances[msg.sender];
        require(msg.sender.call.value(amount)());
        balances[msg.sender] = 0;
    }
}
`;

/** A unique Idempotency-Key. */
export function newIdempotencyKey(): string {
  return `test-${randomBytes(8).toString('hex')}`;
}

/** `count` Solidity files, each with the reentrancy (a slow enough scan to be cancelled or killed). */
export function manySolidityFiles(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    files[`contracts/Bank${i}.sol`] = REENTRANT_BANK.replace('contract Bank', `contract Bank${i}`);
  }
  return files;
}

/** POST /scans with a service key and an Idempotency-Key. */
export async function postScan(
  t: TestApp,
  serviceKey: string,
  body: unknown,
  idempotencyKey = newIdempotencyKey(),
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/scanner/v1/scans',
    headers: { authorization: `Bearer ${serviceKey}`, 'idempotency-key': idempotencyKey },
    payload: body as object,
  });
}

/**
 * A fresh company with 10 credits and a service key posts a local standard scan of
 * {@link REENTRANT_BANK}; the scan is accepted (202, `preparing`, its threat-model job waiting).
 */
export async function postBankScan(t: TestApp): Promise<{ companyId: string; key: string; scanId: string }> {
  const company = await buildCompany(t);
  const { key } = await buildServiceKey(t, { companyId: company.id });
  await grantCredits(t, company.id, 10);
  const archive = await buildArchive(t, {
    companyId: company.id,
    files: { 'contracts/Bank.sol': REENTRANT_BANK },
  });
  const res = await postScan(t, key, localScanBody(archive));
  expect(res.statusCode, res.body).toBe(202);
  return { companyId: company.id, key, scanId: res.json().id as string };
}

/** A local standard scan body for an archive. */
export function localScanBody(archive: TestArchive, extra: Record<string, unknown> = {}) {
  return {
    type: 'standard',
    scanSources: [{ kind: 'local', archiveId: archive.archiveId, sha256: archive.sha256 }],
    ...extra,
  };
}

export interface ScanStatusBody {
  id: string;
  status: string;
  type: string;
  workspaceId: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  cancelledAt: string | null;
  progress: { filesTotal: number; filesDone: number };
  findingsCount: number;
  error?: { code: string; message: string };
  analysis?: { filesOverBudget: string[] };
}

/** GET the scan. */
export async function getScanStatus(t: TestApp, serviceKey: string, scanId: string): Promise<ScanStatusBody> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/scanner/v1/scans/${scanId}`,
    headers: { authorization: `Bearer ${serviceKey}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ScanStatusBody;
}

/** Polls the scan until `done` holds (or fails the test after `timeoutMs`). */
export async function waitForScan(
  t: TestApp,
  serviceKey: string,
  scanId: string,
  done: (scan: ScanStatusBody) => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<ScanStatusBody> {
  let last: ScanStatusBody | undefined;
  return waitFor(
    async () => {
      last = await getScanStatus(t, serviceKey, scanId);
      return (await done(last)) && last;
    },
    {
      timeoutMs,
      intervalMs: 100,
      what: () => `scan ${scanId} to reach the state (last: ${JSON.stringify(last)})`,
    },
  );
}

/** Final states of a scan. */
export const isFinal = (s: ScanStatusBody) => ['completed', 'failed', 'cancelled'].includes(s.status);
