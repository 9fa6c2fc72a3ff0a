import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { scanTree } from '../index.ts';
import { RULE_EXAMPLES } from '../rules-doc.ts';
import { memoryTree } from '../test-helpers.ts';
import type { EngineVulnerability } from '../types.ts';
import { toSarifReport } from './sarif.ts';
import { SastReportText, toSastReport } from './sast.ts';
import { SAST_REPORT_JSON_SCHEMA } from './sast-schema.ts';

const VAULT = `pragma solidity ^0.4.24;
contract Vault {
  mapping(address => uint) balances;
  function deposit() public payable { balances[msg.sender] += msg.value; }
  function withdraw() public {
    require(msg.sender.call.value(balances[msg.sender])());
    balances[msg.sender] = 0;
  }
  function kill() public { selfdestruct(msg.sender); }
}
`;

async function scan(files: Record<string, string>) {
  const r = await scanTree(memoryTree(files), { type: 'standard' });
  return {
    result: r,
    items: r.vulnerabilities.map((vulnerability) => ({ id: randomUUID(), vulnerability })),
  };
}

describe('toSastReport', () => {
  it('produces a report valid against the SAST 15.x schema', async () => {
    const { result, items } = await scan({
      'contracts/Vault.sol': VAULT,
      '.env': 'PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
    });
    const report = toSastReport(items, {
      startTime: new Date('2026-01-02T03:04:05.678Z'),
      endTime: new Date(),
      messages: [{ level: 'info', value: 'ok' }],
    });
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(SAST_REPORT_JSON_SCHEMA);
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.scan.start_time).toBe('2026-01-02T03:04:05');
    expect(report.vulnerabilities).toHaveLength(result.vulnerabilities.length);
    const reentrancy = report.vulnerabilities.find(
      (v) => v.identifiers[0]!.value === 'sol.reentrancy.state-after-call',
    )!;
    expect(reentrancy.severity).toBe('High');
    expect(reentrancy.location).toMatchObject({
      file: 'contracts/Vault.sol',
      start_line: 6,
      end_line: 6,
      class: 'Vault',
      method: 'withdraw',
    });
    expect(reentrancy.identifiers.map((i) => i.type)).toEqual(['vigil_rule', 'swc', 'cwe']);
    // Secrets never leave the engine unmasked.
    expect(JSON.stringify(report)).not.toContain('69102937d6231471b5dbb62');
  });

  it('keeps the original severity of gas findings under details', async () => {
    const { items } = await scan({
      'G.sol':
        'pragma solidity 0.8.20;\ncontract G { uint fee = 100; function f(uint n) external view returns (uint) { return n * fee; } }',
    });
    const report = toSastReport(items, { startTime: new Date(), endTime: new Date() });
    const gas = report.vulnerabilities.find((v) => v.identifiers[0]!.value === 'sol.gas.could-be-constant')!;
    expect(gas.severity).toBe('Info');
    expect(gas.details.original_severity).toMatchObject({ value: 'gas_optimization' });
  });
});

describe('SastReportText', () => {
  it('renders file by file, in any order of completion, exactly the text of the whole report', async () => {
    const files: Record<string, string> = {
      'a/Vault.sol': VAULT,
      'b/Empty.sol': 'pragma solidity 0.8.24;\ncontract E {}\n',
      'c/Vault.sol': VAULT.replace('contract Vault', 'contract Vault2'),
      'd/.env': 'PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
    };
    const ids: string[] = [];
    const newId = (): string => {
      ids.push(randomUUID());
      return ids.at(-1)!;
    };
    const text = new SastReportText('https://vigil.example/docs/rules', newId);
    const done: Array<[number, readonly EngineVulnerability[]]> = [];
    const result = await scanTree(memoryTree(files), {
      type: 'standard',

      onFileFindings: (i, found) => void done.push([i, found]),
    });
    expect(done.map(([i]) => i)).toEqual([0, 1, 2, 3]);
    // Completion order does not matter; each file's items keep the ids drawn for them.
    for (const [i, found] of [...done].reverse()) text.add(i, found);
    const idOf = new Map<EngineVulnerability, string>();
    let next = 0;
    for (const [, found] of [...done].reverse()) for (const v of found) idOf.set(v, ids[next++]!);
    const meta = {
      startTime: new Date('2026-01-02T03:04:05Z'),
      endTime: new Date('2026-01-02T03:04:09Z'),
      messages: result.messages,
      rulesUrl: 'https://vigil.example/docs/rules',
    };
    const whole = `${JSON.stringify(
      toSastReport(
        result.vulnerabilities.map((v) => ({ id: idOf.get(v)!, vulnerability: v })),
        meta,
      ),
      null,
      2,
    )}\n`;
    expect(result.vulnerabilities.length).toBeGreaterThan(4);
    expect(Buffer.concat(text.finish(result.vulnerabilities, meta)!).toString()).toBe(whole);
    // Findings that are not exactly the ones added: the caller renders the report whole.
    expect(text.finish(result.vulnerabilities.slice(1), meta)).toBeUndefined();
    expect(text.finish([...result.vulnerabilities].reverse(), meta)).toBeUndefined();
    const copy = result.vulnerabilities.map((v) => ({ ...v }));
    expect(text.finish(copy, meta)).toBeUndefined();
    // No findings at all.
    expect(Buffer.concat(new SastReportText(undefined, newId).finish([], meta)!).toString()).toBe(
      `${JSON.stringify(toSastReport([], meta), null, 2)}\n`,
    );
  });
});

describe('toSarifReport', () => {
  it('emits SARIF 2.1.0 with rules, security-severity and partial fingerprints', async () => {
    const { items } = await scan({ 'contracts/Vault.sol': VAULT });
    const sarif = toSarifReport(items);
    expect(sarif.version).toBe('2.1.0');
    const run = sarif.runs[0]!;
    for (const r of run.results) {
      const rule = run.tool.driver.rules[r.ruleIndex]!;
      expect(rule.id).toBe(r.ruleId);
      expect(Number(rule.properties['security-severity'])).toBeGreaterThanOrEqual(0);
      expect(rule.properties.tags).toContain('security');
      expect(r.partialFingerprints['vigilFingerprint/v1']).toMatch(/^[0-9a-f]{64}$/);
      expect(r.locations[0]!.physicalLocation.region.startLine).toBeGreaterThan(0);
    }
    expect(new Set(run.tool.driver.rules.map((r) => r.id)).size).toBe(run.tool.driver.rules.length);
    const selfdestruct = run.tool.driver.rules.find((r) => r.id === 'sol.access.unprotected-selfdestruct')!;
    expect(selfdestruct.properties['security-severity']).toBe('8.0');
    expect(selfdestruct.defaultConfiguration.level).toBe('error');
  });
});

describe('fingerprints', () => {
  it('are stable across runs and when lines shift', async () => {
    const a = await scan({ 'contracts/Vault.sol': VAULT });
    const again = await scan({ 'contracts/Vault.sol': VAULT });
    const shifted = await scan({ 'contracts/Vault.sol': `// SPDX-License-Identifier: MIT\n\n\n${VAULT}` });
    const fp = (r: typeof a) => r.result.vulnerabilities.map((v) => `${v.ruleId} ${v.fingerprint}`).sort();
    expect(fp(again)).toEqual(fp(a));
    expect(fp(shifted)).toEqual(fp(a));
    expect(shifted.result.vulnerabilities.map((v) => v.location.startLine)).not.toEqual(
      a.result.vulnerabilities.map((v) => v.location.startLine),
    );
    expect(new Set(fp(a)).size).toBe(a.result.vulnerabilities.length);
  });
});

describe('impact and confidence in the reports', () => {
  /** The vulnerable example of every rule, each in a file of its own. */
  const examples = (): Record<string, string> =>
    Object.fromEntries(
      Object.entries(RULE_EXAMPLES).map(([id, e]) => [
        e.path && !e.path.endsWith('.sol') ? `${id}/${e.path}` : `${id}/Example.sol`,
        e.vulnerable,
      ]),
    );

  it('every finding carries both: SARIF security-severity and precision, SAST severity and details', async () => {
    const r = await scanTree(memoryTree(examples()), { type: 'audit' });
    const items = r.vulnerabilities.map((vulnerability) => ({ id: randomUUID(), vulnerability }));
    expect(new Set(r.vulnerabilities.map((v) => v.ruleId))).toEqual(new Set(Object.keys(RULE_EXAMPLES)));
    expect(new Set(r.vulnerabilities.map((v) => v.confidence))).toEqual(new Set(['high', 'medium', 'low']));

    const sarif = toSarifReport(items);
    const run = sarif.runs[0]!;
    const securitySeverity = {
      critical: 9.5,
      high: 8,
      medium: 5.5,
      low: 3,
      informational: 0,
      gas_optimization: 0,
    };
    for (const [i, result] of run.results.entries()) {
      const v = r.vulnerabilities[i]!;
      expect(Number(result.properties['security-severity'])).toBe(securitySeverity[v.severity]);
      expect(result.properties.precision).toBe(v.confidence);
      const rule = run.tool.driver.rules[result.ruleIndex]!;
      expect(rule.properties.precision).toMatch(/^(high|medium|low)$/);
      expect(Number(rule.properties['security-severity'])).toBeGreaterThanOrEqual(0);
    }

    const sast = toSastReport(items, { startTime: new Date(), endTime: new Date() });
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(SAST_REPORT_JSON_SCHEMA);
    expect(validate(sast), JSON.stringify(validate.errors)).toBe(true);
    for (const [i, item] of sast.vulnerabilities.entries()) {
      const v = r.vulnerabilities[i]!;
      expect(item.details.original_severity).toEqual({ type: 'text', name: 'Impact', value: v.severity });
      expect(item.details.confidence).toEqual({ type: 'text', name: 'Confidence', value: v.confidence });
      // No finding of low confidence is High or Critical, in the engine's terms or GitLab's.
      if (v.confidence === 'low') expect(['High', 'Critical']).not.toContain(item.severity);
    }
  });

  it('the SAST schema holds details to named fields of GitLab detail types', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(SAST_REPORT_JSON_SCHEMA);
    const report = (details: Record<string, unknown>) => ({
      version: '15.0.7',
      scan: {
        analyzer: { id: 'a', name: 'a', version: '1', vendor: { name: 'v' } },
        scanner: { id: 'a', name: 'a', version: '1', vendor: { name: 'v' } },
        type: 'sast',
        start_time: '2026-01-02T03:04:05',
        end_time: '2026-01-02T03:04:05',
        status: 'success',
      },
      vulnerabilities: [
        {
          id: randomUUID(),
          identifiers: [{ type: 'vigil_rule', name: 'r', value: 'r' }],
          location: { file: 'a.sol', start_line: 1, end_line: 1 },
          details,
        },
      ],
    });
    expect(validate(report({ confidence: { type: 'text', name: 'Confidence', value: 'low' } }))).toBe(true);
    expect(validate(report({ confidence: { type: 'text', value: 'low' } }))).toBe(false);
    expect(validate(report({ confidence: { type: 'text', name: 'Confidence' } }))).toBe(false);
    expect(validate(report({ confidence: { type: 'label', name: 'Confidence', value: 'low' } }))).toBe(false);
    expect(validate(report({ confidence: 'low' }))).toBe(false);
  });
});
