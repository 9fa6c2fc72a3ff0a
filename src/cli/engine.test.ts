import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlmServer } from '../../test/fakes/llm-server.ts';
import { elseIfChain } from '../engine/pathological.fixtures.ts';
import { registerEngineCommands } from './engine.ts';

const VULNERABLE = `pragma solidity ^0.4.24;
contract Kill { function kill() public { selfdestruct(msg.sender); } }
`;

describe('vigil engine scan', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'vigil-cli-'));
    await writeFile(path.join(dir, 'Kill.sol'), VULNERABLE);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[]): Promise<{ stdout: string; stderr: string }> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const program = new Command().exitOverride();
    registerEngineCommands(program, { stdout, stderr });
    await program.parseAsync(['node', 'vigil', 'engine', 'scan', ...args]);
    return { stdout: out, stderr: err };
  }

  it('runs the same from the bundled engine command as through tsx, usage errors included', async () => {
    const vigil = path.join(import.meta.dirname, '../../bin/vigil.js');
    const exec = promisify(execFile);
    const scan = async (env: Record<string, string>): Promise<unknown> => {
      const out = path.join(dir, `report-${Object.keys(env).length}.json`);
      await exec(process.execPath, [vigil, 'engine', 'scan', dir, '--format', 'sast', '--output', out], {
        env: { ...process.env, ...env },
      });
      const report = JSON.parse(await readFile(out, 'utf8')) as {
        vulnerabilities: Array<{ location: unknown; name: string; severity: string; identifiers: unknown }>;
      };
      await rm(out);
      return report.vulnerabilities.map((v) => [v.location, v.name, v.severity, v.identifiers]);
    };
    const bundled = await scan({});
    expect(bundled).toEqual(await scan({ VIGIL_NO_BUNDLE: '1' }));
    expect(JSON.stringify(bundled)).toContain('sol.access.unprotected-selfdestruct');
    const bad = await exec(process.execPath, [vigil, 'engine', 'scan', dir, '--type', 'x']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('--type') });
  }, 60_000);

  it('prints a SAST report to stdout, with a UUID per finding and no progress when stderr is not a TTY', async () => {
    const { stdout, stderr } = await run([dir, '--type', 'lite', '--format', 'sast']);
    const report = JSON.parse(stdout) as {
      scan: { type: string };
      vulnerabilities: Array<{ id: string; identifiers: Array<{ value: string }> }>;
    };
    expect(report.scan.type).toBe('sast');
    const sd = report.vulnerabilities.find(
      (v) => v.identifiers[0]!.value === 'sol.access.unprotected-selfdestruct',
    )!;
    expect(sd.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(stderr).toBe('');
  });

  it('writes SARIF to a file', async () => {
    const out = path.join(dir, 'report.sarif');
    await run([dir, '--format', 'sarif', '--output', out]);
    const sarif = JSON.parse(await readFile(out, 'utf8')) as {
      version: string;
      runs: Array<{ results: unknown[] }>;
    };
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0]!.results.length).toBeGreaterThan(0);
  });

  it('prints a table by default', async () => {
    const { stdout } = await run([dir]);
    expect(stdout).toMatch(/^SEVERITY\s+LOCATION\s+RULE\s+TITLE/);
    expect(stdout).toMatch(/High\s+Kill\.sol:2\s+sol\.access\.unprotected-selfdestruct/);
    expect(stdout).toMatch(/finding\(s\)/);
  });

  it('names the files over the analysis budget in the table footer and the SARIF notifications', async () => {
    const slow = await mkdtemp(path.join(tmpdir(), 'vigil-cli-budget-'));
    try {
      // Hundreds of milliseconds of analysis: over a budget of a microsecond on any machine.
      await writeFile(path.join(slow, 'Crowdsale.sol'), elseIfChain(20, 80));
      await writeFile(path.join(slow, 'Kill.sol'), VULNERABLE);
      const { stdout } = await run([slow, '--file-budget', '0.000001']);
      expect(stdout).toMatch(
        /^warning: Crowdsale\.sol: analysis exceeded its budget of 0\.000001 s; only the cheap passes/m,
      );
      // Kill.sol is small: whether it outlasts a microsecond depends on the machine. The footer
      // names the files in the report's order.
      expect(stdout).toMatch(
        /over the analysis budget, cheap passes only: Crowdsale\.sol(, Kill\.sol)?\n[^\n]*finding\(s\)/,
      );
      // The cheap passes still report the file's lite findings.
      expect(stdout).toMatch(/Crowdsale\.sol:1\s+sol\.pragma\.outdated/);
      const sarif = JSON.parse(
        (await run([slow, '--file-budget', '0.000001', '--format', 'sarif'])).stdout,
      ) as {
        runs: Array<{
          invocations: Array<{ toolExecutionNotifications: Array<{ message: { text: string } }> }>;
        }>;
      };
      const texts = sarif.runs[0]!.invocations[0]!.toolExecutionNotifications.map((n) => n.message.text);
      expect(texts.some((t) => t.startsWith('Crowdsale.sol: analysis exceeded its budget'))).toBe(true);
      // Without the option (default 2 s), the file is analysed in full.
      expect((await run([slow])).stdout).not.toMatch(/analysis budget/);
      await expect(run([slow, '--file-budget', 'soon'])).rejects.toThrow(/seconds/);
    } finally {
      await rm(slow, { recursive: true, force: true });
    }
  });

  it("writes the SAST report of an audit with the LLM review: the rule findings and the model's", async () => {
    const llm = await startFakeLlmServer({ apiKey: 'sk-test' });
    llm.fallback = () => ({
      kind: 'content',
      content:
        '{"findings":[{"title":"Anyone destroys the contract","severity":"high","category":"access_control","startLine":2,"endLine":2,"description":"kill has no owner check.","remediation":"Check the owner.","confidence":"high"}]}',
    });
    try {
      const out = path.join(dir, 'audit.json');
      await run([
        dir,
        '--type',
        'audit',
        '--format',
        'sast',
        '--output',
        out,
        '--llm-base-url',
        llm.baseUrl,
        '--llm-model',
        'reviewer-1',
        '--llm-api-key',
        'sk-test',
      ]);
      const report = JSON.parse(await readFile(out, 'utf8')) as {
        vulnerabilities: Array<{ id: string; identifiers: Array<{ value: string }> }>;
        scan: { messages: Array<{ value: string }> };
      };
      const rules = report.vulnerabilities.map((v) => v.identifiers[0]!.value);
      expect(rules).toContain('sol.access.unprotected-selfdestruct');
      expect(rules.filter((r) => r.startsWith('llm.review.'))).toEqual(['llm.review.access_control']);
      expect(new Set(report.vulnerabilities.map((v) => v.id)).size).toBe(report.vulnerabilities.length);
      expect(report.scan.messages.map((m) => m.value).join('\n')).toMatch(/LLM review \(reviewer-1\)/);
      expect(llm.requests.length).toBeGreaterThan(0);
    } finally {
      await llm.close();
    }
  });

  it('rejects an unknown scan type', async () => {
    await expect(run([dir, '--type', 'deep'])).rejects.toThrow();
  });
});

describe('vigil engine rules', () => {
  it('keeps docs/engine-rules.md in step with the rule metadata', async () => {
    const { renderRuleCatalogue } = await import('../engine/rules-doc.ts');
    const doc = await readFile(path.join(import.meta.dirname, '../../docs/engine-rules.md'), 'utf8');
    expect(doc).toBe(renderRuleCatalogue());
  });
});
